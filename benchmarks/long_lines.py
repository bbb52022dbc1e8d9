"""Long single lines: every encoder on one line of 1, 10 and 100 MB (English prose with its
newlines turned into spaces, as a minified document or a log without line breaks would be),
each run in a fresh process for its time and peak memory. Time and memory must grow linearly
(ns/byte and MB per input MB flat); SentencePiece's own library runs beside tokreg's
SentencePiece-BPE (Llama-style: byte fallback, split digits, spaces kept) and Unigram
encoders on the same model, after checking at 1 MB that the ids are the same.

`python -m benchmarks long_lines` (or `just bench long_lines`); LONG_LINES_MB=1,10 for a
shorter run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import DATA, child, need_data, table

SIZES_MB = [int(x) for x in os.environ.get("LONG_LINES_MB", "1,10,100").split(",")]
VOCAB = 8000

#: encoder -> (registry ref, SentencePiece model to compare with, or None)
ENCODERS = {
    "byte-level BPE (cl100k)": ("cl100k", None),
    "character-level BPE": ("char", None),
    "WordPiece": ("wp", None),
    "Unigram": ("sp-unigram", "unigram"),
    "SentencePiece BPE": ("sp-bpe", "bpe"),
}


def prose_file(folder: Path) -> Path:
    """kjv.txt and dr.en.txt as one line."""
    p = folder / "prose.txt"
    text = " ".join((DATA / n).read_text(encoding="utf-8").replace("\n", " ") for n in ("kjv.txt", "dr.en.txt"))
    p.write_text(text, encoding="utf-8")
    return p


def build(folder: Path) -> Path:
    """The registry of the encoders measured, and the SentencePiece models."""
    import sentencepiece as spm

    import tokreg
    from tokreg import BpeOptions, WordPieceOptions

    lines = [x for n in ("kjv.txt", "dr.en.txt") for x in (DATA / n).read_text(encoding="utf-8").splitlines() if x]
    for kind in ("bpe", "unigram"):
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=str(folder / kind),
            model_type=kind,
            vocab_size=VOCAB,
            byte_fallback=True,
            split_digits=True,
            remove_extra_whitespaces=False,
            normalization_rule_name="identity",
            num_threads=os.cpu_count() or 1,
            minloglevel=2,
        )
    corpus = [DATA / "kjv.txt", DATA / "dr.en.txt"]
    db = folder / "long.db"
    with tokreg.Registry(db) as reg:
        reg.import_tiktoken("cl100k", DATA / "cl100k_base.tiktoken", pattern="cl100k")
        reg.train("char", corpus, BpeOptions(vocab_size=VOCAB, char_level=True, pattern="whitespace"))
        reg.train("wp", corpus, WordPieceOptions(vocab_size=VOCAB, lowercase=True))
        for kind in ("bpe", "unigram"):
            reg.import_sentencepiece(f"sp-{kind}", folder / f"{kind}.model")
    return db


def run() -> None:
    need_data()
    folder = Path(tempfile.mkdtemp(prefix="tokreg-bench-long-"))
    db = build(folder)
    prose = prose_file(folder)
    rows: list[list[Any]] = []
    for title, (ref, sp_kind) in ENCODERS.items():
        model = str(folder / f"{sp_kind}.model") if sp_kind else ""
        if model:
            same = child("benchmarks.long_child", "same", str(db), ref, model, str(prose), "1")
            assert same["same"], f"{title}: tokreg and SentencePiece give other ids on a 1 MB line"
        for mb in SIZES_MB:
            ours = child("benchmarks.long_child", "tokreg", str(db), ref, model, str(prose), str(mb))
            row = [title, f"{mb}", f"{ours['seconds']:.2f}", f"{ours['ns_per_byte']:.0f}", f"{ours['above_mb']:.0f}"]
            if model:
                sp = child("benchmarks.long_child", "sentencepiece", str(db), ref, model, str(prose), str(mb))
                row += [
                    f"{sp['seconds']:.2f}",
                    f"{sp['ns_per_byte']:.0f}",
                    f"{sp['above_mb']:.0f}",
                    f"{sp['seconds'] / ours['seconds']:.2f}x",
                ]
            else:
                row += ["", "", "", ""]
            rows.append(row)
    table(
        "One line of English prose of 1-100 MB, one thread, a fresh process per run",
        [
            "encoder",
            "MB",
            "tokreg s",
            "ns/byte",
            "peak MB above the text",
            "SentencePiece s",
            "ns/byte",
            "peak MB above the text",
            "tokreg vs SentencePiece",
        ],
        rows,
    )
    print(
        "\n'peak MB above the text' is the process's peak minus its peak once the line is in memory: the encoder's "
        "own memory plus the result (a Python list of ids, 8 bytes per id)."
    )
