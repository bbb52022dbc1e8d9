"""Encoding speed, single thread, MB/s: tokreg beside tiktoken and HF tokenizers loaded with the
same vocabulary, on English, Chinese and code; then encode_batch with 1 vs 2 threads."""

from __future__ import annotations

import os

from benchmarks.common import best_of, inputs, mbps, table
from benchmarks.vocabs import VOCABS, hf_tok, tiktoken_enc, tokreg_tok


def run() -> None:
    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # HF: one thread, like the others
    texts = inputs()
    for name in VOCABS:
        tok, tik, hf = tokreg_tok(name), tiktoken_enc(name), hf_tok(name)
        rows = []
        for label, text in texts.items():
            n = len(text.encode("utf-8"))
            ours = tok.encode_ordinary(text)
            if ours != tik.encode_ordinary(text):
                raise SystemExit(f"{name}: tokreg and tiktoken disagree on {label}; not benchmarking")
            t_ours = best_of(lambda: tok.encode_ordinary(text))
            t_tik = best_of(lambda: tik.encode_ordinary(text))
            row = [label, mbps(n, t_ours), mbps(n, t_tik), f"{t_tik / t_ours:.2f}x"]
            if hf is not None:
                t_hf = best_of(lambda: hf.encode(text, add_special_tokens=False), repeat=1)
                row += [mbps(n, t_hf), f"{t_hf / t_ours:.2f}x"]
            rows.append(row)
        headers = ["input", "tokreg MB/s", "tiktoken MB/s", "vs tiktoken"]
        if hf is not None:
            headers += ["HF tokenizers MB/s", "vs HF"]
        table(f"Encode, {name}, one thread, whole file per call", headers, rows)

    lines = [x for t in texts.values() for x in t.splitlines(keepends=True)]
    # The same text as documents of 200 lines: per-text costs (Python strings in, lists out,
    # under the GIL) weigh less, so the parallel encoding shows.
    docs = ["".join(lines[i : i + 200]) for i in range(0, len(lines), 200)]
    total = sum(len(x.encode()) for x in lines)
    rows = []
    for name in VOCABS:
        tok, tik = tokreg_tok(name), tiktoken_enc(name)
        for label, batch in ((f"{len(lines):,} lines", lines), (f"{len(docs):,} documents", docs)):
            r = [name, label]
            for threads in (1, 2):
                r.append(mbps(total, best_of(lambda: tok.encode_batch(batch, threads=threads))))
            for threads in (1, 2):
                r.append(mbps(total, best_of(lambda: tik.encode_ordinary_batch(batch, num_threads=threads))))
            rows.append(r)
    table(
        f"encode_batch MB/s over the four inputs ({total / 1e6:.1f} MB), as lines and as 200-line documents",
        ["vocab", "texts", "tokreg 1 thread", "tokreg 2 threads", "tiktoken 1 thread", "tiktoken 2 threads"],
        rows,
    )
