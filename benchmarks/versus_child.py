"""One side of the peer benchmark in its own process (see `versus.py`):
`python -m benchmarks.versus_child single|batch VOCAB` prints one JSON line of seconds: CPU
seconds for the single-thread measures, wall seconds for batches on 2 threads."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
import time
from array import array
from typing import Any, Callable

import xxhash

from benchmarks.peers import Contender, available
from benchmarks.texts import inputs, stream

REPEAT = int(os.environ.get("TOKREG_BENCH_REPEAT", "3"))
STREAM_BYTES = int(float(os.environ.get("TOKREG_BENCH_STREAM_MB", "100")) * 1e6)
BATCH_BYTES = min(24_000_000, STREAM_BYTES)
#: A contender slower than this on one measure is measured once there, not `REPEAT` times.
SLOW_S = 20.0


def note(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def digest(ids: list[int]) -> int:
    return xxhash.xxh3_64_intdigest(array("I", ids).tobytes())


def fresh_str(s: str) -> str:
    """An equal str with no cached UTF-8 form: every contender pays for that conversion."""
    return s.encode().decode()


def cpu() -> float:
    """The process's CPU time. Single-thread measures use it, not the wall clock: on a machine
    shared with other jobs (load 6-10 on 2 cores when these tables were made) a call is
    descheduled for whole time slices, which multiplies a 2 ms call's wall time by 10 or more
    at random; CPU time counts only the time the contender ran (all its threads, so a peer that
    runs threads of its own is not flattered)."""
    return time.process_time()


def _libc() -> Any:
    try:
        libc = ctypes.CDLL(None)
        libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        return libc
    except (OSError, AttributeError):
        return None


LIBC = _libc()
#: A block larger than any small-block bin, of a size no freed block is likely to have exactly.
SETTLE_BYTES = (1 << 20) + 4016


def settle() -> None:
    """Make the process ready for a timed call: collect Python's garbage, and let glibc's
    allocator finish filing the blocks freed so far.

    glibc defers the work of a free: freed blocks wait in an unsorted list (and the fast bins)
    until a later large allocation sorts them into bins, at most 10,000 per allocation. Each
    contender's encoder of the previous turn is freed just before the next contender is timed
    (HF tokenizers' alone is hundreds of thousands of blocks), so without this the first large
    allocations of whichever contender comes next paid for it: perf showed 79-95% of tokreg's
    cold calls on the 40 KB texts and the 1 MB runs inside `_int_malloc`, always after HF
    tokenizers in the rotation. Allocating and freeing a large block until the list is empty
    bills that work to no contender."""
    gc.collect()
    if LIBC is not None:
        for _ in range(200):
            LIBC.free(LIBC.malloc(SETTLE_BYTES))


def timed(f: Callable[[], Any]) -> float:
    settle()
    t = cpu()
    f()
    return cpu() - t


def guarded(f: Callable[[], Any]) -> tuple[Any, str | None]:
    """(f(), None), or (None, the name of what it raised): a peer's own failure, e.g. a Rust
    panic, which Python raises as a BaseException."""
    try:
        return f(), None
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        return None, type(e).__name__


def single(vocab: str, cs: list[Contender]) -> dict[str, Any]:
    """Cold and warm on each input. The ids of the first cold call of each contender are compared
    with tiktoken's (after timing it); one that differs is reported and not timed again."""
    ref = next(c for c in cs if c.name == "tiktoken")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, text in inputs().items():
        n = len(text.encode())
        want = ref.encode(ref.fresh(vocab), text)
        row: dict[str, dict[str, Any]] = {c.name: {"bytes": n, "cold": float("inf"), "warm": float("inf")} for c in cs}
        for rep in range(REPEAT):
            order = cs[rep % len(cs) :] + cs[: rep % len(cs)]
            for c in order:
                r = row[c.name]
                if "error" in r or (rep > 0 and r["cold"] > SLOW_S):
                    continue
                enc, s = c.fresh(vocab), fresh_str(text)
                settle()
                t = cpu()
                ids, err = guarded(lambda: c.encode(enc, s))
                cold = cpu() - t
                if err or (rep == 0 and ids != want):
                    row[c.name] = {"error": err or "ids differ"}
                    continue
                del ids
                r["cold"] = min(r["cold"], cold)
                r["warm"] = min(r["warm"], timed(lambda: c.encode(enc, s)))
        done = {k: v for k, v in row.items() if "cold" in v}
        note(f"{label}: " + ", ".join(f"{k} {n / v['cold'] / 1e6:.1f}" for k, v in done.items()))
        out[label] = row
    return {"single": out}


def documents(vocab: str, cs: list[Contender], docs: list[str], batch: bool) -> dict[str, dict[str, Any]]:
    """Seconds for all of `docs`, one encoder per pass: one call per document (stream) or one
    batch call. The first pass of each contender is compared with tiktoken, document by
    document, after timing."""
    n = sum(len(d.encode()) for d in docs)
    ref = next(c for c in cs if c.name == "tiktoken")
    want = [digest(ref.encode(ref.fresh(vocab), d)) for d in docs]
    row: dict[str, dict[str, Any]] = {c.name: {"bytes": n, "seconds": float("inf")} for c in cs}
    for rep in range(max(1, REPEAT - 1)):
        order = cs[rep % len(cs) :] + cs[: rep % len(cs)]
        for c in order:
            r = row[c.name]
            if "error" in r or (rep > 0 and r["seconds"] > SLOW_S):
                continue
            enc, fresh = c.fresh(vocab), [fresh_str(d) for d in docs]
            settle()
            if batch:
                t = time.perf_counter()
                got, err = guarded(lambda: c.batch(enc, fresh))
                seconds = time.perf_counter() - t
                bad = err or (rep == 0 and [digest(x) for x in got] != want and "ids differ")
            else:
                seconds, bad = 0.0, None
                for k, d in enumerate(fresh):
                    t = cpu()
                    ids, err = guarded(lambda: c.encode(enc, d))
                    seconds += cpu() - t
                    if err or (rep == 0 and digest(ids) != want[k]):
                        bad = err or "ids differ"
                        break
            if bad:
                row[c.name] = {"error": bad}
                continue
            r["seconds"] = min(r["seconds"], seconds)
        what = "batch" if batch else "stream"
        note(
            f"{what} rep {rep}: "
            + ", ".join(f"{k} {n / v['seconds'] / 1e6:.1f}" for k, v in row.items() if "seconds" in v)
        )
    return row


def main() -> None:
    mode, vocab = sys.argv[1:3]
    cs = available()
    docs = stream(STREAM_BYTES)
    result: dict[str, Any] = {
        "versions": {c.name: c.version for c in cs},
        "sources": {c.name: c.source for c in cs},
    }
    if mode == "single":
        result.update(single(vocab, cs))
        total = sum(len(d.encode()) for d in docs)
        result["stream_label"] = f"stream: one encoder, {len(docs):,} documents, {total / 1e6:.0f} MB, 1 thread"
        result["stream"] = documents(vocab, cs, docs, batch=False)
    else:
        part, size = [], 0
        for d in docs:
            if size >= BATCH_BYTES:
                break
            part.append(d)
            size += len(d.encode())
        result["batch_label"] = f"batch: one call, {len(part):,} documents, {size / 1e6:.0f} MB, 2 threads"
        result["batch"] = documents(vocab, cs, part, batch=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
