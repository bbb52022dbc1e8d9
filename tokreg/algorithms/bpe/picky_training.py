"""Training PickyBPE (`--algo picky`; Chizhov et al., arXiv 2409.04599): byte-level BPE over the
pieces of the pattern whose merge loop, after each merge, removes a part of the pair whose
Intersection over Self IoS(x) = f(pair) / f(x) is above the threshold tau, splitting its
occurrences back into its parents (src/bpe/picky_train.rs). A removal frees a vocabulary slot.

Its residue rule (`residue_below` R > 0): LiteToken's intermediate merge residues (arXiv
2602.04706) judged on the training words during the run. A token whose F1 / (F1 + F2) falls
below R (seen at least `residue_min_seen` times) stays a merge step; the run makes merges until
the vocabulary, less the residues whose F1 is within `residue_cost` K times the last merge's
count (Scaffold-BPE's budget, arXiv 2404.17808), holds the size asked; then the cheapest
residues (fewest F1, then lowest id) leave, one removal event each after the last merge.

Token ids: the tokens in the final vocabulary (the 256 bytes, then merged tokens in the order
they were made), then special tokens, then the tokens removed for good (kind `removed`, never
emitted; the merges and removals name them). Each removal is recorded (`removals` table, rank of
the merge it follows, IoS, count) and its (rank, id) in the version's config.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core, patterns
from ...data import MergeRow, RemovalRow, TokenizerData, TokenRow
from ...errors import InputError
from ..interfaces import Trainer
from ..options import Progress, TrainOptions, below_alphabet, flag
from .pattern_options import PatternOptions
from .picky_model import PAPER, REMOVED, RESIDUES, SCAFFOLD, PickyConfig

#: The authors' default and the paper's most used tau.
DEFAULT_THRESHOLD = 0.9
#: `--residue-below` judges a token formed at least this many times (as `audit --residues`).
DEFAULT_RESIDUE_MIN_SEEN = 10
#: A residue leaves while it costs no more than the merge its slot buys back.
DEFAULT_RESIDUE_COST = 1.0


@dataclass(frozen=True)
class PickyOptions(PatternOptions):
    """Options of a PickyBPE run (`--algo picky`)."""

    run_name = "picky"

    vocab_size: int
    pattern: str = flag(
        "", metavar="NAME|REGEX", help="Pre-tokenizer: gpt2, cl100k, o200k or a regex [default: cl100k]."
    )
    threshold: float = flag(
        DEFAULT_THRESHOLD,
        metavar="TAU",
        help=f"The IoS threshold tau of {PAPER}: after each merge, a part of the pair with "
        "f(pair) / f(part) above TAU is removed and split back into its parents.",
    )
    residue_below: float = flag(
        0.0,
        metavar="R",
        help=f"The residue rule (0: off): a token whose ratio F1/(F1+F2) on the training text "
        f"({RESIDUES}; F1 its occurrences left, F2 all it lost to merges and removals) falls "
        "below R stays a merge step but leaves the vocabulary when cheap enough (see "
        f"--residue-cost), its slot going to another merge ({SCAFFOLD}).",
    )
    residue_min_seen: int = flag(
        DEFAULT_RESIDUE_MIN_SEEN, metavar="N", help="The residue rule judges a token once F1+F2 reaches N."
    )
    residue_cost: float = flag(
        DEFAULT_RESIDUE_COST,
        metavar="K",
        help="The residue rule's budget: a residue leaves while its F1 is at most K times the "
        "count of the last merge (what its slot buys back); 1 keeps compression level with BPE, "
        "larger removes more residues and costs tokens.",
    )
    max_token_length: int = flag(0, metavar="N", help="Never learn a token longer than N bytes (0: no limit).")
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    template: Optional[str] = None
    threads: int = 0
    memory_limit: Optional[int] = None
    max_piece_bytes: int = 0
    sample_bytes: int = 0


class PickyTrainer(Trainer):
    options_type = PickyOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, PickyOptions)
        opts = options
        opts.check_common()
        specials = len(dict.fromkeys(opts.special))
        if len(sizes) > 1:
            raise InputError("--algo picky trains one --vocab-size per run (removals differ by size; run it per size)")
        if min(sizes) < 256 + specials:
            raise below_alphabet(min(sizes), f"PickyBPE needs at least {256 + specials} (256 bytes + specials)")
        if opts.threshold <= 0:
            raise InputError(f"--threshold must be above 0 (the paper's runs: 0.6 to 0.9), not {opts.threshold}")
        if not 0 <= opts.residue_below <= 1:
            raise InputError(f"--residue-below must be a ratio from 0 (off) to 1 (e.g. 0.1), not {opts.residue_below}")
        if not opts.residue_cost >= 0:
            raise InputError(f"--residue-cost must be at least 0 (e.g. 1), not {opts.residue_cost}")
        if opts.residue_min_seen < 1:
            raise InputError(f"--residue-min-seen must be at least 1, not {opts.residue_min_seen}")
        if patterns.resolve(opts.pattern_or_default())[0] == "whitespace":
            raise InputError("PickyBPE here is byte-level: choose gpt2, cl100k, o200k or a regex for --pattern")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, PickyOptions)
        _, regex = patterns.resolve(options.pattern_or_default())
        return {"splitting": "pieces", "pattern": regex, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return None

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        assert isinstance(options, PickyOptions)
        opts = options
        specials = list(dict.fromkeys(opts.special))
        pattern_name, regex = patterns.resolve(opts.pattern_or_default())
        tokens, present, token_counts, merges, removals, seconds = _core.train_picky(
            counts,
            sizes[0] - len(specials),
            opts.threshold,
            min_frequency=opts.min_frequency,
            max_token_bytes=opts.max_token_length,
            residue_below=opts.residue_below,
            residue_min_seen=opts.residue_min_seen,
            residue_cost=opts.residue_cost,
            progress=progress,
        )
        data = picky_data(tokens, present, token_counts, merges, removals, specials)
        residue_rule = (
            (float(opts.residue_below), opts.residue_min_seen, float(opts.residue_cost)) if opts.residue_below else None
        )
        data.config = PickyConfig(
            regex, tuple((r.after, r.token_id) for r in data.removals), float(opts.threshold), residue_rule
        ).to_json()
        info = {
            "train_seconds": seconds,
            "distinct_pieces": len(counts),
            "extra_config": {"pattern_name": pattern_name},
        }
        return [data], info


def picky_data(
    tokens: Sequence[bytes],
    present: Sequence[bool],
    token_counts: Sequence[int],
    merges: Sequence[tuple[int, int, int, int]],
    removals: Sequence[tuple[int, int, Optional[float], int, float]],
    specials: Sequence[str],
) -> TokenizerData:
    """The version of a run, its ids renumbered: kept tokens in the order made, specials, then
    the removed ones (config left for the caller)."""
    kept = [i for i in range(len(tokens)) if present[i]]
    gone = [i for i in range(len(tokens)) if not present[i]]
    new_id = {old: new for new, old in enumerate(kept)}
    new_id.update({old: len(kept) + len(specials) + k for k, old in enumerate(gone)})
    rows = [TokenRow(new_id[i], tokens[i], "byte" if i < 256 else "merged", token_counts[i]) for i in kept]
    rows += [TokenRow(len(kept) + k, s.encode("utf-8"), "special") for k, s in enumerate(specials)]
    rows += [TokenRow(new_id[i], tokens[i], REMOVED, 0) for i in gone]
    return TokenizerData(
        algorithm="bpe",
        config={},
        tokens=rows,
        merges=[
            MergeRow(rank=r, left=new_id[a], right=new_id[b], result=new_id[z], count=c)
            for r, (a, b, z, c) in enumerate(merges)
        ],
        removals=[RemovalRow(k, after, new_id[t], ios, c) for k, (after, t, ios, c, _) in enumerate(removals)],
    )


TRAINER = PickyTrainer()
