"""One contender's turn of the peer benchmark in a fresh process (see `versus.py`):
`python -m benchmarks.versus_child single|stream|batch VOCAB CONTENDER` prints one JSON line of
seconds: CPU seconds for the single-thread measures, wall and CPU seconds for a batch on 2
threads. A fresh process per turn, because a peer may keep a cache for the whole process
(fastokens does): a text it saw in an earlier turn would otherwise be encoded warm and called
cold. Within a turn each input is encoded cold once (then warm), and the stream is a turn of
its own."""

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

STREAM_BYTES = int(float(os.environ.get("TOKREG_BENCH_STREAM_MB", "100")) * 1e6)
#: The stream's composition (texts.MIXES), set by the parent for each stream turn.
MIX = os.environ.get("TOKREG_BENCH_STREAM_MIX", "mixed")
BATCH_BYTES = min(24_000_000, STREAM_BYTES)


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


def single(vocab: str, c: Contender, ref: Contender, head: dict[str, Any]) -> dict[str, Any]:
    """Cold, then warm, on each input once. The ids of the cold call are compared with
    tiktoken's after timing; one that differs is reported and not timed.

    Before each input, the results so far are printed as a line with the input's label under
    "at": a peer that kills the process on an input (a Rust abort or a stack overflow is not an
    exception Python can catch) leaves that line last, and the parent reports the input it died
    on and keeps the ones before it."""
    out: dict[str, dict[str, Any]] = {}
    for label, text in inputs().items():
        print(json.dumps({**head, "single": out, "at": label}), flush=True)
        n = len(text.encode())
        enc, s = c.fresh(vocab), fresh_str(text)
        settle()
        t = cpu()
        ids, err = guarded(lambda: c.encode(enc, s))
        cold = cpu() - t
        want, ref_err = guarded(lambda: ref.encode(ref.fresh(vocab), text))
        if ref_err:  # tiktoken's regex overflows its stack on some long runs: nothing to check against
            out[label] = {"error": f"unchecked (tiktoken: {ref_err})"}
            continue
        if err or ids != want:
            out[label] = {"error": err or "ids differ"}
            continue
        del ids
        out[label] = {"bytes": n, "cold": cold, "warm": timed(lambda: c.encode(enc, s))}
    return out


def documents(vocab: str, c: Contender, ref: Contender, docs: list[str], batch: bool) -> dict[str, Any]:
    """Seconds for all of `docs` with one fresh encoder: one call per document (stream: CPU
    seconds) or one batch call (wall and CPU seconds). The ids are compared with tiktoken's,
    document by document, after timing."""
    n = sum(len(d.encode()) for d in docs)
    enc, fresh = c.fresh(vocab), [fresh_str(d) for d in docs]
    settle()
    if batch:
        t, t_cpu = time.perf_counter(), cpu()
        got, err = guarded(lambda: c.batch(enc, fresh))
        seconds, cpu_seconds = time.perf_counter() - t, cpu() - t_cpu
        digests = [digest(x) for x in got] if not err else []
    else:
        seconds, err, digests = 0.0, None, []
        for d in fresh:
            t = cpu()
            ids, err = guarded(lambda: c.encode(enc, d))
            seconds += cpu() - t
            if err:
                break
            digests.append(digest(ids))
        cpu_seconds = seconds
    if err:
        return {"error": err}
    ref_enc = ref.fresh(vocab)
    if digests != [digest(ref.encode(ref_enc, d)) for d in docs]:
        return {"error": "ids differ"}
    return {"bytes": n, "seconds": seconds, "cpu": cpu_seconds}


def batch_part(docs: list[str]) -> list[str]:
    part, size = [], 0
    for d in docs:
        if size >= BATCH_BYTES:
            break
        part.append(d)
        size += len(d.encode())
    return part


def main() -> None:
    mode, vocab, name = sys.argv[1:4]
    cs = available()
    c = next(x for x in cs if x.name == name)
    ref = next(x for x in cs if x.name == "tiktoken")
    result: dict[str, Any] = {"version": c.version, "source": c.source}
    if mode == "single":
        result["single"] = single(vocab, c, ref, result)
    else:
        docs = stream(STREAM_BYTES, MIX if mode == "stream" else "mixed")
        if mode == "batch":
            docs = batch_part(docs)
        total = sum(len(d.encode()) for d in docs)
        what = "batch: one call" if mode == "batch" else f"stream ({MIX}): one encoder"
        threads = 2 if mode == "batch" else 1
        result["label"] = f"{what}, {len(docs):,} documents, {total / 1e6:.0f} MB, {threads} thread(s)"
        result[mode] = documents(vocab, c, ref, docs, batch=mode == "batch")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
