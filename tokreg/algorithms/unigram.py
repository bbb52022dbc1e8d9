"""Unigram LM (SentencePiece style). Text is a stream in which spaces become ▁ (U+2581) and each
line starts with a dummy ▁; lines are cut into ▁-words, counted in parallel, and the Rust core
runs the trainer: a seed vocabulary of frequent substrings, EM over piece log-probabilities,
and pruning of the pieces whose removal costs least likelihood (keeping `shrinking_factor` of
them per round, never a single character) down to `vocab_size`. Encoding is the Viterbi best
path over a trie lattice with SentencePiece's exact rules (`_core.Encoder.unigram`); n-best and
sampling give subword regularization.

Ids (SentencePiece's layout): the unknown piece 0, then the control pieces (--special), then
the 256 byte pieces `<0x00>`..`<0xFF>` with --byte-fallback, then the learned pieces by score
descending, ties by UTF-8 bytes. Every piece keeps its log probability as its score; every
EM / prune round is recorded (vocab size, log-likelihood).

Config (hashed): {"normalizer": {...} (sp_text.py), "byte_fallback", "unk_token"}.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core
from ..data import RoundRow, TokenizerData, TokenRow
from ..errors import InputError, VocabularySizeError
from ..formats import hf_json
from ..formats.sentencepiece_proto import Model as SpModel
from . import sp_text, template
from .base import Algorithm, exact_keys
from .sp_text import SpNormalizerConfig
from .training import Progress, TrainOptions, flag


@dataclass(frozen=True)
class UnigramConfig:
    normalizer: SpNormalizerConfig
    byte_fallback: bool
    unk_token: str

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizer": self.normalizer.to_json(),
            "byte_fallback": self.byte_fallback,
            "unk_token": self.unk_token,
        }


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
        choices=sp_text.RULES,
        help="SentencePiece's normalization rule (spm_train --normalization_rule_name): nmt_nfkc (spm_train's "
        "default: NFKC plus whitespace and control-character cleanup), nfkc, nmt_nfkc_cf / nfkc_cf (plus case "
        "folding), identity (none; tokreg's default, so that text decodes back as it was).",
    )
    byte_fallback: bool = flag(False, help="Add the 256 <0xNN> byte pieces: nothing is unknown.")
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

    def controls(self) -> list[str]:
        return [*self.special, *_symbols(self.control_symbols)]

    def user_defined(self) -> list[str]:
        return _symbols(self.user_defined_symbols)

    def normalizer(self) -> SpNormalizerConfig:
        return SpNormalizerConfig(
            add_dummy_prefix=self.add_dummy_prefix,
            remove_extra_whitespaces=self.remove_extra_whitespaces,
            name=self.unicode_normalization,
            charsmap=sp_text.builtin_charsmap(self.unicode_normalization),
        )

    def config(self) -> UnigramConfig:
        return UnigramConfig(normalizer=self.normalizer(), byte_fallback=self.byte_fallback, unk_token=self.unk_token)


def _symbols(text: str) -> list[str]:
    return [s for s in text.split(",") if s]


# The normalizers HF writes SentencePiece models with: a ▁ in front (`Prepend`) and spaces as ▁
# (`Replace`). HF's `Metaspace` pre-tokenizer would skip the ▁ when the text already starts with a
# space; SentencePiece never does. Whitespace collapsing, when used, comes first.
_COLLAPSE = [
    {"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
]
_PREPEND = {"type": "Prepend", "prepend": "\u2581"}
_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}


def _hf_normalizers(collapse: bool, dummy_prefix: bool) -> list[dict[str, Any]]:
    return (_COLLAPSE if collapse else []) + ([_PREPEND] if dummy_prefix else []) + [_SPACES]


class Unigram(Algorithm[UnigramConfig]):
    name = "unigram"
    stored_as = "unigram"
    title = "Unigram"
    options_type = UnigramOptions
    score_label = "log prob"
    special_kind = "control"
    export_formats = ("hf", "sentencepiece")
    sentencepiece_model_type = 1

    def owns(self, config: Mapping[str, Any]) -> bool:
        return True

    def parse_config(self, raw: Mapping[str, Any]) -> UnigramConfig:
        exact_keys(raw, {"normalizer", "byte_fallback", "unk_token"}, self.title, template.KEYS)
        return UnigramConfig(
            normalizer=SpNormalizerConfig.from_json(raw["normalizer"], self.title),
            byte_fallback=bool(raw["byte_fallback"]),
            unk_token=str(raw["unk_token"]),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The normalizer as its rule's name, whether the rules are custom, their hash."""
        return {**raw, "normalizer": self.parse_config(raw).normalizer.summary()}

    def compile(self, content: bytes, config: UnigramConfig) -> _core.Encoder:
        return _core.Encoder.unigram(content, **config.normalizer.core_args())

    def lossless(self, config: UnigramConfig) -> bool:
        return sp_text.lossless(config.normalizer, config.byte_fallback)

    # -- training -------------------------------------------------------------------------------

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, UnigramOptions)
        options.check_common()
        if not 0.0 < options.shrinking_factor < 1.0:
            raise InputError(f"--shrinking-factor {options.shrinking_factor} must be between 0 and 1 (e.g. 0.75)")
        if options.unicode_normalization not in sp_text.RULES:
            raise InputError(
                f"--normalization {options.unicode_normalization!r} is not a SentencePiece rule; "
                f"choose one of {', '.join(sp_text.RULES)}"
            )
        if not 0.0 < options.character_coverage <= 1.0:
            raise InputError(f"--character-coverage {options.character_coverage} must be above 0 and at most 1")
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
            out: dict[str, Any] = _core.train_unigram(
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
                threads=opts.threads,
                progress=progress,
            )
        except VocabularySizeError as e:
            raise InputError(f"--vocab-size {e.requested}: {e}") from None
        rounds = [RoundRow(round=r, phase="em", vocab_size=n, log_likelihood=ll) for r, n, ll in out["rounds"]]
        by_size = {size: (pieces, n) for size, pieces, n in out["sized"]}
        by_size[max(sizes)] = (out["pieces"], len(rounds))
        config = opts.config().to_json()
        datas = []
        for size in sizes:
            pieces, n_rounds = by_size[size]
            tokens = [
                TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, score=score)
                for i, (text, score, kind) in enumerate(pieces)
            ]
            datas.append(TokenizerData(algorithm="unigram", config=config, tokens=tokens, rounds=rounds[:n_rounds]))
        return datas, {"train_seconds": out["train_seconds"], "distinct_pieces": out["distinct_words"]}

    # -- extending ----------------------------------------------------------------------------

    def extend_counting(self, config: UnigramConfig) -> dict[str, Any]:
        n = config.normalizer
        if not n.escape_whitespaces:
            raise InputError(f"this {self.title} model keeps spaces as spaces (no ▁), which tokreg cannot train on")
        normalizer = {"add_dummy_prefix": n.add_dummy_prefix, "remove_extra_whitespaces": n.remove_extra_whitespaces}
        return {"splitting": "sentencepiece", "normalizer": normalizer, "max_piece_bytes": 0}

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
    ) -> TokenizerData:
        """New pieces from the new corpus (its characters the base lacks, and frequent
        substrings), scored by EM over base + candidates, pruned to `add`. The base's pieces are
        in the model from the start, are never pruned and keep their scores: EM re-estimates
        the new pieces only, so a text whose best segmentation uses no new piece segments
        exactly as before. New pieces take the ids after the base's, by score descending."""
        unk = next((t.bytes.decode("utf-8") for t in base.tokens if t.kind == "unknown"), "<unk>")
        learned = [(t.bytes.decode("utf-8"), float(t.score or 0.0)) for t in base.tokens if t.kind == "normal"]
        try:
            out: dict[str, Any] = _core.train_unigram(
                counts,
                1 + add,
                unk_piece=unk,
                control_pieces=[],
                threads=threads,
                progress=progress,
                base=learned,
                keep=[k.decode("utf-8", "replace") for k in keep],
            )
        except VocabularySizeError as e:
            if e.reachable is not None:
                got = e.reachable - 1
                raise InputError(
                    f"the new corpus supports only {got:,} new pieces for this {self.title} model "
                    f"(asked --add {add:,}); nothing was written" + (f"; rerun with --add {got}" if got else "")
                ) from None
            raise InputError(
                f"the new corpus has {(e.needed or 1) - 1:,} characters the base lacks, each of which needs a piece; "
                f"--add must be at least that (nothing was written)"
            ) from None
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=text.encode("utf-8"), kind=kind, score=score)
            for i, (text, score, kind) in enumerate(out["pieces"][1:])
        ]
        rounds = [RoundRow(round=r, phase="em", vocab_size=n, log_likelihood=ll) for r, n, ll in out["rounds"]]
        return TokenizerData(
            algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new, rounds=rounds
        )

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """User-defined pieces: matched wherever they occur (SentencePiece's rule), ids after the
        base's."""
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=t.encode("utf-8"), kind="user_defined", score=0.0)
            for i, t in enumerate(tokens)
        ]
        return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new)

    # -- other tools' files ---------------------------------------------------------------------

    def from_sentencepiece(self, model: SpModel, where: str) -> TokenizerData:
        tokens, unk = sp_text.model_tokens(model, where)
        config = UnigramConfig(sp_text.model_normalizer(model, where), model.byte_fallback, unk)
        return TokenizerData(algorithm="unigram", config=config.to_json(), tokens=tokens, source="import:sentencepiece")

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        """A tokenizer.json the way HF writes SentencePiece models: Prepend + Replace normalizers,
        no pre-tokenizer, the Unigram model with its log probabilities; control and unknown
        pieces as added special tokens; byte fallback carried over."""
        cfg = self.parse_config(data.config)
        if fmt == "sentencepiece":
            return sp_text.export_model(data, cfg.normalizer, cfg.byte_fallback, model_type=1)
        if fmt != "hf":
            return super().export(fmt, data, ref)
        n = cfg.normalizer
        if n.charsmap or n.denormalizer is not None:
            raise InputError(
                f"{ref} normalizes with {n.name!r}, which tokreg does not write as a tokenizer.json; "
                "export it with --format sentencepiece"
            )
        unk = next(t.id for t in data.tokens if t.kind == "unknown")
        decoders: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]
        if cfg.byte_fallback:
            decoders += [{"type": "ByteFallback"}, {"type": "Fuse"}]
        if n.add_dummy_prefix:
            decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
        return hf_json.dumps(
            {
                "version": "1.0",
                "truncation": None,
                "padding": None,
                "added_tokens": hf_json.added_tokens(
                    (t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind in ("control", "unknown")
                ),
                "normalizer": {
                    "type": "Sequence",
                    "normalizers": _hf_normalizers(n.remove_extra_whitespaces, n.add_dummy_prefix),
                },
                "pre_tokenizer": None,
                "post_processor": template.hf_for(data),
                "decoder": {"type": "Sequence", "decoders": decoders},
                "model": {
                    "type": "Unigram",
                    "unk_id": unk,
                    "byte_fallback": cfg.byte_fallback,
                    "vocab": [[t.bytes.decode("utf-8"), t.score if t.score is not None else 0.0] for t in data.tokens],
                },
            }
        )

    def reads_hf(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "Unigram"

    def from_hf(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """Accepts exactly what `export` writes."""

        def refuse(what: str) -> InputError:
            return InputError(f"{where}: {what} is not supported by tokreg's Unigram (nothing was imported)")

        if doc.get("pre_tokenizer") is not None:
            pre = doc["pre_tokenizer"]
            raise refuse(
                f"the pre-tokenizer {pre.get('type') if isinstance(pre, dict) else pre!r} (tokreg writes "
                "SentencePiece-style Unigram files as Prepend + Replace normalizers)"
            )
        norm = doc.get("normalizer")
        steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" else None
        forms = {(c, p): _hf_normalizers(c, p) for c in (False, True) for p in (False, True)}
        found = next((key for key, value in forms.items() if value == steps), None)
        if found is None:
            raise refuse("this normalizer (expected Prepend('▁') and Replace(' ', '▁'), as SentencePiece models use)")
        collapse, dummy_prefix = found
        vocab = model.get("vocab")
        if not isinstance(vocab, list) or not vocab:
            raise InputError(f"{where}: the Unigram model has no vocab")
        for i, v in enumerate(vocab):
            if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)):
                raise InputError(f"{where}: the Unigram vocab is not a list of [piece, score] (entry {i})")
            score = v[1]
            # abs() < max float, not isfinite(): an int too large for a float raises OverflowError.
            if not isinstance(score, (int, float)) or isinstance(score, bool) or not abs(score) < sys.float_info.max:
                raise InputError(
                    f"{where}: the Unigram piece {v[0][:40]!r} has the score {score!r:.30}, not a finite number"
                )
            if not v[0]:
                raise InputError(f"{where}: the Unigram vocab has an empty piece (id {i}); remove it")
        unk_id = model.get("unk_id")
        if not isinstance(unk_id, int) or isinstance(unk_id, bool) or not 0 <= unk_id < len(vocab):
            raise refuse("a Unigram model without an unknown piece")
        byte_fallback = model.get("byte_fallback", False)
        if not isinstance(byte_fallback, bool):
            raise InputError(f"{where}: byte_fallback is {byte_fallback!r:.20}, not true or false")
        added = hf_json.read_added(doc, where, normalized_ok=False)
        if any(i >= len(vocab) or vocab[i][0] != t for i, t in added.items()):
            raise InputError(f"{where}: an added token is not in the vocab with its id; the file is damaged")
        specials = set(added.values())

        def kind(i: int, piece: str) -> str:
            if i == unk_id:
                return "unknown"
            if piece in specials:
                return "control"
            if byte_fallback and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                return "byte"
            return "normal"

        tokens = [
            TokenRow(id=i, bytes=p.encode("utf-8"), kind=kind(i, p), score=float(s)) for i, (p, s) in enumerate(vocab)
        ]
        n_bytes = sum(1 for t in tokens if t.kind == "byte")
        if byte_fallback and n_bytes != 256:
            # HF turns a character with a missing byte piece into one unknown token, SentencePiece
            # (and tokreg) only that byte: a partial set would encode differently.
            raise InputError(f"{where}: byte_fallback is on but the vocab has {n_bytes} byte pieces, not 256")
        normalizer = SpNormalizerConfig(add_dummy_prefix=dummy_prefix, remove_extra_whitespaces=collapse)
        config = UnigramConfig(normalizer, byte_fallback, vocab[unk_id][0])
        return TokenizerData(algorithm="unigram", config=config.to_json(), tokens=tokens, source="import:hf")


ALGORITHM = Unigram()
