"""Intermediate merge residues (issue 28, item 3; LiteToken, arXiv 2602.04706), measured by
`tokreg audit --residues` on held-out text. A residue: a token BPE's merge loop forms at least
MIN_SEEN times on the text but emits in fewer than BELOW of those times (F1 / (F1 + F2) <
BELOW). The target: residues reduced at least 5x with tokens per byte within 1% of plain BPE.

Three corpora, each split 80/20 by lines (per file; the held-out part is never trained on):
English (kjv.txt and dr.en.txt, 3.4 MB to train) at 8k and 32k; the first 12 MB of kernel.txt
(../shared/tools/big-corpus.sh, TOKREG_BENCH_KERNEL) at 8k and 32k; the kernel documentation in
six languages (kernel-docs/, at most 3 MB of each: en, it_IT, ja_JP, ko_KR, zh_CN, zh_TW;
TOKREG_BENCH_KERNEL_DOCS) at 8k and 32k. Rows: tokreg's byte-level BPE; PickyBPE (Chizhov et al.,
arXiv 2409.04599; `--algo picky`) with the paper's IoS thresholds (English); PickyBPE's residue
rule (`--residue-below R --residue-cost K`: LiteToken's ratio judged on the training words
during the run, Scaffold-BPE's budget) along its curve; each BPE version without the residues
measured on its training text (`tokreg drop-residues`; English); the imported cl100k_base and
o200k_base (English).

**The held-out bound** rows answer "what would removal after the last merge reach if it knew
the held-out text?": plain BPE with N + k merges, then its k held-out residues of fewest F1
(held-out F1, then id) removed after the last merge, so N tokens stay: a real PickyBPE version
(the encoder replays its removal events), measured like every other row. It reads the very text
it is measured on, so it is an upper bound for any rule that judges on other text, not a method.
Under each table: how many of plain BPE's held-out residues are residues of its training text
too (what a judge on the training text can see at all).

Each row against plain BPE of the size asked and against plain BPE of the same actual
vocabulary size (a run can stop short: the 3.4 MB English runs out of pairs before 32k; a
residue-free version has fewer tokens), the training CPU time of the process (counting
included) and the time of the measure (one traced encode, two threads). One residue-rule run
per table is trained again on 1 and on 2 threads: its content hash must not change.

`TOKREG_BENCH_RESIDUES=scale` (not in the default list: tens of minutes) runs
benchmarks/residues_scale.py: does the gap between the rules and the held-out bound close on
samples of 20-400 MB of the 1 GB kernel.txt?
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

import tokreg
from benchmarks import residues_scale
from benchmarks.common import DATA, held_out_split, need_data, table, text_lines
from tokreg.algorithms.bpe.picky_model import PickyConfig
from tokreg.algorithms.bpe.picky_training import picky_data
from tokreg.evaluation.residues import BELOW, MIN_SEEN

#: PickyBPE's IoS thresholds: the authors' default 0.9 and a lower one of the paper's range.
TAUS = (0.9, 0.7)
#: The residue rule's (tau, R, K), tau 2 turning IoS off: K = 1 keeps compression level; the
#: larger K, the more leave; with tau 0.7 PickyBPE's removals go with it.
RULES = ((2.0, 0.1, 1.0), (2.0, 0.1, 3.0), (0.7, 0.1, 4.0), (2.0, 0.3, 5.0), (2.0, 0.1, 1e9))
#: The curve on the larger corpora (fewer points: each 32k run there takes minutes on a busy machine).
CURVE = ((2.0, 0.1, 1.0), (2.0, 0.1, 3.0), (2.0, 0.1, 10.0), (2.0, 0.3, 5.0), (2.0, 0.1, 1e9))
#: The curve on the six languages, shorter: a run of CJK letters is one long word, and each rule
#: run there costs 4-5x plain BPE's CPU (16-21x before PickyBPE's loop moved only changed pairs).
DOCS_CURVE = ((2.0, 0.1, 1.0), (2.0, 0.1, 3.0), (2.0, 0.3, 5.0))
#: The held-out bound removes this share of plain BPE's held-out residue count (k = share x P).
BOUND = (0.8, 0.85, 0.9)
#: The run trained again on 1 and 2 threads (same content hash).
TWICE = (2.0, 0.1, 3.0)
KERNEL = Path(os.environ.get("TOKREG_BENCH_KERNEL", "/work/bigcorp/kernel.txt"))
KERNEL_BYTES = 12_000_000
KERNEL_DOCS = Path(os.environ.get("TOKREG_BENCH_KERNEL_DOCS", "/work/bigcorp/kernel-docs"))
LANGUAGES = ("en", "it_IT", "ja_JP", "ko_KR", "zh_CN", "zh_TW")
LANGUAGE_BYTES = 3_000_000


def _rule(tau: float, below: float, cost: float) -> str:
    with_ios = f"tau {tau}, " if tau <= 1 else ""
    return with_ios + f"R {below}, " + ("every candidate" if cost >= 1e9 else f"K {cost:g}")


def _timed(f: Callable[[], Any]) -> tuple[Any, float]:
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def _plain(reg: tokreg.Registry, train: str, size: int, made: set[int]) -> tuple[str, float]:
    """Plain BPE of `size` (trained once: `made` holds the sizes trained) and its training CPU
    seconds (0 when it was there already)."""
    if size in made:
        return f"bpe{size}@1", 0.0
    made.add(size)
    v, s = _timed(lambda: reg.train(f"bpe{size}", [train], tokreg.BpeOptions(vocab_size=size)))
    return v.ref, s


def _bound(
    reg: tokreg.Registry, name: str, train: str, held_path: str, size: int, k: int, made: set[int]
) -> tuple[str, float]:
    """The held-out bound: plain BPE with `size` + k tokens, then its k residues on `held_path`
    of fewest F1 there (then lowest id) removed after its last merge: `size` tokens stay."""
    big, s = _plain(reg, train, size + k, made)
    found = reg.residues(big, held_path).residues
    gone = sorted(found, key=lambda r: (r.final, r.id))[:k]
    st = reg.stored(big)
    counts = [t.count or 0 for t in st.tokens]
    left = {r.id: counts[r.id] for r in gone}  # training-text uses of each when it leaves
    parents = {m.result: (m.left, m.right) for m in st.merges}
    present = [True] * len(st.tokens)
    for x in sorted(left, reverse=True):  # a removed token's uses go to its parents (ids made later first)
        a, b = parents[x]
        counts[a] += counts[x]
        counts[b] += counts[x]
        counts[x] = 0
        present[x] = False
    merges = [(m.left, m.right, m.result, m.count or 0) for m in st.merges]
    last = len(merges) - 1
    data = picky_data(
        [t.bytes for t in st.tokens], present, counts, merges, [(last, r.id, None, left[r.id], 0.0) for r in gone], []
    )
    data.config = PickyConfig(st.info.config["pattern"], tuple((r.after, r.token_id) for r in data.removals)).to_json()
    v = reg.add(name, data, message=f"bpe{size + k} less its {k} cheapest residues on {held_path}")
    return v.ref, s


def _section(
    title: str,
    slug: str,
    folder: str,
    train: str,
    held: list[str],
    sizes: tuple[int, ...],
    *,
    taus: tuple[float, ...] = (),
    rules: tuple[tuple[float, float, float], ...] = CURVE,
    drop: bool = False,
    imports: bool = False,
) -> None:
    held_path = os.path.join(folder, f"{slug}.held.txt")
    with open(held_path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(held) + "\n")
    held_lines = [x + "\n" for x in held]
    nbytes = sum(len(x.encode()) for x in held_lines)
    reg = tokreg.Registry(os.path.join(folder, f"{slug}.db"))
    refs: list[tuple[str, str, float, int]] = []  # label, ref, train CPU s, size of plain BPE to compare with
    notes: list[str] = []
    made: set[int] = set()  # sizes of plain BPE trained

    for size in sizes:
        ref, s = _plain(reg, train, size, made)
        refs.append((f"tokreg byte-level BPE {size:,}", ref, s, size))
        for tau in taus:
            opts = tokreg.PickyOptions(vocab_size=size, threshold=tau)
            v, s = _timed(lambda: reg.train(f"picky{size}-{tau}", [train], opts))
            refs.append((f"PickyBPE {size:,}, tau {tau}", v.ref, s, size))
        for tau, below, cost in rules:
            opts = tokreg.PickyOptions(vocab_size=size, threshold=tau, residue_below=below, residue_cost=cost)
            v, s = _timed(lambda: reg.train(f"rule{size}-{tau}-{below}-{min(cost, 1e6):.0f}", [train], opts))
            refs.append((f"residue rule {size:,}, {_rule(tau, below, cost)}", v.ref, s, size))
            if (tau, below, cost) == TWICE:
                hashes = {v.content_hash}
                for threads in (1, 2):
                    again = tokreg.PickyOptions(
                        vocab_size=size, threshold=tau, residue_below=below, residue_cost=cost, threads=threads
                    )
                    hashes.add(reg.train(f"again{size}-{threads}", [train], again).content_hash)
                same = "the same content hash" if len(hashes) == 1 else f"DIFFERENT hashes {sorted(hashes)}"
                notes.append(f"residue rule {size:,}, {_rule(tau, below, cost)}, trained on 1 and 2 threads: {same}")
        if drop:
            v, s = _timed(lambda: reg.drop_residues(f"bpe{size}", f"bpe{size}-nr", train))
            refs.append((f"BPE {size:,} without its training-text residues", v.ref, s, size))
        plain = reg.residues(f"bpe{size}", held_path).residues
        on_train = {r.id for r in reg.residues(f"bpe{size}", train).residues}
        seen = sum(r.id in on_train for r in plain)
        notes.append(
            f"plain BPE {size:,}: {len(plain):,} held-out residues, {seen:,} of them residues of the training "
            f"text too ({len(on_train):,} there)"
        )
        for share in BOUND:
            k = round(share * len(plain))
            ref, _ = _bound(reg, f"bound{size}-{k}", train, held_path, size, k, made)  # not a method: no training time
            refs.append((f"held-out bound {size:,}: BPE {size + k:,} less {k:,}", ref, 0.0, size))
    if imports:
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
            measure(_plain(reg, train, n, made)[0])
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
    for line in notes:
        print(f"- {line}")
    for size in sizes:
        _halves(reg, train, held_lines, folder, slug, size, made)


def _halves(
    reg: tokreg.Registry, train: str, held_lines: list[str], folder: str, slug: str, size: int, made: set[int]
) -> None:
    """The held-out bound judged on every other held-out line and measured on the lines between:
    what removal after the last merge reaches when it knows a sample of the very text measured
    (the same books, interleaved), but not the lines it is measured on."""
    paths = []
    for half in (0, 1):
        paths.append(os.path.join(folder, f"{slug}.half{half}.txt"))
        with open(paths[-1], "w", encoding="utf-8") as fh:
            fh.write("".join(held_lines[half::2]))
    other = held_lines[1::2]
    nbytes = sum(len(x.encode()) for x in other)

    def per_byte(ref: str) -> float:
        return sum(map(len, reg.load(ref).encode_ordinary_batch(other))) / nbytes

    judged = len(reg.residues(f"bpe{size}", paths[0]).residues)
    base = len(reg.residues(f"bpe{size}", paths[1]).residues)
    base_per_byte = per_byte(f"bpe{size}")
    rows: list[list[Any]] = [
        [f"tokreg byte-level BPE {size:,}", f"{judged:,}", f"{base:,}", "", f"{base_per_byte:.4f}", ""]
    ]
    for share in (0.7, 0.8, 0.9, 1.0):
        k = round(share * judged)
        ref, _ = _bound(reg, f"half{size}-{k}", train, paths[0], size, k, made)
        on_judged = len(reg.residues(ref, paths[0]).residues)
        measured = len(reg.residues(ref, paths[1]).residues)
        pb = per_byte(ref)
        rows.append(
            [
                f"BPE {size + k:,} less its {k:,} cheapest residues of the judged lines",
                f"{on_judged:,} ({judged / max(on_judged, 1):.1f}x)",
                f"{measured:,}",
                f"{base / max(measured, 1):.1f}x",
                f"{pb:.4f}",
                f"{100 * (pb / base_per_byte - 1):+.2f}%",
            ]
        )
    table(
        f"Judged on every other held-out line, measured on the lines between ({nbytes / 1e6:.1f} MB), {size:,}",
        ["vocabulary", "residues on the judged lines", "residues measured", "fewer", "tokens/byte", "vs BPE"],
        rows,
    )


def _kernel_docs() -> list[list[str]]:
    out = []
    for lang in LANGUAGES:
        path = KERNEL_DOCS / f"{lang}.txt"
        if path.exists():
            with open(path, "rb") as fh:
                out.append(fh.read(LANGUAGE_BYTES).decode("utf-8", errors="ignore").splitlines())
    return out


def run() -> None:
    need_data()
    only = os.environ.get("TOKREG_BENCH_RESIDUES", "en,kernel,docs").split(",")
    with tempfile.TemporaryDirectory() as folder:
        if "en" in only:
            train, held = held_out_split([text_lines(DATA / "kjv.txt"), text_lines(DATA / "dr.en.txt")], folder, "en")
            _section(
                "English", "en", folder, train, held, (8000, 32000), taus=TAUS, rules=RULES, drop=True, imports=True
            )
        if "kernel" in only:
            if KERNEL.exists():
                with open(KERNEL, "rb") as fh:
                    text = fh.read(KERNEL_BYTES).decode("utf-8", errors="ignore")
                train, held = held_out_split([text.splitlines()], folder, "kernel")
                title = f"kernel.txt, first {KERNEL_BYTES / 1e6:.0f} MB"
                _section(title, "kernel", folder, train, held, (8000, 32000))
            else:
                print(f"\nresidues on kernel.txt: {KERNEL} not found (../shared/tools/big-corpus.sh); skipped")
        if "scale" in only:  # not by default: tens of minutes (benchmarks/residues_scale.py)
            residues_scale.run()
        if "docs" in only:
            texts = _kernel_docs()
            if texts:
                train, held = held_out_split(texts, folder, "docs")
                title = f"kernel documentation in {len(texts)} languages (at most {LANGUAGE_BYTES / 1e6:.0f} MB each)"
                _section(title, "docs", folder, train, held, (8000, 32000), rules=DOCS_CURVE)
            else:
                print(f"\nresidues on the kernel documentation: {KERNEL_DOCS} not found; skipped")
