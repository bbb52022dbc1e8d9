"""Training superword BPE (`--algo superbpe`; SuperBPE, Liu et al., arXiv 2503.13423): byte-level
BPE within the pieces of the pattern up to the transition point t (stage 1), then merges across
the pieces of runs of up to `max_words` pieces (stage 2). The corpus is counted as runs, not kept
as documents ("Faster Superword Tokenization", Tanner et al., arXiv 2604.05192); both stages run
in the Rust core (src/bpe/superword_train.rs).

Token ids: the 256 bytes, stage 1's tokens, stage 2's, then special tokens. Each merge is
recorded with its stage (1 or 2, `merges.stage`), the version's config with t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core, patterns
from ...data import TokenizerData
from ...errors import InputError
from ..interfaces import Trainer
from ..options import Progress, TrainOptions, below_alphabet, flag
from .pattern_options import PatternOptions
from .superword_model import PAPER, SuperwordConfig
from .training import merge_rows, sized_datas

#: The paper's best transition point was t = 180k of 200k: 90% of the vocabulary.
DEFAULT_SHARE = 0.9


@dataclass(frozen=True)
class SuperwordOptions(PatternOptions):
    """Options of a superword BPE run (`--algo superbpe`)."""

    run_name = "superbpe"

    vocab_size: int
    pattern: str = flag(
        "", metavar="NAME|REGEX", help="Stage 1's pre-tokenizer: gpt2, cl100k, o200k or a regex [default: cl100k]."
    )
    transition: int = flag(
        0,
        metavar="T",
        help=f"The transition point t of {PAPER}: stage 1 learns ordinary tokens up to T tokens, stage 2 "
        "then merges across spaces (0: 90% of the smallest --vocab-size).",
    )
    max_words: int = flag(
        4,
        metavar="K",
        help="Stage 2 merges within runs of up to K pre-tokens (cut left to right; a line break is a run of its own).",
    )
    max_token_length: int = flag(0, metavar="N", help="Never learn a token longer than N bytes (0: no limit).")
    min_frequency: int = 0
    special: tuple[str, ...] = ()
    template: Optional[str] = None
    threads: int = 0
    memory_limit: Optional[int] = None
    max_piece_bytes: int = 0
    sample_bytes: int = 0

    def transition_for(self, sizes: Sequence[int]) -> int:
        """t in tokens (the 256 bytes and stage 1's), the special tokens left out."""
        specials = len(dict.fromkeys(self.special))
        return self.transition - specials if self.transition else int((min(sizes) - specials) * DEFAULT_SHARE)


class SuperwordTrainer(Trainer):
    options_type = SuperwordOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, SuperwordOptions)
        opts = options
        opts.check_common()
        specials = len(dict.fromkeys(opts.special))
        if min(sizes) < 256 + specials:
            raise below_alphabet(min(sizes), f"superword BPE needs at least {256 + specials} (256 bytes + specials)")
        if opts.max_words < 1:
            raise InputError(f"--max-words must be at least 1, not {opts.max_words}")
        if opts.max_piece_bytes:
            raise InputError("--max-piece-bytes does not apply to --algo superbpe (it counts runs of pieces whole)")
        if opts.transition and not 256 + specials <= opts.transition <= min(sizes):
            raise InputError(
                f"--transition {opts.transition} must lie between {256 + specials} and the smallest --vocab-size "
                f"({min(sizes)})"
            )
        if patterns.resolve(opts.pattern_or_default())[0] == "whitespace":
            raise InputError("superword BPE is byte-level: choose gpt2, cl100k, o200k or a regex for --pattern")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        """Runs of up to `max_words` pieces of the pattern."""
        assert isinstance(options, SuperwordOptions)
        _, regex = patterns.resolve(options.pattern_or_default())
        return {"splitting": "superword", "pattern": regex, "max_words": options.max_words}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return None

    def encodes_by_pieces(self, options: TrainOptions) -> bool:
        """A line is encoded run by run, each run as counted (its pieces by stage 1, then stage
        2 over the run): the counted runs stand for the lines in the round trip."""
        return True

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        assert isinstance(options, SuperwordOptions)
        opts = options
        specials = list(dict.fromkeys(opts.special))
        pattern_name, regex = patterns.resolve(opts.pattern_or_default())
        out, transition, stage1, runs = _core.train_superword(
            counts,
            regex,
            max(sizes) - len(specials),
            opts.transition_for(sizes),
            min_frequency=opts.min_frequency,
            max_token_bytes=opts.max_token_length,
            snapshots=[s - len(specials) for s in sizes],
            threads=opts.threads,
            progress=progress,
        )
        config = SuperwordConfig(regex, transition, stage1, opts.max_words).to_json()
        learned = out.merges  # a getter: converted anew on each read
        merges = merge_rows(learned, stage=[1] * min(stage1, len(learned)) + [2] * max(0, len(learned) - stage1))
        datas = sized_datas(out, "byte", specials, config, merges)
        info = {
            "train_seconds": out.merge_seconds,
            "distinct_pieces": out.distinct_pieces,
            "distinct_runs": runs,
            "extra_config": {"pattern_name": pattern_name},
        }
        return datas, info


TRAINER = SuperwordTrainer()
