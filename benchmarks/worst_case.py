"""Worst case: long runs of one character (a letter, a space, a digit, a CJK character) and
random bytes decoded with replacement, at 100 KB, 1 MB and 10 MB. tokreg must stay linear (flat
ns per byte) and above 100 MB/s on the runs; tiktoken's merge loop is quadratic in the length
of a piece, so it is run only while it stays under a time limit. Best of 3 for tokreg, in CPU time (on a
shared machine wall time mostly measures the other jobs); tiktoken's one run is wall time."""

from __future__ import annotations

import multiprocessing as mp
import random
import time

from benchmarks.common import best_of, table
from benchmarks.vocabs import tiktoken_enc, tokreg_tok

SIZES = [100_000, 1_000_000, 10_000_000]
TIKTOKEN_LIMIT_S = 60.0


def _inputs(size: int) -> dict[str, str]:
    rng = random.Random(size)
    return {
        "'a' repeated": "a" * size,
        "space repeated": " " * size,
        "'7' repeated": "7" * size,
        "'中' repeated": "中" * (size // 3),
        "random bytes (replace)": rng.randbytes(size).decode("utf-8", errors="replace"),
    }


def _tiktoken_time(name: str, text: str, q: mp.Queue[float]) -> None:
    enc = tiktoken_enc(name)
    t = time.perf_counter()
    enc.encode_ordinary(text)
    q.put(time.perf_counter() - t)


def tiktoken_seconds(name: str, text: str) -> str:
    q: mp.Queue[float] = mp.Queue()
    p = mp.Process(target=_tiktoken_time, args=(name, text, q))
    p.start()
    p.join(TIKTOKEN_LIMIT_S)
    if p.is_alive():
        p.kill()
        return f"> {TIKTOKEN_LIMIT_S:.0f} (stopped)"
    return f"{q.get():.3f}"


def run(name: str = "cl100k_base") -> None:
    tok = tokreg_tok(name)
    rows = []
    skip_tiktoken: set[str] = set()
    for size in SIZES:
        for label, text in _inputs(size).items():
            if tok.encode_ordinary(text[:200_000]) != tiktoken_enc(name).encode_ordinary(text[:200_000]):
                raise SystemExit(f"{name}: tokreg and tiktoken disagree on {label}; not benchmarking")
            ours = best_of(lambda: tok.encode_ordinary(text), clock=time.process_time)
            if label in skip_tiktoken:
                theirs = "not run (slower size already over the limit)"
            else:
                theirs = tiktoken_seconds(name, text)
                if theirs.startswith(">"):
                    skip_tiktoken.add(label)
            n = len(text.encode())
            rows.append(
                [label, f"{n / 1e6:g} MB", f"{ours:.4f}", f"{n / ours / 1e6:.0f}", f"{ours / n * 1e9:.2f}", theirs]
            )
    table(
        f"Worst case, {name}: time grows with size (ns per byte should stay flat)",
        ["input", "size", "tokreg s", "tokreg MB/s", "tokreg ns/byte", "tiktoken s"],
        rows,
    )
