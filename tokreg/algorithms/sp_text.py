"""SentencePiece's text handling and model layout, shared by the two SentencePiece-style
algorithms (unigram, sp_bpe): the normalizer settings (a dummy `▁` in front, spaces as `▁`,
optional collapsing of whitespace runs), byte fallback, the unknown piece, and reading the
pieces of a `.model` file (formats/sentencepiece_proto.py parses the protobuf).

Normalizer config (hashed): {"name": "identity", "add_dummy_prefix", "remove_extra_whitespaces",
"escape_whitespaces"}.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..data import TokenRow
from ..errors import InputError
from ..formats.sentencepiece_proto import KINDS, MODEL_TYPES, Model
from .base import exact_keys


@dataclass(frozen=True)
class SpNormalizerConfig:
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = False  # True collapses runs of spaces (lossy), as SentencePiece does
    escape_whitespaces: bool = True
    name: str = "identity"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], title: str) -> SpNormalizerConfig:
        exact_keys(raw, {"name", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"}, title)
        if raw["name"] != "identity":
            raise InputError(f"{title} normalization {raw['name']!r} is not implemented by this tokreg")
        return cls(
            add_dummy_prefix=bool(raw["add_dummy_prefix"]),
            remove_extra_whitespaces=bool(raw["remove_extra_whitespaces"]),
            escape_whitespaces=bool(raw["escape_whitespaces"]),
        )

    def core_args(self) -> dict[str, bool]:
        """The keyword arguments of the core's SentencePiece-style encoders."""
        return {
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces,
        }


def lossless(normalizer: SpNormalizerConfig, byte_fallback: bool) -> bool:
    """With byte fallback nothing is unknown; whitespace kept as it is decodes back. One
    character is the exception, as in SentencePiece itself: ▁ (U+2581) in the input is the
    space marker, so it decodes as a space."""
    return byte_fallback and not normalizer.remove_extra_whitespaces and normalizer.escape_whitespaces


# -- .model files ---------------------------------------------------------------------------------


def model_tokens(m: Model, source: str) -> tuple[list[TokenRow], str]:
    """Token rows in id order and the unknown piece's text; refuses what SentencePiece itself
    would refuse to load, and every setting whose encoding tokreg does not reproduce exactly."""
    rows: list[TokenRow] = []
    seen: dict[bytes, int] = {}
    unk: list[str] = []
    n_bytes = 0
    for i, p in enumerate(m.pieces):
        kind = KINDS.get(p.type)
        if kind is None:
            raise InputError(f"{source}: piece {i} has unknown type {p.type}; is this a SentencePiece .model file?")
        try:
            text = p.text.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{source}: piece {i} is not UTF-8; is this a SentencePiece .model file?") from None
        if not text or "\x00" in text:
            raise InputError(f"{source}: piece {i} is empty or holds a NUL; the model is damaged")
        if p.text in seen:
            raise InputError(
                f"{source}: piece {text!r} appears twice (ids {seen[p.text]} and {i}); the model is damaged"
            )
        if not math.isfinite(p.score):
            raise InputError(f"{source}: piece {text!r} has the score {p.score}; the model is damaged")
        seen[p.text] = i
        if kind == "unknown":
            unk.append(text)
        if kind == "byte":
            n_bytes += 1
        # + 0.0 turns -0.0 (SentencePiece BPE's first piece) into 0.0: SQL stores no sign of zero
        rows.append(TokenRow(id=i, bytes=p.text, kind=kind, score=p.score + 0.0))
    if len(unk) != 1:
        raise InputError(
            f"{source}: a SentencePiece model has exactly one unknown piece, this one has {len(unk)}; "
            "is this a SentencePiece .model file?"
        )
    if m.byte_fallback and n_bytes != 256:
        raise InputError(f"{source}: byte_fallback is on but the model has {n_bytes} byte pieces, not 256")
    if n_bytes and not m.byte_fallback:
        raise InputError(f"{source}: the model has byte pieces but byte_fallback is off; the model is damaged")
    _refuse_unsupported(m, source)
    return rows, unk[0]


def model_normalizer(m: Model) -> SpNormalizerConfig:
    return SpNormalizerConfig(
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
    )


def _refuse_unsupported(m: Model, source: str) -> None:
    if m.model_type not in (1, 2):
        kind = MODEL_TYPES.get(m.model_type, f"type {m.model_type}")
        raise InputError(
            f"{source}: SentencePiece {kind} models are not supported (only UNIGRAM and BPE); nothing was written"
        )
    if m.precompiled_charsmap:
        rule = m.normalizer_name or "a custom rule"
        raise InputError(
            f"{source}: the model normalizes text with {rule!r}, which tokreg does not implement (only 'identity'); "
            "retrain it with normalization_rule_name=identity. Nothing was written"
        )
    if m.treat_whitespace_as_suffix:
        raise InputError(
            f"{source}: the model uses treat_whitespace_as_suffix, which tokreg does not implement; "
            "retrain it without. Nothing was written"
        )
    if m.denormalizer_charsmap:
        raise InputError(
            f"{source}: the model carries a denormalization rule for decoding, which tokreg does not "
            "implement; nothing was written"
        )
