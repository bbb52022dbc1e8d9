"""Training byte-level BPE at vocab 32k on kjv.txt: tokreg beside Hugging Face's BpeTrainer
with the same pattern (cl100k) and vocab size. Time and peak memory, each in its own process."""

from __future__ import annotations

import os
import tempfile

from benchmarks.common import DATA, child, need_data, table


def run(vocab: int = 32_000) -> None:
    need_data()
    corpus = str(DATA / "kjv.txt")
    rows = []
    cores = os.cpu_count() or 1
    out = tempfile.mkdtemp(prefix="tokreg-bench-")
    for threads in sorted({1, cores}):
        tk = child("benchmarks.train_child", "tokreg-bpe", corpus, str(vocab), str(threads), f"{out}/tk{threads}")
        hf = child("benchmarks.train_child", "hf-bpe", corpus, str(vocab), str(threads), f"{out}/hf{threads}")
        rows.append(
            [
                threads,
                f"{tk['train_only']:.2f}",
                f"{tk['seconds']:.2f}",
                f"{tk['peak_rss_mb']:.0f} ({tk['peak_rss_mb'] - tk['baseline_mb']:.0f})",
                f"{hf['seconds']:.2f}",
                f"{hf['peak_rss_mb']:.0f} ({hf['peak_rss_mb'] - hf['baseline_mb']:.0f})",
                f"{hf['seconds'] / tk['train_only']:.2f}x",
                f"{tk['vocab']:,} / {hf['vocab']:,}",
            ]
        )
    table(
        f"Training byte-level BPE, vocab {vocab:,}, kjv.txt (4.3 MB), pattern cl100k",
        [
            "threads",
            "tokreg train s",
            "tokreg incl. recording s",
            "tokreg peak MB (above import)",
            "HF BpeTrainer s",
            "HF peak MB (above import)",
            "speed-up",
            "vocab reached (tokreg / HF)",
        ],
        rows,
    )
    print("\nkjv.txt runs out of pairs before 32k tokens; both trainers stop there.")
