"""Training WordPiece over words counted after BERT normalization and pre-tokenization
(`wordpiece::train` in the core), merging the pair the objective ranks highest:

- `frequency` (the default): the pair's count, as Hugging Face's `WordPieceTrainer`;
- `likelihood`: the gain in the corpus' log-likelihood under a unigram model of the current
  symbols (Schuster & Nakajima 2012, Google's WordPiece; the formula is in the core's
  src/wordpiece/trainer.rs);
- `ratio`: count(ab) / (count(a) * count(b)), tokreg's only ranking before `--objective`
  existed; a run recorded without an objective reproduces with it.

The default is the one that compresses held-out text best (docs/benchmarks.md, "WordPiece
objectives": frequency, level with HF's trainer in English, German and Chinese).

Ids: special tokens first (the unknown token, then --special in order), then the alphabet, then
merge results in the order learned. Under `frequency` and `likelihood` the alphabet is HF's:
every character bare by code point, then the `##` continuation characters by code point (HF adds
those in hash-map order, which changes from run to run); under `ratio` it is the characters and
continuation characters seen, sorted by UTF-8 bytes. Ties: `frequency` and `likelihood` (after
a higher count) take the smaller left id, then the smaller right id, as HF does; `ratio` takes
the higher pair count, then the smaller left token's bytes, then the smaller right token's bytes.
Every merge records its score (the objective's value) and the three counts behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ..interfaces import Trainer
from ..options import Progress, TrainOptions, below_alphabet, flag
from .model import FORMS, BertNormalizerConfig, WordPieceConfig

#: What `--objective` offers (the core's `wordpiece::Objective`; formulas and tie rules above).
OBJECTIVES = ("frequency", "likelihood", "ratio")
#: The objective that compresses held-out text best (docs/benchmarks.md, "WordPiece objectives").
DEFAULT_OBJECTIVE = "frequency"
#: What runs recorded without an objective ranked by.
LEGACY_OBJECTIVE = "ratio"


@dataclass(frozen=True)
class WordPieceOptions(TrainOptions):
    """Options of a WordPiece training run (`--algo wordpiece`)."""

    run_name = "wordpiece"

    vocab_size: int
    objective: str = flag(
        DEFAULT_OBJECTIVE,
        choices=OBJECTIVES,
        help="What a merge maximises: frequency (the pair's count, as Hugging Face's WordPieceTrainer), "
        "likelihood (the gain in corpus log-likelihood, Google's WordPiece) or ratio "
        "(count(ab) / (count(a) * count(b)), tokreg's only choice before this option).",
    )
    lowercase: bool = flag(False, help="Lowercase the text (uncased BERT).")
    strip_accents: Optional[bool] = flag(
        None, name="--strip-accents/--keep-accents", help="Remove accents [default: when --lowercase, as BERT does]."
    )
    unicode_normalization: str = flag(
        "none", name="--normalization", choices=FORMS, help="Unicode normalization before the BERT steps."
    )
    clean_text: bool = True
    handle_chinese_chars: bool = True
    continuing_prefix: str = flag("##", name="--prefix", metavar="P", help="Continuation prefix.")
    unk_token: str = flag("[UNK]", metavar="T", help="Unknown token.")
    special: tuple[str, ...] = ()  # e.g. [CLS] [SEP] [PAD] [MASK]
    template: Optional[str] = None  # "[CLS] $A [SEP]": what add_special_tokens=True adds (template.py)
    min_frequency: int = 0
    limit_alphabet: Optional[int] = flag(None, metavar="N", help="Keep only the N most frequent characters.")
    max_input_chars_per_word: int = flag(
        100, name="--max-word-chars", metavar="N", help="Longer words encode as the unknown token."
    )
    max_token_length: int = flag(
        0, metavar="N", help="Never learn a token longer than N characters, prefix not counted (0: no limit)."
    )
    threads: int = 0
    memory_limit: Optional[int] = None  # bytes; None: the machine's default (training/budget.py)
    max_piece_bytes: int = 0  # words longer than this are cut when counting (0: no limit)
    sample_bytes: int = 0  # read only about this many bytes of text (0: all)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WordPieceOptions:
        # Runs recorded before there was a choice ranked merges by ratio; they reproduce so.
        return super().from_json({"objective": LEGACY_OBJECTIVE, **d})

    def config(self) -> WordPieceConfig:
        """The encoding config these options give a trained (or vocab.txt-imported) version."""
        form = None if self.unicode_normalization == "none" else self.unicode_normalization
        return WordPieceConfig(
            normalizer=BertNormalizerConfig(
                self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase, form
            ),
            continuing_prefix=self.continuing_prefix,
            unk_token=self.unk_token,
            max_input_chars_per_word=self.max_input_chars_per_word,
        )


class WordPieceTrainer(Trainer):
    options_type = WordPieceOptions

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, WordPieceOptions)
        opts = options
        opts.check_common()
        if opts.objective not in OBJECTIVES:
            raise InputError(f"--objective {opts.objective!r} is not one of {', '.join(OBJECTIVES)}")
        if opts.unicode_normalization not in FORMS:
            raise InputError(f"--normalization {opts.unicode_normalization!r} is not one of {', '.join(FORMS)}")
        if not opts.continuing_prefix:
            raise InputError("--prefix must not be empty (BERT uses '##')")
        specials = list(dict.fromkeys([opts.unk_token, *opts.special]))
        if min(sizes) <= len(specials):
            raise InputError(f"--vocab-size {min(sizes)} leaves no room beside {len(specials)} special tokens")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, WordPieceOptions)
        normalizer = options.config().normalizer.to_json()
        return {"splitting": "bert", "normalizer": normalizer, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return "WordPiece trains on UTF-8 text; convert the file to UTF-8"

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """Trains to the largest size; each smaller one is a prefix of it (tokens in id order
        up to its size, and the merges that made them), which is what training to that size
        alone gives."""
        assert isinstance(options, WordPieceOptions)
        opts = options
        specials = list(dict.fromkeys([opts.unk_token, *opts.special]))
        out = _core.train_wordpiece(
            counts,
            max(sizes),
            specials,
            continuing_prefix=opts.continuing_prefix,
            min_frequency=opts.min_frequency,
            limit_alphabet=opts.limit_alphabet,
            max_token_len=opts.max_token_length or None,
            threads=opts.threads,
            progress=progress,
            objective=opts.objective,
        )
        merges_out = out.merges  # each read of a result's list makes it anew: once
        merged = {m[2] for m in merges_out}
        tokens = []
        for i, (text, count) in enumerate(out.tokens):
            kind = "special" if i < len(specials) else "merged" if i in merged else "char"
            tokens.append(
                TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, count=count if kind != "special" else None)
            )
        if len(tokens) - len(specials) == 0:
            raise InputError("the corpus has no words after normalization; give files that contain text")
        alphabet = sum(1 for t in tokens if t.kind == "char")
        if len(specials) + alphabet > min(sizes):
            raise below_alphabet(
                min(sizes),
                f"the corpus has {alphabet:,} characters and continuation characters "
                f"(+ {len(specials)} special tokens)",
                "raise --vocab-size or keep fewer characters with --limit-alphabet",
            )
        merges = [
            MergeRow(rank=k, left=a, right=b, result=z, count=pc, score=sc, left_count=lc, right_count=rc)
            for k, (a, b, z, sc, pc, lc, rc) in enumerate(merges_out)
        ]
        config = opts.config().to_json()
        datas = []
        for size in sizes:
            n_merges = len(merges)
            if size < len(tokens):
                # The merges up to the one that made token `size - 1`: where a run to `size` stops.
                n_merges = next(k + 1 for k, m in enumerate(merges) if m.result == size - 1)
            datas.append(
                TokenizerData(algorithm="wordpiece", config=config, tokens=tokens[:size], merges=merges[:n_merges])
            )
        return datas, {"train_seconds": out.merge_seconds, "distinct_pieces": out.distinct_words}


TRAINER = WordPieceTrainer()
