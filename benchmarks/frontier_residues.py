"""Intermediate merge residues (issue 28, item 3; LiteToken, arXiv 2602.04706), measured by
`tokreg audit --residues` on held-out text. A residue: a token BPE's merge loop forms at least
MIN_SEEN times on the text but emits in fewer than BELOW of those times (F1 / (F1 + F2) <
BELOW). The target: residues reduced at least 5x with tokens per byte within 1% of plain BPE.

English (the last 20% of the lines of kjv.txt and dr.en.txt held out, the first 80% to train,
3.4 MB), at two sizes: tokreg's byte-level BPE; PickyBPE (Chizhov et al., arXiv 2409.04599;
`--algo picky`) with the paper's IoS thresholds; PickyBPE's residue rule (`--residue-below R
--residue-cost K`: LiteToken's ratio judged during training, Scaffold-BPE's budget) at several
(R, K), IoS off or at tau 0.7; each BPE version without the residues measured on its training text (`tokreg
drop-residues`); the imported cl100k_base and o200k_base. Then 32k on a larger corpus (the first
12 MB of kernel.txt of ../shared/tools/big-corpus.sh, TOKREG_BENCH_KERNEL; 80/20 by lines) when
it is there. Each row against plain BPE of the size asked and against plain BPE of the same
actual vocabulary size (a run can stop short: the 3.4 MB English runs out of pairs before 32k;
a residue-free version has fewer tokens), the training CPU time of the process (counting
included) and the time of the measure (one traced encode, two threads).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import tokreg
from benchmarks.common import DATA, held_out_split, need_data, table, text_lines
from tokreg.evaluation.residues import BELOW, MIN_SEEN

SIZES = (8000, 32000)
#: PickyBPE's IoS thresholds: the authors' default 0.9 and a lower one of the paper's range.
TAUS = (0.9, 0.7)
#: The residue rule's (tau, R, K), tau 2 turning IoS off: K = 1 keeps compression level; the
#: larger K, the more leave; with tau 0.7 PickyBPE's removals go with it.
RULES = ((2.0, 0.1, 1.0), (2.0, 0.1, 3.0), (0.7, 0.1, 4.0), (2.0, 0.3, 5.0), (2.0, 0.1, 1e9))
KERNEL = Path(os.environ.get("TOKREG_BENCH_KERNEL", "/work/bigcorp/kernel.txt"))
KERNEL_BYTES = 12_000_000


def _rule(tau: float, below: float, cost: float) -> str:
    with_ios = f"tau {tau}, " if tau <= 1 else ""
    return with_ios + f"R {below}, " + ("every candidate" if cost >= 1e9 else f"K {cost:g}")


def _section(
    title: str, slug: str, folder: str, train: str, held: list[str], sizes: tuple[int, ...], taus: tuple[float, ...]
) -> None:
    held_path = os.path.join(folder, f"{slug}.held.txt")
    with open(held_path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(held) + "\n")
    held_lines = [x + "\n" for x in held]
    nbytes = sum(len(x.encode()) for x in held_lines)
    reg = tokreg.Registry(os.path.join(folder, f"{slug}.db"))
    refs: list[tuple[str, str, float, int]] = []  # label, ref, train CPU s, size of plain BPE to compare with

    def timed(f: Any) -> tuple[Any, float]:
        t = time.process_time()
        out = f()
        return out, time.process_time() - t

    for size in sizes:
        v, s = timed(lambda: reg.train(f"bpe{size}", [train], tokreg.BpeOptions(vocab_size=size)))
        refs.append((f"tokreg byte-level BPE {size:,}", v.ref, s, size))
        for tau in taus:
            opts = tokreg.PickyOptions(vocab_size=size, threshold=tau)
            v, s = timed(lambda: reg.train(f"picky{size}-{tau}", [train], opts))
            refs.append((f"PickyBPE {size:,}, tau {tau}", v.ref, s, size))
        for tau, below, cost in RULES:
            opts = tokreg.PickyOptions(vocab_size=size, threshold=tau, residue_below=below, residue_cost=cost)
            v, s = timed(lambda: reg.train(f"rule{size}-{tau}-{below}-{min(cost, 1e6):.0f}", [train], opts))
            refs.append((f"residue rule {size:,}, {_rule(tau, below, cost)}", v.ref, s, size))
        v, s = timed(lambda: reg.drop_residues(f"bpe{size}", f"bpe{size}-nr", train))
        refs.append((f"BPE {size:,} without its training-text residues", v.ref, s, size))
    if slug == "en":
        for name in ("cl100k_base", "o200k_base"):
            path = DATA / f"{name}.tiktoken"
            if path.exists():
                reg.import_tiktoken(name, path, preset=name)
                refs.append((f"{name} (imported)", name, 0.0, 0))
    rows: list[list[Any]] = []
    measured: dict[str, tuple[int, float]] = {}  # ref -> (residues, tokens per byte)

    def measure(ref: str) -> tuple[Any, float, float]:
        t = time.perf_counter()
        r = reg.residues(ref, held_path)
        measure_s = time.perf_counter() - t
        tok = reg.load(ref)
        per_byte = sum(map(len, tok.encode_ordinary_batch(held_lines))) / nbytes
        measured[ref.partition("@")[0]] = (len(r.residues), per_byte)
        return r, per_byte, measure_s

    def same_size(n: int) -> tuple[int, float]:
        """Plain BPE with the same vocabulary size (trained when not yet there)."""
        ref = f"bpe{n}"
        if ref not in measured:
            reg.train(ref, [train], tokreg.BpeOptions(vocab_size=n))
            measure(ref)
        return measured[ref]

    def versus(other: Optional[tuple[int, float]], residues: int, per_byte: float) -> str:
        if other is None:
            return ""
        return f"{other[0] / max(residues, 1):.1f}x, {100 * (per_byte / other[1] - 1):+.2f}%"

    for label, ref, train_s, size in refs:
        r, per_byte, measure_s = measure(ref)
        asked = measured.get(f"bpe{size}") if ref.partition("@")[0] != f"bpe{size}" else None
        equal = same_size(r.vocab_size) if size and asked else None
        rows.append(
            [
                label,
                f"{r.vocab_size:,}",
                f"{len(r.residues):,}",
                f"{100 * len(r.residues) / r.vocab_size:.2f}%",
                f"{per_byte:.4f}",
                versus(asked, len(r.residues), per_byte),
                versus(equal, len(r.residues), per_byte),
                f"{train_s:.1f}" if train_s else "",
                f"{measure_s:.2f}",
            ]
        )
    table(
        f"{title}: residues (F1/(F1+F2) < {BELOW}, formed >= {MIN_SEEN} times) on {nbytes / 1e6:.1f} MB held out",
        [
            "vocabulary",
            "tokens",
            "residues",
            "of vocab",
            "tokens/byte",
            "vs BPE asked: fewer residues, tokens/byte",
            "vs BPE of equal size",
            "train CPU s",
            "measure s",
        ],
        rows,
    )


def run() -> None:
    need_data()
    with tempfile.TemporaryDirectory() as folder:
        train, held = held_out_split([text_lines(DATA / "kjv.txt"), text_lines(DATA / "dr.en.txt")], folder, "en")
        _section("English", "en", folder, train, held, SIZES, TAUS)
        if not KERNEL.exists():
            print(f"\nresidues at 32k on a larger corpus: {KERNEL} not found (../shared/tools/big-corpus.sh); skipped")
            return
        with open(KERNEL, "rb") as fh:
            text = fh.read(KERNEL_BYTES).decode("utf-8", errors="ignore")
        train, held = held_out_split([text.splitlines()], folder, "kernel")
        _section(f"kernel.txt, first {KERNEL_BYTES / 1e6:.0f} MB", "kernel", folder, train, held, (32000,), (0.9,))
