"""Training Unigram LM (SentencePiece style). Text is a stream in which spaces become ▁ (U+2581)
and each line starts with a dummy ▁; lines are cut into ▁-words, counted in parallel, and the
Rust core runs the trainer: a seed vocabulary of frequent substrings, EM over piece
log-probabilities, and pruning of the pieces whose removal costs least likelihood (keeping
`shrinking_factor` of them per round, never a single character) down to `vocab_size`.

The trainer has revisions (`TRAINER_REVISION`; src/unigram/trainer.rs says what each does).
A run records its revision in its options, so `tokreg reproduce` retrains it the same way; a
run recorded before the field existed was revision 1's (`UnigramOptions.from_json`).
Revision 2 counts each line's last word with a mark (the counting spec's `line_ends`), which
the seed search reads as SentencePiece reads a line's end.

Ids (SentencePiece's layout): the unknown piece 0, then the control pieces (--special), then
the 256 byte pieces `<0x00>`..`<0xFF>` with --byte-fallback, then the learned pieces by score
descending, ties by UTF-8 bytes. Every EM / prune round is recorded (vocab size, log-likelihood).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...data import RoundRow, TokenizerData, TokenRow
from ...errors import InputError, VocabularySizeError
from .. import sentencepiece_text
from ..interfaces import Trainer
from ..options import Progress, TrainOptions, flag
from ..sentencepiece_text import SpNormalizerConfig
from .model import UnigramConfig

# 2: a word's end no longer counts as a branch point when choosing seed pieces (tokreg 0.1.0 after
# issue 24); 3: SentencePiece 0.2's seed rule (by bytes) and loop (src/unigram/trainer.rs); runs
# recorded without `trainer_revision` were trained by revision 1.
TRAINER_REVISION = 3


@dataclass(frozen=True)
class UnigramOptions(TrainOptions):
    """Options of a Unigram training run (`--algo unigram`)."""

    run_name = "unigram"

    vocab_size: int
    # spm_train's options, with its meaning; the defaults are spm_train's except where the help
    # says why not (tokreg's defaults keep the text lossless, and runs recorded before these
    # options existed reproduce with the same hash).
    unicode_normalization: str = flag(
        "identity",
        name="--normalization",
        choices=sentencepiece_text.RULES,
        help="SentencePiece's normalization rule (spm_train --normalization_rule_name): nmt_nfkc (spm_train's "
        "default: NFKC plus whitespace and control-character cleanup), nfkc, nmt_nfkc_cf / nfkc_cf (plus case "
        "folding), identity (none; tokreg's default, so that text decodes back as it was).",
    )
    byte_fallback: bool = flag(
        True,
        name="--byte-fallback/--no-byte-fallback",
        help="Add the 256 <0xNN> byte pieces, so nothing is unknown: a newline, a tab or a character the corpus "
        "lacks decodes back as it was. On by default in tokreg, off in spm_train: --no-byte-fallback gives "
        "spm_train's vocabulary, where they become <unk>.",
    )
    shrinking_factor: float = flag(0.75, help="Fraction of pieces kept per prune round.")
    max_piece_length: int = flag(16, metavar="N", help="Longest piece, in characters.")
    split_by_unicode_script: bool = flag(
        True,
        name="--split-by-unicode-script/--no-split-by-unicode-script",
        help="No piece mixes Unicode scripts (Hiragana and Katakana count as Han).",
    )
    split_by_number: bool = flag(
        True, name="--split-by-number/--no-split-by-number", help="Digits are a script of their own."
    )
    split_by_whitespace: bool = flag(
        True,
        name="--split-by-whitespace/--no-split-by-whitespace",
        help="Pieces only start with ▁; off: ▁ may sit inside a piece (whole lines are trained on).",
    )
    split_digits: bool = flag(False, help="Every digit is a piece of its own.")
    character_coverage: float = flag(
        1.0,
        metavar="F",
        help="Fraction of the characters' occurrences that single-character pieces must cover; rarer "
        "characters become unknown (or bytes). spm_train's default is 0.9995; tokreg's keeps every character.",
    )
    seed_size: int = 1_000_000
    em_iterations: int = 2
    # The trainer's revision (src/unigram/trainer.rs, "Revisions"): new runs record the current
    # one; a run recorded before the field existed was trained by revision 1 and reproduces so.
    trainer_revision: int = TRAINER_REVISION
    unk_token: str = flag("<unk>", metavar="T", help="Unknown token.")
    special: tuple[str, ...] = ()  # control pieces, e.g. <s> </s>; never matched in text
    template: Optional[str] = None  # "[CLS] $A [SEP]": what add_special_tokens=True adds (template.py)
    control_symbols: str = flag(
        "", metavar="A,B", help="Comma-separated control pieces (never matched in text), after --special."
    )
    user_defined_symbols: str = flag(
        "", metavar="A,B", help="Comma-separated pieces always matched whole, and never normalized."
    )
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = flag(
        False,
        name="--remove-extra-whitespaces",
        help="Strip spaces at both ends and collapse runs of spaces, as spm_train does by default (lossy, hence "
        "off by default).",
    )
    threads: int = 0
    memory_limit: Optional[int] = None  # bytes; None: the machine's default (training/budget.py)
    max_piece_bytes: int = 0  # words longer than this are cut when counting (0: no limit)
    sample_bytes: int = 0  # read only about this many bytes of text (0: all)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> UnigramOptions:
        """Recorded options; a run from before `trainer_revision` existed was revision 1's."""
        return super().from_json({"trainer_revision": 1, **d})

    def spm_train_options(self) -> dict[str, Any]:
        """The keyword arguments of `sentencepiece.SentencePieceTrainer.train` that train
        SentencePiece's Unigram with these options' meaning (for comparing the two trainers;
        add `input`, `model_prefix` and `num_threads`). spm_train skips lines over 4,192 bytes
        by default, tokreg trains on every line: lines up to 1 MB are asked for."""
        return {
            "model_type": "unigram",
            "vocab_size": self.vocab_size,
            "normalization_rule_name": self.unicode_normalization,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "add_dummy_prefix": self.add_dummy_prefix,
            "character_coverage": self.character_coverage,
            "byte_fallback": self.byte_fallback,
            "split_by_unicode_script": self.split_by_unicode_script,
            "split_by_number": self.split_by_number,
            "split_by_whitespace": self.split_by_whitespace,
            "split_digits": self.split_digits,
            "max_sentencepiece_length": self.max_piece_length,
            "seed_sentencepiece_size": self.seed_size,
            "shrinking_factor": self.shrinking_factor,
            "num_sub_iterations": self.em_iterations,
            "unk_piece": self.unk_token,
            "control_symbols": self.controls(),
            "user_defined_symbols": self.user_defined(),
            "max_sentence_length": 1 << 20,
            "bos_id": -1,
            "eos_id": -1,
        }

    def controls(self) -> list[str]:
        return [*self.special, *_symbols(self.control_symbols)]

    def user_defined(self) -> list[str]:
        return _symbols(self.user_defined_symbols)

    def normalizer(self) -> SpNormalizerConfig:
        return SpNormalizerConfig(
            add_dummy_prefix=self.add_dummy_prefix,
            remove_extra_whitespaces=self.remove_extra_whitespaces,
            name=self.unicode_normalization,
            charsmap=sentencepiece_text.builtin_charsmap(self.unicode_normalization),
        )

    def config(self) -> UnigramConfig:
        return UnigramConfig(normalizer=self.normalizer(), byte_fallback=self.byte_fallback, unk_token=self.unk_token)


def _symbols(text: str) -> list[str]:
    return [s for s in text.split(",") if s]


class UnigramTrainer(Trainer):
    options_type = UnigramOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, UnigramOptions)
        options.check_common()
        if not 0.0 < options.shrinking_factor < 1.0:
            raise InputError(f"--shrinking-factor {options.shrinking_factor} must be between 0 and 1 (e.g. 0.75)")
        if options.unicode_normalization not in sentencepiece_text.RULES:
            raise InputError(
                f"--normalization {options.unicode_normalization!r} is not a SentencePiece rule; "
                f"choose one of {', '.join(sentencepiece_text.RULES)}"
            )
        if not 0.0 < options.character_coverage <= 1.0:
            raise InputError(f"--character-coverage {options.character_coverage} must be above 0 and at most 1")
        if options.trainer_revision not in range(1, TRAINER_REVISION + 1):
            raise InputError(
                f"Unigram trainer revision {options.trainer_revision} is not known to this tokreg "
                f"(it has 1 to {TRAINER_REVISION}); upgrade tokreg"
            )
        if options.max_piece_length < 1:
            raise InputError(f"--max-piece-length {options.max_piece_length} must be at least 1")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, UnigramOptions)
        normalizer: dict[str, Any] = {
            "add_dummy_prefix": options.add_dummy_prefix,
            "remove_extra_whitespaces": options.remove_extra_whitespaces,
        }
        # Only when used, so that counts files of earlier runs keep their spec.
        rules = options.normalizer().to_json()
        if "charsmap" in rules:
            normalizer["charsmap"] = rules["charsmap"]
        if options.user_defined() and "charsmap" in rules:
            normalizer["user_defined"] = options.user_defined()
        spec: dict[str, Any] = {"splitting": "sentencepiece", "normalizer": normalizer}
        if not options.split_by_whitespace:
            spec["split_by_whitespace"] = False
        if options.trainer_revision >= 2:
            spec["line_ends"] = True  # each line's last word is marked (src/unigram/corpus.rs)
        return {**spec, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return "Unigram trains on UTF-8 text; convert the file to UTF-8"

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """Trains to the smallest size; each larger one is finalized at the first pruning round
        that reaches its own target (1.1 x its size, as SentencePiece), exactly as a run to that
        size alone would be, with the rounds up to it."""
        assert isinstance(options, UnigramOptions)
        opts = options
        try:
            out = _core.train_unigram(
                counts,
                max(sizes),
                byte_fallback=opts.byte_fallback,
                shrinking_factor=opts.shrinking_factor,
                max_piece_length=opts.max_piece_length,
                seed_size=opts.seed_size,
                em_iterations=opts.em_iterations,
                unk_piece=opts.unk_token,
                control_pieces=opts.controls(),
                user_defined=opts.user_defined(),
                character_coverage=opts.character_coverage,
                split=(opts.split_by_unicode_script, opts.split_by_number, opts.split_by_whitespace, opts.split_digits),
                snapshots=[s for s in sizes if s != max(sizes)],
                revision=opts.trainer_revision,
                threads=opts.threads,
                progress=progress,
            )
        except VocabularySizeError as e:
            raise InputError(f"--vocab-size {e.requested}: {e}") from None
        rounds = [RoundRow(round=r, phase="em", vocab_size=n, log_likelihood=ll) for r, n, ll in out.rounds]
        by_size = {size: (pieces, n) for size, pieces, n in out.sized}
        by_size[max(sizes)] = (out.pieces, len(rounds))
        config = opts.config().to_json()
        datas = []
        for size in sizes:
            pieces, n_rounds = by_size[size]
            tokens = [
                TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, score=score)
                for i, (text, score, kind) in enumerate(pieces)
            ]
            datas.append(TokenizerData(algorithm="unigram", config=config, tokens=tokens, rounds=rounds[:n_rounds]))
        return datas, {"train_seconds": out.train_seconds, "distinct_pieces": out.distinct_words}


TRAINER = UnigramTrainer()
