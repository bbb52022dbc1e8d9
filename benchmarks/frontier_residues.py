"""Intermediate merge residues (issue 28, item 3; LiteToken, arXiv 2602.04706), measured by
`tokreg audit --residues` on held-out English (the last 20% of the lines of kjv.txt and
dr.en.txt): tokreg's byte-level BPE trained on the first 80% at two sizes, and the imported
cl100k_base and o200k_base. A residue: a token BPE's merge loop forms at least MIN_SEEN times
on the text but emits in fewer than BELOW of those times (F1 / (F1 + F2) < BELOW). Also the
time of the measure (one traced encode of the text, two threads).
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import tokreg
from benchmarks.common import DATA, held_out_split, need_data, table, text_lines
from tokreg.evaluation.residues import BELOW, MIN_SEEN

SIZES = (8000, 32000)


def run() -> None:
    need_data()
    with tempfile.TemporaryDirectory() as folder:
        train, held = held_out_split([text_lines(DATA / "kjv.txt"), text_lines(DATA / "dr.en.txt")], folder, "en")
        held_path = os.path.join(folder, "held.txt")
        with open(held_path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(held) + "\n")
        reg = tokreg.Registry(os.path.join(folder, "r.db"))
        refs = []
        for size in SIZES:
            t = time.perf_counter()
            reg.train(f"bpe{size}", [train], tokreg.BpeOptions(vocab_size=size))
            refs.append((f"tokreg byte-level BPE {size:,}", f"bpe{size}", time.perf_counter() - t))
        for name in ("cl100k_base", "o200k_base"):
            path = DATA / f"{name}.tiktoken"
            if path.exists():
                reg.import_tiktoken(name, path, preset=name)
                refs.append((f"{name} (imported)", name, 0.0))
        rows: list[list[Any]] = []
        for label, ref, train_s in refs:
            t = time.perf_counter()
            r = reg.residues(ref, held_path)
            measure_s = time.perf_counter() - t
            rows.append(
                [
                    label,
                    f"{r.vocab_size:,}",
                    f"{r.measured:,}",
                    f"{len(r.residues):,}",
                    f"{100 * len(r.residues) / r.vocab_size:.2f}%",
                    f"{100 * len(r.residues) / max(r.measured, 1):.1f}%",
                    f"{train_s:.1f}" if train_s else "",
                    f"{measure_s:.2f}",
                ]
            )
        nbytes = sum(len(x.encode()) + 1 for x in held)
        table(
            f"Residues (F1/(F1+F2) < {BELOW}, formed >= {MIN_SEEN} times) on {nbytes / 1e6:.1f} MB of held-out English",
            ["vocabulary", "tokens", "measured", "residues", "of vocab", "of measured", "train s", "measure s"],
            rows,
        )
