"""`tokreg drop-residues --budget`: how many residues to remove, chosen on the training text
alone (issue 28, item 3).

A residue (LiteToken, Sun et al., arXiv 2602.04706; evaluation/residues.py) is a token BPE's
merge loop forms on a text (at least `min_seen` times) but seldom emits (F1 / (F1 + F2) below
`below`). Removing one, PickyBPE's way (Chizhov et al., arXiv 2409.04599: where it would be
emitted, its parents are), costs tokens; the slot it frees buys another merge. The version made
here is BPE N + k trained on the text T, less k of its tokens, removed after the last merge (N
tokens left, every id of BPE N kept, the removed ones left as holes: versions/no_residues.py's
model). Two things are chosen, each on T only:

- **which k tokens** (the judge): T is cut into blocks (`BLOCK` characters, to a line end), the
  blocks dealt in turn into `PARTS` parts. A token's score is the number of parts in which it is
  a residue, per its F1 over all of them (both with BPE N + k); the k of highest score leave
  (ties: lowest id). A token every part calls a residue and that is seldom emitted goes first:
  which tokens are residues moves from sample to sample, and the share of parts estimates how
  likely it is one on other text of the same kind.
- **how many** (the budget): a validation inside T. Every `CHECK_EVERY`-th block is the check
  part, the others the fit part. BPE N + N/4 is trained on the fit part alone; for a k, BPE N + k
  is that run's prefix, the judge reads the fit part (its blocks dealt into `PARTS` parts) and
  the version's tokens per byte on the check part is compared with plain BPE N's there. k
  doubles from N/128 while that cost stays within the margin (up to N/4), then the gap to the
  first k over it is halved down to N/1024 or less; the largest k found within the margin is
  the one applied (the cost is taken to rise with k: every k tried is recorded, so a reader
  sees where it did not). Then BPE N + k is trained on all of T, judged on T's parts, and its k
  tokens removed.

Nothing here reads any other text: the margin, the split and the steps are fixed before a
held-out text is looked at, and recorded in the lineage with every k tried.

**The folds rule** (`--budget PCT --fewer X`, `drop_by_folds`; the end of this module) answers
both questions on the version actually applied, BPE N + k trained on all of T (BPE N + N/4 once,
each N + k its prefix). T's blocks are dealt in turn into `EIGHTHS` parts. The judge: a token's
evidence is the number of unions of two parts (each about a quarter of T, 28 of them) in which
it is a residue, and the k of most evidence per F1 leave (ties: lowest id); votes of quarter-sized
samples estimate how likely a token is a residue of other text of that size more finely than
the 4 quarters alone. How many: for a k, each fold (a quarter: parts q and q + 4) is measured
with the k tokens the judge picks on the other six parts removed, against plain BPE N there
(tokens per byte, and its residues counted from one trace: `residues_after`). k is the smallest
whose **every** fold has X times fewer residues within PCT (the worst fold is the safety term
for a sample that is not T), found by doubling from N/128 and halving to N/1024; when no such k
is found, the largest k within PCT on every fold, recorded with `goal_met` false.

**Unseen folds** (`--folds unseen`, `drop_by_unseen_folds`): the same judge and version, but
each fold is measured as held-out text is: BPE N + N/4 is trained on T without the fold (4 more
trainings), the judge reads the six parts that run was trained on, and the fold (never trained
on, never judged on) is measured against that run's plain BPE N. The folds of a BPE trained on
them underestimate both the cost and the reduction on unseen text at 32k; the unseen folds track
it (development seed 29, k = 4,000: held-out +0.80% / 4.78x, the folds' mean +0.83% / 4.77x).
Their mean is the estimate: k_hi is the largest k found within PCT on average, k_lo the smallest
at most k_hi with X times fewer residues on average, and k their midpoint (`unseen_search`).

**Refill** (`--refill R` with unseen folds, `refilled_version`): r = round(R k) of the freed
slots are learned after the removals instead of before: BPE N + k - r less the k judged, then r
merges at new ids learned on the text as that version segments it (a PickyBPE version; every k
of the search measured so on each fold, the refill learned on its six parts).

**Rejudge** (`--rejudge ROUNDS` with a refill, `refused_refill`): the refill's own residues. Its
new merges consume their parents, and its new tokens can be consumed by later ones: the refill
makes residues of its own. After it, the version and the one before it are traced on the judge's
parts; a new token in more unions of two parts a residue of than before, or made from an older
token whose count rose, is refused, and the r merges are learned again from the removals on with
every refused token barred (`_core.extend_bpe`'s `refused`), up to ROUNDS rounds. The k removals
and BASE's ids do not change; every k of the search is measured so.

Tokens per byte with removals are counted from one trace of the merge loop (`merge_counts`):
each emitted token counts once, a removed one as many tokens as the leaves it splits into (its
parents, theirs where removed too), which is what the encoder emits (tested against it). The
traces run over a part's distinct pieces, counted once (`Pieces`), not over its every line.

    >>> reg.drop_residues("kernel-bpe@1", "kernel-bpe", "kernel.txt", budget=0.008)
    ... # -> kernel-bpe@2: BPE 8,000 + k less k, k chosen within 0.8% on kernel.txt's check part
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Union

from .. import _core
from ..algorithms import model_of, template
from ..algorithms.bpe.picky_model import PICKY, REMOVED, PickyConfig
from ..algorithms.bpe.residue_free_model import ResidueFreeConfig
from ..algorithms.bpe.training import BpeOptions
from ..data import FinishedVersion, MergeRow, RemovalRow, StoredVersion, TokenizerData, TokenRow
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..evaluation import residues
from ..files import read_text
from .no_residues import DERIVATION, descendant, require_byte_bpe

#: "all": BPE N + k trained on all of T (BASE's ids kept); "checked": the fit part's version.
VERSIONS = ("all", "checked")
#: A block of T: this many characters, then to the end of the line.
BLOCK = 1 << 16
#: Every CHECK_EVERY-th block (the 5th, 10th, ...) is the check part; the rest the fit part.
CHECK_EVERY = 5
#: The judge deals its text's blocks in turn into this many parts.
PARTS = 4
#: k is at most N / MAX_SHARE (the fit run trains BPE N + N / MAX_SHARE once).
MAX_SHARE = 4
#: k first doubles from N / COARSE, then the gap is halved down to N / FINE.
COARSE = 128
FINE = 1024


def parse_margin(text: str) -> float:
    """'0.8%' or '0.8' (percent) -> 0.008."""
    raw = text.strip().removesuffix("%").strip()
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"--budget takes a percentage of tokens per byte such as 0.8%, not {text!r}") from None
    if not 0 < value < 100:
        raise InputError(f"--budget must be above 0% and below 100% (e.g. 0.8%), not {text!r}")
    return value / 100


def cut_blocks(text: str, size: int = 0) -> list[list[str]]:
    """`text` as blocks of lines (line ends kept): each block at least `size` (0: `BLOCK`)
    characters, ending at a line end (the last one whatever is left)."""
    size = size or BLOCK
    out: list[list[str]] = []
    block: list[str] = []
    n = 0
    for line in text.splitlines(keepends=True):
        block.append(line)
        n += len(line)
        if n >= size:
            out.append(block)
            block, n = [], 0
    if block:
        out.append(block)
    return out


def lines_of(blocks: Sequence[list[str]]) -> list[str]:
    return [line for b in blocks for line in b]


def cut_bpe(data: TokenizerData, size: int) -> TokenizerData:
    """A trained BPE's prefix of `size` tokens (its first size - 256 merges): BPE of that size
    trained on the same counts (ties broken alike)."""
    tokens = [t for t in data.tokens if t.kind != "special"]
    if size > len(tokens):
        raise InputError(f"the corpus gave {len(tokens):,} tokens, fewer than the {size:,} asked")
    keep = tokens[:size]
    merges = [m for m in data.merges if m.result < size]
    return dataclasses.replace(data, tokens=keep, merges=merges)


def parents(data: TokenizerData) -> dict[int, tuple[int, int]]:
    """Token id -> (left, right) of the merge that makes it."""
    return {m.result: (m.left, m.right) for m in data.merges}


def leaves(gone: set[int], made_of: dict[int, tuple[int, int]]) -> dict[int, int]:
    """How many tokens each removed token is emitted as: its parents, split again where removed."""
    memo: dict[int, int] = {}

    def count(x: int) -> int:
        if x not in gone:
            return 1
        if x not in memo:
            left, right = made_of[x]
            memo[x] = count(left) + count(right)
        return memo[x]

    for x in sorted(gone):  # parents have lower ids: recursion depth stays small in id order
        count(x)
    return memo


@dataclass(frozen=True)
class Trace:
    """BPE's merge loop on some lines: per token id, emitted (F1), formed and merged further (F2)."""

    emitted: list[int]
    formed: list[int]
    consumed: list[int]

    def residues(self, below: float, min_seen: int) -> set[int]:
        return {
            i
            for i, (f, m) in enumerate(zip(self.emitted, self.consumed))
            if self.formed[i] and f + m >= min_seen and f < below * (f + m)
        }

    def tokens(self, gone: set[int], made_of: dict[int, tuple[int, int]]) -> int:
        """Tokens emitted once `gone` are removed after the last merge."""
        split = leaves(gone, made_of)
        return sum(f * split.get(i, 1) for i, f in enumerate(self.emitted) if f)


@dataclass(frozen=True)
class Pieces:
    """A text as its distinct pieces (the pattern's), grouped by the bits of their counts:
    (2**b, the pieces whose count has bit b set). Byte-level BPE encodes each piece on its own,
    so a trace of each group, times its weight, summed, is the trace of the text (tested), for
    about as many pieces as the text has distinct ones rather than all of them."""

    groups: tuple[tuple[int, list[str]], ...]


def pieces_of(blocks: Sequence[list[str]], pattern: str, threads: int) -> Pieces:
    counter = _core.Counter.pieces(pattern, threads=threads)
    for b in blocks:
        counter.feed("".join(b).encode("utf-8"))
    counter.end_input()
    by_bit: dict[int, list[str]] = {}
    for piece, count in counter.finish().items():
        text = piece.decode("utf-8")
        bit = 0
        while count:
            if count & 1:
                by_bit.setdefault(bit, []).append(text)
            count >>= 1
            bit += 1
    return Pieces(tuple((1 << bit, by_bit[bit]) for bit in sorted(by_bit)))


def trace(tok: Tokenizer, text: Union[Pieces, Sequence[str]], threads: int) -> Trace:
    """The merge loop's counts on lines, or on counted pieces (each group's times its weight)."""
    if not isinstance(text, Pieces):
        emitted, formed, consumed = tok.merge_counts(text, threads=threads)
        return Trace(emitted, formed, consumed)
    sums: Optional[list[list[int]]] = None
    for weight, group in text.groups:
        got = tok.merge_counts(group, threads=threads)
        if sums is None:
            sums = [[0] * len(got[0]) for _ in range(3)]
        for acc, row in zip(sums, got):
            for i, x in enumerate(row):
                if x:
                    acc[i] += weight * x
    if sums is None:
        sums = [[0] * tok.vocab_size for _ in range(3)]
    return Trace(*sums)


def judge(data: TokenizerData, parts: Sequence[Pieces], below: float, min_seen: int, threads: int) -> list[int]:
    """The tokens of `data` (BPE) in the order the judge removes them: most parts it is a residue
    of per F1 over all parts, then lowest id. Only tokens a residue of some part are listed."""
    tok = Tokenizer.from_data(data, "judged")
    traces = [trace(tok, p, threads) for p in parts]
    in_parts: dict[int, int] = {}
    for t in traces:
        for i in t.residues(below, min_seen):
            in_parts[i] = in_parts.get(i, 0) + 1
    f1 = {i: sum(t.emitted[i] for t in traces) for i in in_parts}
    # c / F1 descending is (-c / F1) ascending; compared as fractions, so exact
    return [i for _, i in sorted((Fraction(-c, max(f1[i], 1)), i) for i, c in in_parts.items())]


@dataclass(frozen=True)
class Step:
    """One k tried on the check part."""

    k: int
    per_byte: float
    cost: float  # against plain BPE N on the check part
    candidates: int

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "tokens_per_byte": round(self.per_byte, 6), "cost": round(self.cost, 6)}


def search(
    fit_data: TokenizerData,
    fit_parts: Sequence[Pieces],
    check: Pieces,
    check_bytes: int,
    n: int,
    margin: float,
    below: float,
    min_seen: int,
    threads: int,
) -> tuple[int, float, list[Step]]:
    """The largest k found whose check cost is within `margin` (see the module's docstring)."""
    made_of = parents(fit_data)
    base = trace(Tokenizer.from_data(cut_bpe(fit_data, n), "plain"), check, threads)
    base_tokens = base.tokens(set(), made_of)
    base_per_byte = base_tokens / check_bytes
    kmax = n // MAX_SHARE
    tried: dict[int, Step] = {}

    def passes(k: int) -> bool:
        if k not in tried:
            data = cut_bpe(fit_data, n + k)
            order = judge(data, fit_parts, below, min_seen, threads)
            if len(order) < k:  # not a version of n tokens: counts as over the budget
                tried[k] = Step(k, float("inf"), float("inf"), len(order))
            else:
                on_check = trace(Tokenizer.from_data(data, "candidate"), check, threads)
                per_byte = on_check.tokens(set(order[:k]), made_of) / check_bytes
                tried[k] = Step(k, per_byte, per_byte / base_per_byte - 1, len(order))
        return tried[k].cost <= margin

    fine = max(1, n // FINE)
    ok, over = 0, kmax + 1
    k = max(1, n // COARSE)
    while k <= kmax:  # doubling: N/128, N/64, ... while within the margin
        if not passes(k):
            over = k
            break
        ok = k
        k *= 2
    while over - ok > fine:
        mid = (ok + over) // 2
        if passes(mid):
            ok = mid
        else:
            over = mid
    return ok, base_per_byte, [tried[k] for k in sorted(tried)]


def train_bpe(source: Union[str, Iterator[str]], size: int, pattern: str, threads: int) -> TokenizerData:
    """Plain byte-level BPE of `size` tokens on a file or on strings, nothing recorded."""
    from ..training import train_run  # on use, as the registry imports training
    from ..training.corpus import Corpus

    inputs = [source]
    opts = BpeOptions(vocab_size=size, pattern=pattern, threads=threads)
    (v,) = train_run.train_unmeasured(Corpus.of(inputs), opts, [size]).versions
    return v.data


def same_merges(larger: TokenizerData, base: TokenizerData) -> bool:
    """Whether `larger` begins with `base`'s tokens and merges."""
    n = len(base.tokens)
    return [(m.left, m.right, m.result) for m in larger.merges[: len(base.merges)]] == [
        (m.left, m.right, m.result) for m in base.merges
    ] and [t.bytes for t in larger.tokens[:n]] == [t.bytes for t in base.tokens]


def read_base(stored: StoredVersion, path: str, below: float, min_seen: int) -> tuple[Any, TokenizerData, str, str]:
    """BASE's info, data and pattern, and the text of `path`, once BASE is checked to be
    plain byte-level BPE without specials of at least COARSE tokens (refused in one line otherwise)."""
    info = stored.info
    require_byte_bpe(stored, "--budget applies to byte-level BPE versions trained on the --text file")
    model = model_of(info.algorithm, info.config)
    residues.check(below, min_seen)
    base_data = stored.data()
    if any(t.kind == "special" for t in base_data.tokens):
        raise InputError(
            f"{info.ref} has special tokens; --budget retrains plain BPE and keeps none; nothing was written"
        )
    n = len(base_data.tokens)
    if n // COARSE < 1:
        raise InputError(f"{info.ref} has {n:,} tokens; --budget needs at least {COARSE} to step k by N/{COARSE}")
    return info, base_data, model.parse_config(info.config).pattern, read_text(path, "--text file")


def removed_version(
    whole: TokenizerData, gone: Sequence[int], stored: StoredVersion, keep_counts: bool
) -> TokenizerData:
    """`whole` (BPE N + k) with the tokens `gone` removed after the last merge (holes of kind
    'removed'), as BASE's residue-free model; counts kept on the others when `keep_counts`."""
    info = stored.info
    model = model_of(info.algorithm, info.config)
    drop = set(gone)
    tokens = [
        dataclasses.replace(t, kind="removed", count=None)
        if t.id in drop
        else (t if keep_counts else dataclasses.replace(t, count=None))
        for t in whole.tokens
    ]
    cfg = model.parse_config(info.config)
    config = ResidueFreeConfig(cfg.pattern, tuple(sorted(gone)), cfg.keep_gaps).to_json()
    config.update({key: v for key, v in info.config.items() if key in template.KEYS})
    return dataclasses.replace(whole, config=config, tokens=tokens, source=DERIVATION)


def drop_with_budget(
    stored: StoredVersion,
    path: str,
    *,
    margin: float,
    below: float,
    min_seen: int,
    threads: int = 0,
    version: str = "all",
    fewer: Optional[float] = None,
    folds: str = "trained",
    refill: float = 0.0,
    rejudge: int = 0,
) -> FinishedVersion:
    """BPE N + k trained on `path` (BASE's training text) less k tokens, k chosen within `margin`
    on `path`'s own check part: a version descending from `stored` (BPE N, trained on `path`).
    `version` "checked": instead the version whose cost the check part measured (BPE N + k of the
    fit part, judged on its parts): BASE's ids are not kept, a fifth of the text is not trained on.
    With `fewer`, the folds rule instead (`drop_by_folds`; `folds` "unseen": cross-fitted)."""
    if folds not in FOLDS:
        raise InputError(f"--folds is one of {', '.join(FOLDS)}, not {folds!r}")
    if folds != "trained" and fewer is None:
        raise InputError("--folds is for the folds rule: give --budget PCT --fewer X with it")
    if fewer is not None:
        if version != "all":
            raise InputError(
                "--fewer keeps BASE's ids (the version on all of the text); --budget-version is for --budget alone"
            )
        return drop_by_folds(
            stored,
            path,
            margin=margin,
            goal=fewer,
            below=below,
            min_seen=min_seen,
            threads=threads,
            folds=folds,
            refill=refill,
            rejudge=rejudge,
        )
    if version not in VERSIONS:
        raise InputError(f"--budget-version is one of {', '.join(VERSIONS)}, not {version!r}")
    t0 = time.perf_counter()
    info, base_data, pattern, text = read_base(stored, path, below, min_seen)
    n = len(base_data.tokens)
    raw_bytes = len(text.encode("utf-8"))
    blocks = cut_blocks(text)
    del text  # the blocks hold its lines
    if len(blocks) < CHECK_EVERY * PARTS:
        raise InputError(
            f"{path} has {len(blocks)} blocks of {BLOCK:,} characters; --budget needs at least "
            f"{CHECK_EVERY * PARTS} (a check part of every {CHECK_EVERY}th and {PARTS} parts to judge on); "
            "nothing was written"
        )
    check_blocks = blocks[CHECK_EVERY - 1 :: CHECK_EVERY]
    fit_blocks = [b for j, b in enumerate(blocks) if j % CHECK_EVERY != CHECK_EVERY - 1]
    check_bytes = sum(len(line.encode("utf-8")) for b in check_blocks for line in b)
    fit_bytes = raw_bytes - check_bytes

    # 0. BASE must be what plain BPE N makes of this text (then BPE N + k begins with it)
    if not same_merges(train_bpe(path, n, pattern, threads), base_data):
        raise InputError(
            f"plain BPE {n:,} trained on {path} is not {info.ref}: --budget needs BASE to be byte-level BPE "
            "trained on that file with default options; nothing was written"
        )
    # 1. the fit part: BPE N + N/4 once, every N + k its prefix
    fit_data = train_bpe(("".join(b) for b in fit_blocks), n + n // MAX_SHARE, pattern, threads)
    if len([t for t in fit_data.tokens if t.kind != "special"]) < n + n // MAX_SHARE:
        raise InputError(f"{path}'s fit part has too few pairs for {n + n // MAX_SHARE:,} tokens; nothing was written")
    # 2. how many: the largest k within the margin on the check part
    fit_parts = [pieces_of(fit_blocks[j::PARTS], pattern, threads) for j in range(PARTS)]
    k, base_per_byte, steps = search(
        fit_data,
        fit_parts,
        pieces_of(check_blocks, pattern, threads),
        check_bytes,
        n,
        margin,
        below,
        min_seen,
        threads,
    )
    if k == 0:
        raise InputError(
            f"no k from {max(1, n // FINE)} up keeps {path}'s check part within {100 * margin:g}% of plain BPE's "
            "tokens per byte; nothing was written"
        )
    if version == "checked":  # 3. the version checked: the fit part's BPE N + k, judged on its parts
        cut = cut_bpe(fit_data, n + k)  # its counts are the larger run's: not this version's
        whole = dataclasses.replace(cut, tokens=[dataclasses.replace(t, count=None) for t in cut.tokens])
        order = judge(whole, fit_parts, below, min_seen, threads)
    else:  # 3. all of T: BPE N + k, judged on T's parts
        whole = train_bpe(path, n + k, pattern, threads)
        if not same_merges(whole, base_data):  # BPE's merges of a size are a prefix of a larger size's
            raise InputError(
                f"BPE {n + k:,} trained on {path} does not begin with {info.ref}'s merges; nothing was written"
            )
        order = judge(
            whole, [pieces_of(blocks[j::PARTS], pattern, threads) for j in range(PARTS)], below, min_seen, threads
        )
    if len(order) < k:
        raise InputError(
            f"{path} names {len(order):,} residues of BPE {n + k:,}, fewer than the k = {k:,} chosen; "
            "nothing was written"
        )
    new = removed_version(whole, order[:k], stored, keep_counts=True)
    chosen = next(s for s in steps if s.k == k)
    details: dict[str, Any] = {
        "removed": k,
        "below": below,
        "min_seen": min_seen,
        "text": {"name": os.path.basename(path), "bytes": raw_bytes, "lines": sum(len(b) for b in blocks)},
        "ids_preserved": version == "all",
        "holes": k,
        "added": k,
        "budget": {
            "margin": margin,
            "k": k,
            "version": version,
            "judge": f"most of {PARTS} parts (blocks in turn) a residue of, per F1; ties lowest id",
            "split": (
                f"blocks of {BLOCK} characters to a line end; every {CHECK_EVERY}th block the check part, "
                "the rest the fit part"
            ),
            "steps": (
                f"k doubles from N/{COARSE} while within the margin (at most N/{MAX_SHARE}), "
                f"then the gap is halved to N/{FINE}"
            ),
            "fit_bytes": fit_bytes,
            "check_bytes": check_bytes,
            "check_plain_tokens_per_byte": round(base_per_byte, 6),
            "check_cost": round(chosen.cost, 6),
            "tried": [s.to_json() for s in steps],
            "seconds": round(time.perf_counter() - t0, 1),
        },
    }
    return descendant(new, stored, details)


# --- the folds rule (`--budget PCT --fewer X`): k chosen by cross-validation over T's parts ---

#: T's blocks are dealt in turn into EIGHTHS parts; part j and part j + EIGHTHS / 2 together are
#: the blocks of quarter j (the `PARTS` parts above), each about a quarter of T.
EIGHTHS = 2 * PARTS


def added(traces: Sequence[Trace]) -> Trace:
    """The trace of the parts' text together (the counts add)."""
    return Trace(
        *([sum(col) for col in zip(*(getattr(t, f) for t in traces))] for f in ("emitted", "formed", "consumed"))
    )


def pair_votes(traces: Sequence[Trace], below: float, min_seen: int) -> dict[int, int]:
    """Token id -> in how many unions of two of `traces` (each pair of parts: a sample of a
    quarter of T when the parts are eighths) it is a residue; tokens with no vote left out."""
    votes: dict[int, int] = {}
    cols = [(t.emitted, t.formed, t.consumed) for t in traces]
    n = len(traces[0].emitted)
    live = [i for i in range(n) if any(c[1][i] for c in cols)]
    for a in range(len(cols)):
        ea, fa, ca = cols[a]
        for b in range(a + 1, len(cols)):
            eb, fb, cb = cols[b]
            for i in live:
                if fa[i] or fb[i]:
                    f = ea[i] + eb[i]
                    seen = f + ca[i] + cb[i]
                    if seen >= min_seen and f < below * seen:
                        votes[i] = votes.get(i, 0) + 1
    return votes


def pair_judge(traces: Sequence[Trace], below: float, min_seen: int) -> list[int]:
    """The tokens in the order the folds rule removes them: most pairs of parts it is a residue
    of (each pair a sample of the size the votes estimate a residue on), per F1 over all parts,
    then lowest id; only tokens with a vote."""
    votes = pair_votes(traces, below, min_seen)
    f1 = {i: sum(t.emitted[i] for t in traces) for i in votes}
    return [i for _, i in sorted((Fraction(-c, max(f1[i], 1)), i) for i, c in votes.items())]


def residues_after(t: Trace, gone: set[int], made_of: dict[int, tuple[int, int]], below: float, min_seen: int) -> int:
    """How many of the version's tokens are residues of the trace's text once `gone` are removed
    after the last merge: each removed token's F1 goes to the leaves it splits into (what the
    residue-free encoder's trace counts: versions/no_residues.py), the rest is unchanged."""
    emitted = list(t.emitted)
    split: dict[int, list[int]] = {}

    def leaves_of(x: int) -> list[int]:
        if x not in gone:
            return [x]
        if x not in split:
            left, right = made_of[x]
            split[x] = leaves_of(left) + leaves_of(right)
        return split[x]

    for x in sorted(gone):
        if t.emitted[x]:
            for leaf in leaves_of(x):
                emitted[leaf] += t.emitted[x]
    return sum(
        1
        for i, (f, m) in enumerate(zip(emitted, t.consumed))
        if i not in gone and t.formed[i] and f + m >= min_seen and f < below * (f + m)
    )


@dataclass(frozen=True)
class FoldStep:
    """One k tried by the folds rule: per fold (a quarter of T, judged on the other three),
    the cost in tokens per byte against plain BPE N there and how many times fewer residues."""

    k: int
    costs: tuple[float, ...]
    fewer: tuple[float, ...]
    #: with `--rejudge`: per fold, how many of the refill's own residues each round removed
    rounds: tuple[tuple[int, ...], ...] = ()

    def within(self, margin: float) -> bool:
        return max(self.costs) <= margin

    def good(self, goal: float) -> bool:
        return min(self.fewer) >= goal

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "k": self.k,
            "costs": [round(c, 6) for c in self.costs],
            "fewer": [round(f, 3) for f in self.fewer],
        }
        if self.rounds:
            out["rejudged"] = [list(r) for r in self.rounds]
        return out


def fold_measure(
    traces: Sequence[Trace],
    q: int,
    k: int,
    made_of: dict[int, tuple[int, int]],
    plain_tokens: int,
    plain_residues: int,
    below: float,
    min_seen: int,
) -> tuple[float, float]:
    """Fold q (eighths q and q + EIGHTHS/2) of a BPE N + k's `traces` of the eighths: (its cost,
    its tokens against plain BPE N's `plain_tokens` less one; how many times fewer residues than
    plain BPE N's `plain_residues`) once the k tokens the judge picks on the other six are gone.
    A judge naming fewer than k makes no version of N tokens: over any margin, goal not met."""
    half = EIGHTHS // 2
    order = pair_judge([t for j, t in enumerate(traces) if j % half != q], below, min_seen)
    if len(order) < k:
        return float("inf"), 0.0
    gone = set(order[:k])
    held = added([traces[q], traces[q + half]])
    left = residues_after(held, gone, made_of, below, min_seen)
    return held.tokens(gone, made_of) / plain_tokens - 1, plain_residues / left if left else float(plain_residues or 1)


def fold_search(
    big: TokenizerData,
    eighths: Sequence[Pieces],
    n: int,
    margin: float,
    goal: float,
    below: float,
    min_seen: int,
    threads: int,
) -> tuple[int, list[FoldStep], dict[int, list[Trace]]]:
    """k for the folds rule (see `drop_with_budget`): the smallest k whose every fold has `goal`
    times fewer residues, every fold within `margin`; if none is found, the largest k within it.
    Returns k, the steps and the eighths' traces of each k tried (for the final judge)."""
    made_of = parents(big)
    half = EIGHTHS // 2
    plain = [trace(Tokenizer.from_data(cut_bpe(big, n), "plain"), p, threads) for p in eighths]
    quarters = [added([plain[q], plain[q + half]]) for q in range(half)]
    base_tokens = [q.tokens(set(), made_of) for q in quarters]
    base_residues = [residues_after(q, set(), made_of, below, min_seen) for q in quarters]
    tried: dict[int, FoldStep] = {}
    traced: dict[int, list[Trace]] = {}

    def measure(k: int) -> FoldStep:
        if k not in tried:
            traces = [trace(Tokenizer.from_data(cut_bpe(big, n + k), "candidate"), p, threads) for p in eighths]
            each = [
                fold_measure(traces, q, k, made_of, base_tokens[q], base_residues[q], below, min_seen)
                for q in range(half)
            ]
            costs, fewer = tuple(c for c, _ in each), tuple(f for _, f in each)
            tried[k], traced[k] = FoldStep(k, costs, fewer), traces
        return tried[k]

    kmax, fine = n // MAX_SHARE, max(1, n // FINE)
    lo, hi = 0, 0  # lo: within the margin, goal not met; hi: goal met within it, or over the margin
    k = max(1, n // COARSE)
    while k <= kmax:
        s = measure(k)
        if s.within(margin) and not s.good(goal):
            lo, k = k, k * 2
        else:
            hi = k
            break
    if hi:
        while hi - lo > fine:
            mid = (lo + hi) // 2
            s = measure(mid)
            if s.within(margin) and not s.good(goal):
                lo = mid
            else:
                hi = mid
    chosen = hi if hi and tried[hi].within(margin) and tried[hi].good(goal) else lo
    return chosen, [tried[k] for k in sorted(tried)], {chosen: traced[chosen]} if chosen else {}


def parse_fewer(text: str) -> float:
    """'5', '5x' -> 5.0 (how many times fewer residues the folds rule aims at)."""
    raw = text.strip().lower().removesuffix("x").strip()
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"--fewer takes how many times fewer residues, such as 5 or 5x, not {text!r}") from None
    if not 1 < value < 1e6:
        raise InputError(f"--fewer must be above 1 (e.g. 5 for five times fewer residues), not {text!r}")
    return value


def drop_by_folds(
    stored: StoredVersion,
    path: str,
    *,
    margin: float,
    goal: float,
    below: float,
    min_seen: int,
    threads: int = 0,
    folds: str = "trained",
    refill: float = 0.0,
    rejudge: int = 0,
) -> FinishedVersion:
    """The folds rule: BPE N + k trained on `path` (BASE's training text) less k tokens, k chosen
    by cross-validation over `path`'s own parts; every id of BASE kept (see the module's
    docstring and `fold_search`)."""
    t0 = time.perf_counter()
    info, base_data, pattern, text = read_base(stored, path, below, min_seen)
    n = len(base_data.tokens)
    raw_bytes = len(text.encode("utf-8"))
    blocks = cut_blocks(text)
    del text
    if len(blocks) < 2 * EIGHTHS:
        raise InputError(
            f"{path} has {len(blocks)} blocks of {BLOCK:,} characters; --fewer needs at least {2 * EIGHTHS} "
            f"(two for each of {EIGHTHS} parts); nothing was written"
        )
    big = train_bpe(path, n + n // MAX_SHARE, pattern, threads)
    if not same_merges(big, base_data):
        raise InputError(
            f"plain BPE {n:,} trained on {path} is not {info.ref}: --budget needs BASE to be byte-level BPE "
            "trained on that file with default options; nothing was written"
        )
    if len([t for t in big.tokens if t.kind != "special"]) < n + n // MAX_SHARE:
        raise InputError(f"{path} has too few pairs for {n + n // MAX_SHARE:,} tokens; nothing was written")
    eighths = [pieces_of(blocks[j::EIGHTHS], pattern, threads) for j in range(EIGHTHS)]
    if folds == "unseen":
        return drop_by_unseen_folds(
            stored,
            info,
            path,
            big,
            blocks,
            eighths,
            raw_bytes,
            pattern,
            margin,
            goal,
            below,
            min_seen,
            threads,
            t0,
            refill,
            rejudge,
        )
    k, steps, traced = fold_search(big, eighths, n, margin, goal, below, min_seen, threads)
    if k == 0:
        raise InputError(
            f"no k from {max(1, n // FINE)} up keeps every fold of {path} within {100 * margin:g}% of plain BPE's "
            "tokens per byte; nothing was written"
        )
    order = pair_judge(traced[k], below, min_seen)
    chosen = next(s for s in steps if s.k == k)
    budget: dict[str, Any] = {
        "rule": "folds",
        "margin": margin,
        "fewer": goal,
        "goal_met": chosen.good(goal),
        "k": k,
        "version": "all",
        "judge": PAIR_JUDGE,
        "split": (
            f"blocks of {BLOCK} characters to a line end dealt into {EIGHTHS} parts; fold q: parts q and "
            f"q + {EIGHTHS // 2} (a quarter) measured, judged on the other {EIGHTHS - 2}"
        ),
        "steps": (
            f"k doubles from N/{COARSE} (at most N/{MAX_SHARE}) until every fold has {goal:g}x fewer residues "
            f"or one is over the margin, then the gap is halved to N/{FINE}: the smallest k found with the goal "
            "met within the margin on every fold, else the largest within it"
        ),
        "check_cost": round(max(chosen.costs), 6),
        "fold_fewer": round(min(chosen.fewer), 3),
        "tried": [s.to_json() for s in steps],
    }
    return folds_version(
        cut_bpe(big, n + k), order, k, stored, path, (raw_bytes, blocks), (below, min_seen), budget, t0
    )


#: The folds rules' judge, as the lineage records it (`pair_judge`).
PAIR_JUDGE = (
    f"most unions of two of {EIGHTHS} parts (blocks in turn) a residue of, per F1 over the parts; ties lowest id"
)


def folds_version(
    whole: TokenizerData,
    order: Sequence[int],
    k: int,
    stored: StoredVersion,
    path: str,
    text: tuple[int, Sequence[list[str]]],
    judged: tuple[float, int],
    budget: dict[str, Any],
    t0: float,
) -> FinishedVersion:
    """The version a folds rule chose: BPE N + k (`whole`, its counts the larger run's, not this
    version's) less the first k of the judge's `order`, every id of BASE kept, recorded with
    `budget` (the rule's own part of the lineage) and the time since `t0`."""
    enough_residues(order, k, whole, path)
    new = removed_version(whole, order[:k], stored, keep_counts=False)
    return descendant(new, stored, removal_details(k, path, text, judged, {"added": k}, budget, t0))


def enough_residues(order: Sequence[int], k: int, whole: TokenizerData, path: str) -> None:
    """The judge's `order` names at least the k residues chosen, else the one line that says so."""
    if len(order) < k:
        raise InputError(
            f"{path} names {len(order):,} residues of BPE {sum(t.kind != 'special' for t in whole.tokens):,}, "
            f"fewer than the k = {k:,} chosen; "
            "nothing was written"
        )


def removal_details(
    k: int,
    path: str,
    text: tuple[int, Sequence[list[str]]],
    judged: tuple[float, int],
    added: dict[str, Any],
    budget: dict[str, Any],
    t0: float,
) -> dict[str, Any]:
    """The lineage's details of a folds rule's version: the k removed, the judge, the text,
    `added` (what the version adds beside them) and `budget` with the time since `t0`."""
    (raw_bytes, blocks), (below, min_seen) = text, judged
    return {
        "removed": k,
        "below": below,
        "min_seen": min_seen,
        "text": {"name": os.path.basename(path), "bytes": raw_bytes, "lines": sum(len(b) for b in blocks)},
        "ids_preserved": True,
        "holes": k,
        **added,
        "budget": {**budget, "seconds": round(time.perf_counter() - t0, 1)},
    }


# --- unseen folds (`--budget PCT --fewer X --folds unseen`): each fold measured by a BPE that never saw it ---

#: The folds rule's measure of a fold: "trained" (res2's rule above: BPE trained on all of T,
#: the fold included) or "unseen" (cross-fitted: BPE trained on T without the fold).
FOLDS = ("trained", "unseen")
#: With unseen folds, k doubles from N / UNSEEN_FROM, then each bound is halved down to N / UNSEEN_FINE.
UNSEEN_FROM = 32
UNSEEN_FINE = 256


@dataclass(frozen=True)
class UnseenFold:
    """Fold q (parts q and q + EIGHTHS/2, a quarter of T) as unseen text: `data` is BPE N + N/4
    trained on the other six parts (each N + k its prefix); the fold's tokens and residues with
    that run's plain BPE N; with a refill, `counts` the six parts' counted pieces."""

    data: TokenizerData
    made_of: dict[int, tuple[int, int]]
    plain_tokens: int
    plain_residues: int
    counts: Any = None


def unseen_fold(
    blocks: Sequence[list[str]],
    eighths: Sequence[Pieces],
    q: int,
    n: int,
    pattern: str,
    below: float,
    min_seen: int,
    threads: int,
    refill: float = 0.0,
) -> UnseenFold:
    half = EIGHTHS // 2
    rest = [j for j in range(len(blocks)) if j % EIGHTHS not in (q, q + half)]
    data = train_bpe(("".join(blocks[j]) for j in rest), n + n // MAX_SHARE, pattern, threads)
    if len([t for t in data.tokens if t.kind != "special"]) < n + n // MAX_SHARE:
        raise InputError(
            f"the text without fold {q} has too few pairs for {n + n // MAX_SHARE:,} tokens; nothing was written"
        )
    made_of = parents(data)
    plain = Tokenizer.from_data(cut_bpe(data, n), "plain")
    held = added([trace(plain, eighths[q], threads), trace(plain, eighths[q + half], threads)])
    counts = counted((blocks[j] for j in rest), pattern, threads) if refill else None
    return UnseenFold(
        data, made_of, held.tokens(set(), made_of), residues_after(held, set(), made_of, below, min_seen), counts
    )


def counted(blocks: Iterator[list[str]], pattern: str, threads: int) -> Any:
    """The counted pieces of `blocks` (what BPE training counts; `_core.Counts`)."""
    counter = _core.Counter.pieces(pattern, threads=threads)
    for b in blocks:
        counter.feed("".join(b).encode("utf-8"))
    counter.end_input()
    return counter.finish()


def measure_unseen(
    folds: Sequence[UnseenFold],
    eighths: Sequence[Pieces],
    n: int,
    k: int,
    below: float,
    min_seen: int,
    threads: int,
    refill: float = 0.0,
    pattern: str = "",
    rejudge: int = 0,
) -> FoldStep:
    """k on each unseen fold: its BPE N + k less the k tokens the judge picks on the six parts it
    was trained on, measured on the fold (never trained on nor judged on) against its plain BPE N.
    With `refill` R: its BPE N + k - r (r = round(R k)) less the k the judge picks on it, then r
    merges learned on the six parts (`refilled_version`), the fold traced through that version;
    with `rejudge`, the refill learned so as to make no residue of the six parts (`refused_refill`),
    each round's count recorded per fold."""
    costs, fewer, rounds = [], [], []
    for q, f in enumerate(folds):
        if refill:
            cost, less, made = refill_measure(f, eighths, q, n, k, below, min_seen, threads, refill, pattern, rejudge)
            rounds.append(tuple(made))
        else:
            tok = Tokenizer.from_data(cut_bpe(f.data, n + k), "candidate")
            traces = [trace(tok, p, threads) for p in eighths]
            cost, less = fold_measure(traces, q, k, f.made_of, f.plain_tokens, f.plain_residues, below, min_seen)
        costs.append(cost)
        fewer.append(less)
    return FoldStep(k, tuple(costs), tuple(fewer), tuple(rounds) if rejudge else ())


def mean_fewer(step: FoldStep) -> float:
    return sum(step.fewer) / len(step.fewer)


def mean_cost(step: FoldStep) -> float:
    return sum(step.costs) / len(step.costs)


def unseen_search(measure: Any, n: int, margin: float, goal: float) -> tuple[int, list[FoldStep], bool]:
    """k by unseen folds, each an estimate of what held-out text of its size sees (their mean
    the estimate used for both). k_hi: the largest k found whose folds' mean cost is within
    `margin` (k doubles from N/UNSEEN_FROM while within it, at most N/MAX_SHARE, then the gap to
    the first k over it is halved down to N/UNSEEN_FINE). k_lo: the smallest k found (at most
    k_hi) whose folds have `goal` times fewer residues on average (halved the same way below
    k_hi). When both exist, k is their midpoint (the same slack to the cost bound and to the
    goal); else k_hi, the goal not met. Returns k, every step tried and whether k meets both.
    """
    tried: dict[int, FoldStep] = {}

    def at(k: int) -> FoldStep:
        if k not in tried:
            tried[k] = measure(k)
        return tried[k]

    kmax, fine = n // MAX_SHARE, max(1, n // UNSEEN_FINE)
    ok, over = 0, kmax + 1
    k = max(1, n // UNSEEN_FROM)
    while k <= kmax:
        if not mean_cost(at(k)) <= margin:
            over = k
            break
        ok = k
        k *= 2
    while over - ok > fine:
        mid = (ok + over) // 2
        if mean_cost(at(mid)) <= margin:
            ok = mid
        else:
            over = mid
    k_hi = ok
    if k_hi == 0:
        return 0, [tried[x] for x in sorted(tried)], False
    if mean_fewer(at(k_hi)) < goal:
        return k_hi, [tried[x] for x in sorted(tried)], False
    below_goal = max([x for x, s in tried.items() if x < k_hi and mean_fewer(s) < goal], default=0)
    reach = min(x for x, s in tried.items() if below_goal < x <= k_hi and mean_fewer(s) >= goal)
    while reach - below_goal > fine:
        mid = (below_goal + reach) // 2
        if mean_fewer(at(mid)) >= goal:
            reach = mid
        else:
            below_goal = mid
    k_lo = reach
    k = (k_lo + k_hi) // 2
    s = at(k)
    if not (mean_cost(s) <= margin and mean_fewer(s) >= goal):  # not monotone there: k_hi, which meets both
        k = k_hi
    return k, [tried[x] for x in sorted(tried)], True


def drop_by_unseen_folds(
    stored: StoredVersion,
    info: Any,
    path: str,
    big: TokenizerData,
    blocks: Sequence[list[str]],
    eighths: Sequence[Pieces],
    raw_bytes: int,
    pattern: str,
    margin: float,
    goal: float,
    below: float,
    min_seen: int,
    threads: int,
    t0: float,
    refill: float = 0.0,
    rejudge: int = 0,
) -> FinishedVersion:
    """`drop_by_folds` with unseen folds: k by `unseen_search`, then BPE N + k on all of T (`big`
    cut) less the k tokens the judge picks on all eight parts; every id of BASE kept. With
    `refill` R, each k is measured and applied as its refilled version (`refilled_version`: BPE
    N + k - r less the k judged, then r merges learned on the text after the removals)."""
    n = len(stored.data().tokens)
    folds = [unseen_fold(blocks, eighths, q, n, pattern, below, min_seen, threads, refill) for q in range(EIGHTHS // 2)]
    k, steps, met = unseen_search(
        lambda kk: measure_unseen(folds, eighths, n, kk, below, min_seen, threads, refill, pattern, rejudge),
        n,
        margin,
        goal,
    )
    if k == 0:
        raise InputError(
            f"no k from {max(1, n // UNSEEN_FINE)} up keeps the unseen folds of {path} on average within "
            f"{100 * margin:g}% of plain BPE's tokens per byte; nothing was written"
        )
    r = refill_size(k, refill)
    whole = cut_bpe(big, n + k - r)
    tok = Tokenizer.from_data(whole, "final")
    order = pair_judge([trace(tok, p, threads) for p in eighths], below, min_seen)
    chosen = next(s for s in steps if s.k == k)
    budget: dict[str, Any] = {
        "rule": "folds",
        "folds": "unseen",
        "margin": margin,
        "fewer": goal,
        "goal_met": met,
        "k": k,
        "version": "all",
        "judge": PAIR_JUDGE,
        "split": (
            f"blocks of {BLOCK} characters to a line end dealt into {EIGHTHS} parts; fold q: parts q and "
            f"q + {EIGHTHS // 2} (a quarter), unseen: BPE N + N/{MAX_SHARE} trained on the other "
            f"{EIGHTHS - 2} parts, judged on them, measured on the fold"
        ),
        "steps": (
            f"k_hi: k doubles from N/{UNSEEN_FROM} (at most N/{MAX_SHARE}) while the folds' mean cost is within "
            f"the margin, then the gap is halved to N/{UNSEEN_FINE}; k_lo: the smallest k found at most k_hi whose "
            f"folds have {goal:g}x fewer residues on average, halved the same way; k = (k_lo + k_hi) // 2 "
            "(k_hi where that misses either); k_hi with the goal not met when no k_lo"
        ),
        "check_cost": round(mean_cost(chosen), 6),
        "worst_cost": round(max(chosen.costs), 6),
        "fold_fewer": round(min(chosen.fewer), 3),
        "mean_fewer": round(mean_fewer(chosen), 3),
        "tried": [s.to_json() for s in steps],
    }
    if refill:
        budget["refill"] = {"share": refill, "r": r, "rule": REFILL}
        if rejudge:
            budget["refill"]["rejudge"] = {"rounds": rejudge, "rule": REJUDGE}
        return refill_version(
            whole,
            order,
            k,
            r,
            counted(iter(blocks), pattern, threads),
            stored,
            path,
            (raw_bytes, blocks),
            (below, min_seen),
            budget,
            t0,
            threads,
            (rejudge, eighths),
        )
    return folds_version(whole, order, k, stored, path, (raw_bytes, blocks), (below, min_seen), budget, t0)


# --- refill (`--refill`): the slots the removals free, learned again after them ---

#: The lineage's description of the refill.
REFILL = (
    "BPE N + k - r (trained on T) less the k judged tokens, removed after its last merge (PickyBPE's removal "
    "event: each occurrence left split into its parents), then r new merges at new ids learned on T as that "
    "version segments it (the ordinary merge loop and tie rule; no new token spells a removed one)"
)


#: `--rejudge` takes at most this many rounds.
MAX_REJUDGE = 8
#: The lineage's description of the rejudge (`--rejudge ROUNDS`).
REJUDGE = (
    "after the refill, the version and the one before it traced on the parts the judge reads; each new token "
    "in more unions of two parts a residue of than before the refill, and each new token made from an older "
    "token whose count of such unions rose, refused; the refill learned again from the removals on with every "
    "token refused so far barred (the next best pairs instead); repeated up to ROUNDS times, stopping at a "
    "round that refuses none"
)


def refilled_version(
    base: TokenizerData,
    gone: Sequence[int],
    counts: Any,
    add: int,
    pattern: str,
    threads: int,
    refused: Sequence[bytes] = (),
) -> TokenizerData:
    """`base` (plain byte-level BPE M, no specials) less `gone` (removal events right after its
    last merge), then up to `add` merges learned on `counts` (T's counted pieces) as that version
    segments them (`_core.extend_bpe`, the base's own merge loop and tie rule): a PickyBPE
    version (algorithms/bpe/picky_model.py) of M - len(gone) + add tokens. Every id of `base`
    stays; the removed ones are holes (kind 'removed'); new tokens take ids M, M + 1, ...

    The new merges see the pair counts after the removals, where BPE M's own last merges were
    counted with the removed tokens still emitted."""
    cut, config, retired = removals_cut(base, gone, pattern)
    return extended(cut, config, counts, add, retired, threads, refused)


def removals_cut(
    base: TokenizerData, gone: Sequence[int], pattern: str
) -> tuple[TokenizerData, PickyConfig, list[int]]:
    """`base` less `gone`, removal events right after its last merge: (the PickyBPE version, its
    config, the removed ids in order), what `refilled_version` learns its refill on."""
    drop = set(gone)
    last = len(base.merges) - 1
    config = PickyConfig(pattern, tuple((last, t) for t in sorted(drop)))
    cut = dataclasses.replace(
        base,
        config=config.to_json(),
        tokens=[
            dataclasses.replace(t, kind=REMOVED, count=None) if t.id in drop else dataclasses.replace(t, count=None)
            for t in base.tokens
        ],
        merges=[dataclasses.replace(m, count=None) for m in base.merges],
        removals=[RemovalRow(e, last, t) for e, t in enumerate(sorted(drop))],
        run=None,
        source=DERIVATION,
    )
    return cut, config, sorted(drop)


def extended(
    cut: TokenizerData,
    config: PickyConfig,
    counts: Any,
    add: int,
    retired: Sequence[int],
    threads: int,
    refused: Sequence[bytes] = (),
) -> TokenizerData:
    """`cut` (a PickyBPE version, `config` its config) with up to `add` merges learned on `counts`
    at new ids, no new token spelling one of `retired` or one of the byte strings `refused`
    (`_core.extend_bpe`)."""
    if add == 0:
        return cut
    encoder = PICKY.compile(cut.content(), config)
    kw: dict[str, Any] = {"refused": list(refused)} if refused else {}
    out = _core.extend_bpe(encoder, counts, add, threads=threads, retired=list(retired), **kw)
    first = out.first_new
    tokens = list(cut.tokens) + [TokenRow(id=first + i, bytes=b, kind="merged") for i, b in enumerate(out.tokens)]
    start = len(cut.merges)
    merges = list(cut.merges) + [
        MergeRow(rank=start + j, left=a, right=b, result=z) for j, (a, b, z, _) in enumerate(out.merges)
    ]
    return dataclasses.replace(cut, tokens=tokens, merges=merges)


def refused_refill(
    base: TokenizerData,
    gone: Sequence[int],
    counts: Any,
    add: int,
    parts: Sequence[Pieces],
    rounds: int,
    judged: tuple[float, int],
    pattern: str,
    threads: int,
) -> tuple[TokenizerData, list[int]]:
    """The refill learned so that it makes no residue of the judge's parts (`--rejudge ROUNDS`):
    `refilled_version(base, gone, counts, add)`, then each round traces it and the version
    before the refill (`add` = 0) on `parts`; a new token in more unions of two parts a residue of
    than before (`pair_votes`), and every new token made from an older token whose votes rose (its
    new merges consumed it), is refused, and the refill is learned again from the removals on
    with every token refused so far barred (`_core.extend_bpe`'s `refused`: the next best pairs
    instead). Stops after `rounds` rounds or at a round that refuses none; with no rounds, the
    plain refill. Returns the version and each round's count of tokens refused."""
    below, min_seen = judged
    start, config, retired = removals_cut(base, gone, pattern)
    v = extended(start, config, counts, add, retired, threads)
    made: list[int] = []
    if not rounds:
        return v, made
    was = pair_votes([trace(Tokenizer.from_data(start, "start"), p, threads) for p in parts], below, min_seen)
    first = len(base.tokens)
    refused: list[bytes] = []
    for _ in range(rounds):
        now = pair_votes([trace(Tokenizer.from_data(v, "refilled"), p, threads) for p in parts], below, min_seen)
        rose = {i for i, c in now.items() if v.tokens[i].kind != REMOVED and c > was.get(i, 0)}
        blamed = sorted(
            {i for i in rose if i >= first}
            | {m.result for m in v.merges if m.result >= first and (m.left in rose or m.right in rose)}
        )
        made.append(len(blamed))
        if not blamed:
            break
        refused += [v.tokens[i].bytes for i in blamed]
        v = extended(start, config, counts, add, retired, threads, refused)
    return v, made


def refill_size(k: int, refill: float) -> int:
    """r, the merges learned again after k removals: round(refill * k), half to even."""
    return round(refill * k)


def refill_measure(
    f: UnseenFold,
    eighths: Sequence[Pieces],
    q: int,
    n: int,
    k: int,
    below: float,
    min_seen: int,
    threads: int,
    refill: float,
    pattern: str,
    rejudge: int = 0,
) -> tuple[float, float, list[int]]:
    """Fold q with a refill: (cost against its plain BPE N, times fewer residues, the count of each
    rejudge round), the version judged and refilled (and rejudged) on the six parts only, the fold
    traced through the version itself."""
    half = EIGHTHS // 2
    r = refill_size(k, refill)
    base = cut_bpe(f.data, n + k - r)
    tok = Tokenizer.from_data(base, "candidate")
    six = [p for j, p in enumerate(eighths) if j % half != q]
    order = pair_judge([trace(tok, p, threads) for p in six], below, min_seen)
    if len(order) < k:
        return float("inf"), 0.0, []
    refilled, made = refused_refill(base, order[:k], f.counts, r, six, rejudge, (below, min_seen), pattern, threads)
    if sum(t.kind != "removed" for t in refilled.tokens) != n:  # too few pairs left: no version of N tokens
        return float("inf"), 0.0, made
    version = Tokenizer.from_data(refilled, "refilled")
    held = added([trace(version, eighths[q], threads), trace(version, eighths[q + half], threads)])
    left = len(held.residues(below, min_seen))
    tokens = sum(held.emitted)
    return tokens / f.plain_tokens - 1, f.plain_residues / left if left else float(f.plain_residues or 1), made


def refill_version(
    whole: TokenizerData,
    order: Sequence[int],
    k: int,
    r: int,
    counts: Any,
    stored: StoredVersion,
    path: str,
    text: tuple[int, Sequence[list[str]]],
    judged: tuple[float, int],
    budget: dict[str, Any],
    t0: float,
    threads: int,
    rejudge: tuple[int, Sequence[Pieces]] = (0, ()),
) -> FinishedVersion:
    """`folds_version` for a refill: BPE N + k - r (`whole`) less the first k of `order`, then r
    merges learned on T (`counts`), a PickyBPE version of N tokens; every id of BASE kept. With
    `rejudge` (rounds, T's eight parts), the refill learned so as to make no residue of the parts
    (`refused_refill`), each round's count recorded in `budget`."""
    enough_residues(order, k, whole, path)
    cfg = stored.info.config
    pattern = str(cfg["pattern"])
    rounds, parts = rejudge
    new, refused = refused_refill(whole, order[:k], counts, r, parts, rounds, judged, pattern, threads)
    if rounds:
        budget["refill"]["rejudge"]["refused"] = refused
    new = dataclasses.replace(new, config={**new.config, **{key: v for key, v in cfg.items() if key in template.KEYS}})
    made = sum(t.kind != "removed" for t in new.tokens)
    n = len(stored.data().tokens)
    if made != n:
        raise InputError(f"{path} has too few pairs to learn {r:,} merges after the removals; nothing was written")
    added = {
        "added": len(new.tokens) - len(stored.data().tokens),
        "refilled": len(new.tokens) - len(whole.tokens),
        "vocab_size": made,
    }
    return descendant(new, stored, removal_details(k, path, text, judged, added, budget, t0))
