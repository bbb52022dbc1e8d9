"""Worst case: one repeated character, and random bytes decoded with replacement, at 100 KB,
1 MB and 10 MB. tokreg's time must grow linearly; tiktoken's merge loop is quadratic in the
length of a piece, so it is run only while it stays under a time limit."""

from __future__ import annotations

import multiprocessing as mp
import random
import time

from benchmarks.common import table
from benchmarks.vocabs import tiktoken_enc, tokreg_tok

SIZES = [100_000, 1_000_000, 10_000_000]
TIKTOKEN_LIMIT_S = 60.0


def _inputs(size: int) -> dict[str, str]:
    rng = random.Random(size)
    return {
        "'a' repeated": "a" * size,
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
            t = time.perf_counter()
            tok.encode_ordinary(text)
            ours = time.perf_counter() - t
            if label in skip_tiktoken:
                theirs = "not run (slower size already over the limit)"
            else:
                theirs = tiktoken_seconds(name, text)
                if theirs.startswith(">"):
                    skip_tiktoken.add(label)
            rows.append([label, f"{size / 1e6:g} MB", f"{ours:.3f}", f"{ours / size * 1e9:.1f}", theirs])
    table(
        f"Worst case, {name}: time grows with size (ns per byte should stay flat)",
        ["input", "size", "tokreg s", "tokreg ns/byte", "tiktoken s"],
        rows,
    )
