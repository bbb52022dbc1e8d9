"""Does the residue target's gap close with more text? (issue 28, item 3; run by
`TOKREG_BENCH_RESIDUES=scale just bench frontier`, not by default: it takes tens of minutes.)

A residue, as in `frontier_residues.py`: F1/(F1+F2) < 0.1 among the tokens formed at least 10
times on the held-out text (LiteToken, arXiv 2602.04706). There, held-out samples of 1-3 MB
left which tokens sit just under or over that line to chance: two halves of the held-out text
agreed on about four residues in five, and no rule judged on other text reached 5x fewer
residues within 1% tokens per byte. Here the samples grow.

The text: 64 KiB blocks (cut at line ends) of the 1 GB kernel.txt (`big-corpus.sh 1000`,
TOKREG_BENCH_KERNEL_1G), shuffled with a fixed seed. The first fifth of the blocks is the
held-out pool, the rest the training pool; each size takes the first blocks of its pool, so the
samples are nested (the 5 MB held out is in the 12 MB one), spread over the whole tree (the
same distribution on both sides) and disjoint (held-out text is never trained on). A held-out
sample's halves A and B are its even and odd blocks: whole 64 KiB stretches of files, not
alternate lines (which share a file's identifiers, and so agree more).

Per training size T and held-out size H, at each vocabulary size N:

- **agreement**: plain BPE N's residues on A and on B, how many in both, and why A's others
  are not B's (formed fewer than 10 times there, or a ratio above the line);
- **held-out bound**: plain BPE N + k less its k held-out residues of fewest F1 (on all of H),
  removed after the last merge (a PickyBPE version the encoder replays), measured on H. It reads
  the text it is measured on: an upper bound, not a method;
- **judged on A, measured on B**: the same with A's residues, measured on B (a judge that has a
  sample of the very distribution measured, as large as B);
- **judged on the training text**: BPE N + k less k tokens chosen on T alone, fewest F1 on T
  first. `all T`: the residues of T (of N + k; F1/(F1+F2) < 0.1, formed >= 10 times there,
  which every token of these vocabularies is on T). `each of 4`: only those that no quarter of
  T (its blocks in turn, each about the size of H) contradicts, i.e. no quarter where the token
  is formed and emitted in 0.1 of those times or more: a stability-aware judge. `each of 4
  first, then all T`: the stable ones, then the others. k runs over a grid (shares of plain
  BPE's residue count on H: only the grid's numbers come from H); a judge with fewer
  candidates than k has no version of N tokens there and is skipped;
- **the residue rule** (`--algo picky --residue-below 0.1 --residue-cost K`), trained on T.

With TOKREG_BENCH_SCALE_ONLY=budget, only plain BPE N and `drop-residues --budget M` for each
margin M in TOKREG_BENCH_SCALE_BUDGETS (percent, default 0.8; versions/residue_budget.py: k is
chosen on T alone, the version then measured on H), with TOKREG_BENCH_SCALE_BUDGET_VERSION
("all", or "checked": the fit part's version); with TOKREG_BENCH_SCALE_FEWER=X (e.g. 5),
`--budget M --fewer X` (the folds rule) instead; TOKREG_BENCH_SCALE_FOLDS=unseen for unseen
folds, and TOKREG_BENCH_SCALE_REFILL=R for `--refill R` with them (TOKREG_BENCH_SCALE_REJUDGE=ROUNDS
for `--rejudge ROUNDS` with the refill).

BPE N and BPE N + N/4 are trained in one run; each N + k is the larger one cut (BPE's merges of
a smaller size are a prefix of a larger one's: checked on each run). The train CPU of plain BPE
is that run's. Versions go to a scratch registry; the removal versions carry no token counts
(0), which change no id.
"""

from __future__ import annotations

import os
import random
import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import tokreg
from benchmarks.common import table
from tokreg.algorithms.bpe.picky_model import PickyConfig
from tokreg.algorithms.bpe.picky_training import picky_data
from tokreg.evaluation.residues import BELOW, MIN_SEEN

KERNEL_1G = Path(os.environ.get("TOKREG_BENCH_KERNEL_1G", "/work/bigcorp1g/kernel.txt"))
BLOCK = 1 << 16
#: The shuffle's seed. 28 made every table in the README; another (TOKREG_BENCH_SCALE_SEED) is a
#: fresh draw of T and H from the same file, for a rule chosen after looking at seed 28's H.
SEED = int(os.environ.get("TOKREG_BENCH_SCALE_SEED", "28"))
#: (training MB, held-out MB) pairs, nested on both sides.
SIZES = tuple(
    tuple(int(x) for x in pair.split("/"))
    for pair in os.environ.get("TOKREG_BENCH_SCALE_SIZES", "20/5,50/12,100/25").split(",")
)
VOCABS = tuple(int(x) for x in os.environ.get("TOKREG_BENCH_SCALE_VOCABS", "8000,32000").split(","))
#: k as a share of plain BPE's residues on the judged text (bound, A judge) ...
SHARES = (0.8, 0.85, 0.9)
SHARES_A = (0.8, 1.0)  # k above A's count would remove them all again
#: ... and, for the training judges, a share of plain BPE's residues on all of H (only the
#: grid's numbers come from H: which tokens leave is chosen on T alone).
TRAIN_SHARES = (0.7, 0.8, 0.9, 1.0, 1.2)
PARTS = 4
#: BPE N + EXTRA N is trained in the same run as BPE N, to cut the N + k versions from.
EXTRA = 0.25
RULE_COSTS = tuple(float(x) for x in os.environ.get("TOKREG_BENCH_SCALE_RULES", "1,3,5,10").split(",") if x)
THREADS = int(os.environ.get("TOKREG_BENCH_SCALE_THREADS", "2"))
#: "budget": only plain BPE and `drop-residues --budget` (each margin in BUDGETS, percent).
ONLY = os.environ.get("TOKREG_BENCH_SCALE_ONLY", "")
#: which version --budget records: "all" (trained on all of T) or "checked" (the fit part's).
BUDGET_VERSION = os.environ.get("TOKREG_BENCH_SCALE_BUDGET_VERSION", "all")
BUDGETS = tuple(float(x) for x in os.environ.get("TOKREG_BENCH_SCALE_BUDGETS", "0.8").split(",") if x)
#: with a goal (times fewer residues, e.g. 5), `--budget M --fewer GOAL`: the folds rule.
FEWER = float(os.environ["TOKREG_BENCH_SCALE_FEWER"]) if os.environ.get("TOKREG_BENCH_SCALE_FEWER") else None
#: with FEWER, how the folds are measured: "trained" (res2's rule) or "unseen" (cross-fitted).
FOLDS = os.environ.get("TOKREG_BENCH_SCALE_FOLDS", "trained")
#: with FOLDS "unseen", `--refill R` (share of k learned again after the removals; 0: off).
REFILL = float(os.environ.get("TOKREG_BENCH_SCALE_REFILL", "0") or 0)
#: with REFILL, `--rejudge ROUNDS` (the refill's own residues judged again; 0: off).
REJUDGE = int(os.environ.get("TOKREG_BENCH_SCALE_REJUDGE", "0") or 0)


def blocks(path: Path) -> list[int]:
    """Block starts of `path`, shuffled (seed SEED)."""
    n = path.stat().st_size // BLOCK
    order = list(range(n))
    random.Random(SEED).shuffle(order)
    return order


def read_blocks(path: Path, which: Sequence[int]) -> list[bytes]:
    """Each block: from the first line start at or after i * BLOCK to the first line end at or
    after (i + 1) * BLOCK."""
    out = []
    with open(path, "rb") as fh:
        for i in which:
            fh.seek(max(i * BLOCK - 1, 0))
            raw = fh.read(BLOCK + (1 << 12))
            start = 0 if i == 0 else raw.index(b"\n") + 1
            end = raw.find(b"\n", BLOCK + (0 if i == 0 else 1) - 1)
            out.append(raw[start : end + 1 if end >= 0 else len(raw)])
    return out


def write(path: str, parts: Sequence[bytes]) -> str:
    with open(path, "wb") as fh:
        for p in parts:
            fh.write(p.decode("utf-8", errors="ignore").encode())
    return path


@dataclass(frozen=True)
class Measure:
    """A version on one text: (id, F1, F2) of the tokens formed, tokens per byte."""

    rows: tuple[tuple[int, int, int], ...]
    per_byte: float

    def residues(self, min_seen: int = MIN_SEEN) -> dict[int, int]:
        """Residue id -> F1."""
        return {i: f for i, f, m in self.rows if f + m >= min_seen and f < BELOW * (f + m)}


def lines_of(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines(keepends=True)


class Texts:
    """Each text's lines read once."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}
        self.bytes: dict[str, int] = {}

    def add(self, path: str) -> str:
        self.lines[path] = lines_of(path)
        self.bytes[path] = os.path.getsize(path)
        return path

    def measure(self, tok: Any, path: str) -> Measure:
        emitted, formed, consumed = tok.merge_counts(self.lines[path], threads=THREADS)
        rows = tuple((i, emitted[i], consumed[i]) for i in range(len(formed)) if formed[i])
        return Measure(rows, sum(emitted) / self.bytes[path])


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cut(reg: tokreg.Registry, big: str, size: int, gone: Sequence[int], name: str, note: str) -> str:
    """BPE `big` cut to its first `size` + len(gone) tokens, then `gone` removed after the last
    merge (each split into its parents): `size` tokens stay."""
    st = reg.stored(big)
    n = size + len(gone)
    tokens = [t.bytes for t in st.tokens[:n]]
    merges = [(m.left, m.right, m.result, 0) for m in st.merges[: n - 256]]
    assert all(z < n for _, _, z, _ in merges) and len(tokens) == n
    present = [True] * n
    for x in gone:
        present[x] = False
    last = len(merges) - 1
    data = picky_data(tokens, present, [0] * n, merges, [(last, x, None, 0, 0.0) for x in gone], [])
    data.config = PickyConfig(st.info.config["pattern"], tuple((r.after, r.token_id) for r in data.removals)).to_json()
    return reg.add(name, data, message=note).ref


def cheapest(found: dict[int, int], k: int) -> list[int]:
    return [i for _, i in sorted((f, i) for i, f in found.items())[:k]]


def run_one(
    reg: tokreg.Registry, texts: Texts, train: str, parts: list[str], held: str, halves: list[str], n: int, tag: str
) -> tuple[list[list[Any]], list[str]]:
    rows: list[list[Any]] = []
    notes: list[str] = []
    t0 = cpu()
    plain, big = reg.train_sizes(f"bpe{tag}", [train], tokreg.BpeOptions(vocab_size=n), [n, n + round(n * EXTRA)])
    train_cpu = cpu() - t0
    tok = reg.load(plain.ref)
    on_h = texts.measure(tok, held)
    on_a, on_b = (texts.measure(tok, p) for p in halves)
    ra, rb, rh = on_a.residues(), on_b.residues(), on_h.residues()
    both = len(ra.keys() & rb.keys())
    notes.append(
        f"{n:,}: plain BPE trained in {train_cpu:.1f} s CPU; residues on A {len(ra):,}, on B {len(rb):,}, in both "
        f"{both:,} ({100 * both / max(len(ra), 1):.0f}% of A, {100 * both / max(len(rb), 1):.0f}% of B); "
        f"on H {len(rh):,}"
    )
    only_a = ra.keys() - rb.keys()
    b_rows = {i: (f, m) for i, f, m in on_b.rows}
    few = sum(sum(b_rows.get(i, (0, 0))) < MIN_SEEN for i in only_a)
    near = sum(i in b_rows and sum(b_rows[i]) >= MIN_SEEN and b_rows[i][0] < 2 * BELOW * sum(b_rows[i]) for i in only_a)
    notes.append(
        f"{n:,}: of the {len(only_a):,} residues of A that B lacks, {few:,} are formed fewer than {MIN_SEEN} times "
        f"on B, {near:,} have a ratio from {BELOW} to {2 * BELOW:g} there, {len(only_a) - few - near:,} a higher one"
    )
    p_h = len(rh)
    ks = sorted(
        {round(s * p_h) for s in SHARES}
        | {round(s * len(ra)) for s in SHARES_A}
        | {round(s * p_h) for s in TRAIN_SHARES}
    )
    if ks[-1] > round(n * EXTRA):
        big = reg.train(f"big{tag}", [train], tokreg.BpeOptions(vocab_size=n + ks[-1]))
    st_big, st_plain = reg.stored(big.ref), reg.stored(plain.ref)
    prefix = [(m.left, m.right, m.result) for m in st_big.merges[: len(st_plain.merges)]] == [
        (m.left, m.right, m.result) for m in st_plain.merges
    ]
    notes.append(f"{n:,}: BPE {len(st_big.tokens):,} begins with BPE {n:,}'s merges: {prefix}")
    base_h, base_b = on_h.per_byte, on_b.per_byte
    rows.append([f"plain BPE {n:,}", "H", f"{p_h:,}", "", f"{base_h:.4f}", "", f"{train_cpu:.1f}"])

    def row(label: str, ref: str, on: str, base_res: int, base_pb: float, judge_cpu: Optional[float] = None) -> None:
        m = texts.measure(reg.load(ref), on)
        r = len(m.residues())
        rows.append(
            [
                label,
                "H" if on == held else "B",
                f"{r:,}",
                f"{base_res / max(r, 1):.1f}x",
                f"{m.per_byte:.4f}",
                f"{100 * (m.per_byte / base_pb - 1):+.2f}%",
                "" if judge_cpu is None else f"{judge_cpu:.1f}",
            ]
        )

    big_ref = big.ref
    for s in SHARES:
        k = round(s * p_h)
        ref = cut(reg, big_ref, n, cheapest(rh, k), f"bound{tag}-{k}", "held-out bound")
        row(f"held-out bound: BPE {n + k:,} less {k:,} (k = {s:.2f} P_H)", ref, held, p_h, base_h)
    for s in SHARES_A:
        k = round(s * len(ra))
        ref = cut(reg, big_ref, n, cheapest(ra, k), f"half{tag}-{k}", "judged on half A")
        row(f"judged on A: BPE {n + k:,} less {k:,} (k = {s:.2f} P_A)", ref, halves[1], len(rb), base_b)
    for s in TRAIN_SHARES:
        k = round(s * p_h)
        t0 = cpu()
        cand_tok = reg.load(cut(reg, big_ref, n + k, [], f"plus{tag}-{k}", f"BPE {n + k} cut from {big_ref}"))
        per_part = [texts.measure(cand_tok, p).rows for p in parts]
        total: dict[int, list[int]] = {}
        for rows_p in per_part:
            for i, f, m in rows_p:
                acc = total.setdefault(i, [0, 0])
                acc[0] += f
                acc[1] += m
        on_t = {i: f for i, (f, m) in total.items() if f + m >= MIN_SEEN and f < BELOW * (f + m)}
        scaled = MIN_SEEN * sum(texts.bytes[p] for p in parts) / texts.bytes[held]
        on_t_scaled = {i: f for i, f in on_t.items() if sum(total[i]) >= scaled}
        in_parts: dict[int, int] = {}  # token -> how many quarters it is a residue of
        for rows_p in per_part:
            for i in Measure(rows_p, 0.0).residues():
                in_parts[i] = in_parts.get(i, 0) + 1
        each = set(on_t_scaled)
        for rows_p in per_part:  # a part where the token is formed and emitted in 0.1 of those or more rules it out
            each -= {i for i, f, m in rows_p if f + m and f >= BELOW * (f + m)}
        judge_cpu = cpu() - t0
        judges = (
            ("all T", on_t),
            (f"each of {PARTS}", {i: on_t[i] for i in each}),
            # the stable candidates first (F1 below every other's), then the rest of T's
            (f"each of {PARTS} first, then all T", {i: f - (1 << 62) * (i in each) for i, f in on_t.items()}),
            # the share of quarters (each about H's size) where it is a residue estimates how
            # likely it is one on H: most of that per F1 on T first (a rank, so `cheapest` takes it)
            (
                f"share of {PARTS} it is a residue of, per F1",
                {i: r for r, (_, i) in enumerate(sorted((-c / max(total[i][0], 1), i) for i, c in in_parts.items()))},
            ),
        )
        for j, (label, found) in enumerate(judges):
            if len(found) < k:  # not a version of n tokens
                notes.append(f"{n:,}: judge '{label}' at k = {k:,}: only {len(found):,} candidates; skipped")
                continue
            gone = cheapest(found, k)
            ref = cut(reg, big_ref, n, gone, f"t{j}-{tag}-{k}", f"judged on the training text ({label})")
            row(f"judged on T ({label}): BPE {n + k:,} less {k:,}", ref, held, p_h, base_h, judge_cpu)
            hit = sum(i in rh for i in gone)
            notes.append(
                f"{n:,}: judge '{label}', k = {k:,}: {hit:,} of the {k:,} removed are residues of plain BPE {n:,} on H "
                f"({len(found):,} candidates; {sum(i in found for i in rh):,} of the {p_h:,} residues on H among them)"
            )
    for cost in RULE_COSTS:
        t0 = cpu()
        opts = tokreg.PickyOptions(vocab_size=n, threshold=2.0, residue_below=0.1, residue_cost=cost)
        v = reg.train(f"rule{tag}-{cost:g}", [train], opts)
        row(f"residue rule R 0.1, K {cost:g} (trained on T)", v.ref, held, p_h, base_h, cpu() - t0)
    return rows, notes


def run_budget(
    reg: tokreg.Registry, texts: Texts, train: str, held: str, n: int, tag: str
) -> tuple[list[list[Any]], list[str]]:
    """Plain BPE N and `drop-residues --budget MARGIN` on it, both measured on H (the budget's k
    is chosen on the training text alone: versions/residue_budget.py)."""
    rows: list[list[Any]] = []
    notes: list[str] = []
    t0 = cpu()
    plain = reg.train(f"bpe{tag}", [train], tokreg.BpeOptions(vocab_size=n))
    train_cpu = cpu() - t0
    on_h = texts.measure(reg.load(plain.ref), held)
    p_h = len(on_h.residues())
    rows.append([f"plain BPE {n:,}", "H", f"{p_h:,}", "", f"{on_h.per_byte:.4f}", "", f"{train_cpu:.1f}"])
    for margin in BUDGETS:
        t0, w0 = cpu(), time.perf_counter()
        v = reg.drop_residues(
            plain.ref,
            f"budget{tag}-{margin:g}",
            train,
            budget=margin / 100,
            budget_version=BUDGET_VERSION,
            fewer=FEWER,
            folds=FOLDS if FEWER is not None else "trained",
            refill=REFILL,
            rejudge=REJUDGE,
            threads=THREADS,
        )
        judge_cpu, wall = cpu() - t0, time.perf_counter() - w0
        m = texts.measure(reg.load(v.ref), held)
        r = len(m.residues())
        budget = reg.lineage(v.ref)[0].lineage.details["budget"]  # nearest first
        how = (
            f"--fewer {FEWER:g}"
            + (f" --folds {FOLDS}" if FOLDS != "trained" else "")
            + (f" --refill {REFILL:g}" if REFILL else "")
            + (f" --rejudge {REJUDGE}" if REJUDGE else "")
            if FEWER is not None
            else BUDGET_VERSION
        )
        r_new = budget["refill"]["r"] if "refill" in budget else 0
        rows.append(
            [
                f"--budget {margin:g}% ({how}): BPE {n + budget['k'] - r_new:,} less {budget['k']:,}"
                + (f" plus {r_new:,} refilled" if r_new else ""),
                "H",
                f"{r:,}",
                f"{p_h / max(r, 1):.1f}x",
                f"{m.per_byte:.4f}",
                f"{100 * (m.per_byte / on_h.per_byte - 1):+.2f}%",
                f"{judge_cpu:.1f}",
            ]
        )
        if FEWER is not None:
            tried = "; ".join(
                (
                    f"{s['k']}: mean {100 * sum(s['costs']) / len(s['costs']):+.2f}%, "
                    f"{sum(s['fewer']) / len(s['fewer']):.2f}x"
                    if FOLDS == "unseen"
                    else f"{s['k']}: worst {100 * max(s['costs']):+.2f}%, {min(s['fewer']):.1f}x"
                )
                for s in budget["tried"]
            )
            how_tried = "the folds' mean cost and fewer" if FOLDS == "unseen" else "worst fold's cost and fewer"
            where = "on average over the folds" if FOLDS == "unseen" else "on every fold"
            notes.append(
                f"{n:,}, --budget {margin:g}% --fewer {FEWER:g}{' --folds unseen' if FOLDS == 'unseen' else ''}"
                f"{f' --refill {REFILL:g}' if REFILL else ''}{f' --rejudge {REJUDGE}' if REJUDGE else ''}: "
                f"k = {budget['k']:,}, goal met ({where}): "
                f"{budget['goal_met']} (k tried, {how_tried}: {tried}); "
                + (
                    f"rejudge: tokens refused per round {budget['refill']['rejudge']['refused']}; "
                    if "rejudge" in budget.get("refill", {})
                    else ""
                )
                + f"{judge_cpu:.0f} s CPU, {wall:.0f} s wall"
            )
            continue
        tried = ", ".join(f"{s['k']}: {100 * s['cost']:+.2f}%" for s in budget["tried"])
        notes.append(
            f"{n:,}, --budget {margin:g}%: k = {budget['k']:,} (check part {budget['check_bytes'] / 1e6:.1f} MB, "
            f"fit part {budget['fit_bytes'] / 1e6:.1f} MB; k tried, cost on the check part: {tried}); "
            f"{judge_cpu:.0f} s CPU, {wall:.0f} s wall"
        )
    return rows, notes


def run() -> None:
    if not KERNEL_1G.exists():
        print(f"\nresidues at scale: {KERNEL_1G} not found (../shared/tools/big-corpus.sh 1000); skipped")
        return
    order = blocks(KERNEL_1G)
    held_pool, train_pool = order[: len(order) // 5], order[len(order) // 5 :]
    folder = os.environ.get("TOKREG_BENCH_SCALE_DIR") or tempfile.mkdtemp(prefix="tokreg-residue-scale-")
    for t_mb, h_mb in SIZES:
        texts = Texts()
        nt, nh = t_mb * 10**6 // BLOCK, h_mb * 10**6 // BLOCK
        tb = read_blocks(KERNEL_1G, train_pool[:nt])
        hb = read_blocks(KERNEL_1G, held_pool[:nh])
        train = write(os.path.join(folder, f"train{t_mb}.txt"), tb)
        parts = [texts.add(write(os.path.join(folder, f"train{t_mb}.part{j}.txt"), tb[j::PARTS])) for j in range(PARTS)]
        held = texts.add(write(os.path.join(folder, f"held{h_mb}.txt"), hb))
        halves = [texts.add(write(os.path.join(folder, f"held{h_mb}.half{j}.txt"), hb[j::2])) for j in range(2)]
        reg = tokreg.Registry(os.path.join(folder, f"scale{t_mb}.db"))
        for n in VOCABS:
            w0 = time.perf_counter()
            if ONLY == "budget":
                rows, notes = run_budget(reg, texts, train, held, n, f"{n}")
            else:
                rows, notes = run_one(reg, texts, train, parts, held, halves, n, f"{n}")
            load = os.getloadavg()[0]
            table(
                f"kernel.txt blocks: trained on {os.path.getsize(train) / 1e6:.1f} MB, held out H "
                f"{texts.bytes[held] / 1e6:.1f} MB (halves A {texts.bytes[halves[0]] / 1e6:.1f}, B "
                f"{texts.bytes[halves[1]] / 1e6:.1f} MB), vocabulary {n:,}",
                ["version", "measured on", "residues", "fewer", "tokens/byte", "vs plain BPE", "train/judge CPU s"],
                rows,
            )
            for line in notes:
                print(f"- {line}")
            print(f"- wall {time.perf_counter() - w0:.0f} s, load average {load:.1f}", flush=True)


if __name__ == "__main__":
    run()
