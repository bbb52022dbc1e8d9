"""One side of the peer benchmark in its own process (see `versus.py`):
`python -m benchmarks.versus_child single|batch VOCAB` prints one JSON line of seconds."""

from __future__ import annotations

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


def timed(f: Callable[[], Any]) -> float:
    gc.collect()
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def check(c: Contender, vocab: str, run: Callable[[Any], list[int]], want: list[int]) -> str | None:
    """None if `c` gives `want` (with an encoder used for nothing else), else why not."""
    try:
        got = run(c.fresh(vocab))
    except (Exception, BaseException) as e:  # a peer's own error (a Rust panic is a BaseException)
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"{type(e).__name__}"
    return None if got == want else "ids differ"


def single(vocab: str, cs: list[Contender]) -> dict[str, Any]:
    ref = next(c for c in cs if c.name == "tiktoken")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, text in inputs().items():
        n = len(text.encode())
        want = ref.encode(ref.fresh(vocab), text)
        row: dict[str, dict[str, Any]] = {}
        for c in cs:
            bad = check(c, vocab, lambda e: c.encode(e, text), want)
            row[c.name] = {"error": bad} if bad else {"bytes": n, "cold": float("inf"), "warm": float("inf")}
        for rep in range(REPEAT):
            order = cs[rep % len(cs) :] + cs[: rep % len(cs)]
            for c in order:
                r = row[c.name]
                if "error" in r or (rep > 0 and r["cold"] > SLOW_S):
                    continue
                enc, s = c.fresh(vocab), fresh_str(text)
                r["cold"] = min(r["cold"], timed(lambda: c.encode(enc, s)))
                r["warm"] = min(r["warm"], timed(lambda: c.encode(enc, s)))
        note(
            f"{label}: "
            + ", ".join(f"{k} {v.get('cold', 0) and n / v['cold'] / 1e6:.1f}" for k, v in row.items() if "cold" in v)
        )
        out[label] = row
    return {"single": out}


def over_docs(
    c: Contender, vocab: str, docs: list[str], batch: bool
) -> tuple[Callable[[], Any], Callable[[], list[int]]]:
    """(run once and time it, run once and give every document's digest) with fresh encoders."""
    if batch:

        def go(enc: Any) -> list[list[int]]:
            return c.batch(enc, docs)

    else:

        def go(enc: Any) -> list[list[int]]:
            return [c.encode(enc, d) for d in docs]

    def digests() -> list[int]:
        return [digest(ids) for ids in go(c.fresh(vocab))]

    def once() -> Any:
        nonlocal docs
        enc, docs = c.fresh(vocab), [fresh_str(d) for d in docs]
        return timed(lambda: go(enc))

    return once, digests


def documents(vocab: str, cs: list[Contender], docs: list[str], batch: bool) -> dict[str, dict[str, Any]]:
    n = sum(len(d.encode()) for d in docs)
    ref = next(c for c in cs if c.name == "tiktoken")
    want = [digest(ref.encode(ref.fresh(vocab), d)) for d in docs]
    row: dict[str, dict[str, Any]] = {}
    runs = {}
    for c in cs:
        once, digests = over_docs(c, vocab, docs, batch)
        try:
            ok = digests() == want
        except (Exception, BaseException) as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            row[c.name] = {"error": f"{type(e).__name__}"}
            continue
        row[c.name] = {"bytes": n, "seconds": float("inf")} if ok else {"error": "ids differ"}
        runs[c.name] = once
    for rep in range(max(1, REPEAT - 1)):
        order = cs[rep % len(cs) :] + cs[: rep % len(cs)]
        for c in order:
            r = row[c.name]
            if "error" in r or (rep > 0 and r["seconds"] > SLOW_S):
                continue
            r["seconds"] = min(r["seconds"], runs[c.name]())
        note(
            ("batch" if batch else "stream")
            + f" rep {rep}: "
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
