"""Unigram quality beside SentencePiece, in five settings and two sizes: both trainers get the
same training text and matched options (identity normalization, whitespace kept, every
character covered; benchmarks/unigram_quality_child.py), and each is measured in tokens on the
held-out text (fewer is better), with its training time and peak memory from a fresh process.

The texts (train on the first 80% of the lines, measure on the other 20%):

- English: kjv.txt + dr.en.txt (../shared/data) + the first 4 MB of the kernel documentation
  (/work/corpus/kernel-docs/en.txt)
- Italian: the kernel documentation's Italian translation (/work/corpus/kernel-docs/it_IT.txt)
- Chinese: dr.zh-cn.txt + the kernel documentation's Simplified Chinese (zh_CN.txt)
- Japanese: the kernel documentation's Japanese (ja_JP.txt)
- code: the first 8 MB of Linux kernel source (/work/corpus/kernel.txt)

A setting whose text cannot fill a size (too few distinct pieces) says so instead of a row.
Set TOKREG_CORPUS to another folder holding kernel.txt and kernel-docs/.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, child, held_out_split, need_data, table, text_lines

CORPUS = Path(os.environ.get("TOKREG_CORPUS", "/work/corpus"))
VOCABS = (8000, 32000)


def _settings() -> dict[str, list[list[str]]]:
    """setting -> its texts, each split 80/20 on its own."""
    docs = CORPUS / "kernel-docs"
    return {
        "English": [
            text_lines(DATA / "kjv.txt"),
            text_lines(DATA / "dr.en.txt"),
            text_lines(docs / "en.txt", 4_000_000),
        ],
        "Italian": [text_lines(docs / "it_IT.txt")],
        "Chinese": [text_lines(DATA / "dr.zh-cn.txt"), text_lines(docs / "zh_CN.txt")],
        "Japanese": [text_lines(docs / "ja_JP.txt")],
        "code": [text_lines(CORPUS / "kernel.txt", 8_000_000)],
    }


def run() -> None:
    need_data()
    import sentencepiece as spm

    import tokreg

    folder = tempfile.mkdtemp(prefix="tokreg-bench-ugq-")
    threads = str(os.cpu_count() or 1)
    rows: list[list[Any]] = []
    notes: list[str] = []
    for name, texts in _settings().items():
        if not any(texts):
            notes.append(f"{name}: its text is not on this machine")
            continue
        corpus, held = held_out_split(texts, folder, name)
        mb = os.path.getsize(corpus) / 1e6
        for vocab in VOCABS:
            out = f"{folder}/{name}-{vocab}"
            ours_run = child("benchmarks.unigram_quality_child", "tokreg", corpus, str(vocab), threads, out + ".db")
            sp_run = child("benchmarks.unigram_quality_child", "sp", corpus, str(vocab), threads, out)
            failed = [f"{who}: {r['error']}" for who, r in (("tokreg", ours_run), ("spm", sp_run)) if "error" in r]
            if failed:
                notes.append(f"{name} ({mb:.2f} MB) at vocab {vocab:,}: not trained; " + "; ".join(failed))
                continue
            ours = tokreg.Registry(out + ".db").load("q")
            sp = spm.SentencePieceProcessor(model_file=out + ".model")
            n_ours = sum(map(len, ours.encode_batch(held)))
            n_sp = sum(map(len, sp.encode(held)))
            rows.append(
                [
                    name,
                    f"{mb:.1f}",
                    f"{vocab:,}",
                    f"{n_ours:,}",
                    f"{n_sp:,}",
                    f"{100 * (n_ours / n_sp - 1):+.2f}%",
                    f"{ours_run['seconds']:.1f}",
                    f"{sp_run['seconds']:.1f}",
                    f"{ours_run['peak_rss_mb']:.0f}",
                    f"{sp_run['peak_rss_mb']:.0f}",
                ]
            )
    table(
        "Unigram beside SentencePiece, matched options: tokens on the held-out 20% (fewer is better)",
        [
            "text",
            "train MB",
            "vocab",
            "tokreg tokens",
            "spm tokens",
            "tokreg vs spm",
            "tokreg train s",
            "spm train s",
            "tokreg peak MB",
            "spm peak MB",
        ],
        rows,
    )
    for note in notes:
        print(f"\n{note}")
