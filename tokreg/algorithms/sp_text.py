"""SentencePiece's text handling and model layout, shared by the two SentencePiece-style
algorithms (unigram, sp_bpe): the normalizer settings (normalization rules, a dummy `▁` in front,
spaces as `▁`, optional collapsing of whitespace runs, a denormalizer for decoding), byte
fallback, the unknown piece, and reading the pieces of a `.model` file
(formats/sentencepiece_proto.py parses the protobuf).

Normalizer config (hashed): {"name", "add_dummy_prefix", "remove_extra_whitespaces",
"escape_whitespaces"}, plus, only when the model has them (so identity versions keep their
hashes), "charsmap": the precompiled normalization rules (SentencePiece's double-array trie
and replacement strings, base64) and "denormalizer": {"charsmap", "add_dummy_prefix",
"remove_extra_whitespaces", "escape_whitespaces"}. The rules' bytes are in the config, so they
are hashed with everything else and travel with the version; `show` and `diff` name them by
their own xxh3-128 hash.

The rules of SentencePiece's built-in normalizations (`--normalization nmt_nfkc|nfkc|
nmt_nfkc_cf|nfkc_cf`) ship in charsmaps/ (zlib-compressed), exactly as SentencePiece 0.2
writes them into a model's `precompiled_charsmap`, so a version trained with them normalizes
like a model spm_train wrote with the same rule.
"""

from __future__ import annotations

import base64
import binascii
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Optional

from ..content import content_hash
from ..data import TokenizerData, TokenRow
from ..errors import InputError
from ..formats.sentencepiece_proto import KINDS, MODEL_TYPES, Model, Piece, dumps
from .base import exact_keys

#: SentencePiece's built-in rules (what each does: NFKC; `nmt_`: plus NMT-style whitespace and
#: control-character cleanup; `_cf`: plus Unicode case folding) and "identity" (no rules).
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
_FLAGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")


@cache
def builtin_charsmap(name: str) -> bytes:
    """The precompiled rules of a built-in normalization (b"" for identity)."""
    if name == "identity":
        return b""
    if name not in RULES:
        raise InputError(f"unknown normalization {name!r}; choose one of {', '.join(RULES)}")
    raw = resources.files(__package__).joinpath("charsmaps", f"{name}.bin.z").read_bytes()
    return zlib.decompress(raw)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(value: Any, title: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"this {title} version's normalization rules are not base64; the version is damaged") from None


@dataclass(frozen=True)
class Denormalizer:
    """A model's `denormalizer_spec`: rules applied to decoded text."""

    charsmap: bytes
    add_dummy_prefix: bool = False
    remove_extra_whitespaces: bool = False
    escape_whitespaces: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"charsmap": _b64(self.charsmap), **{f: getattr(self, f) for f in _FLAGS}}


@dataclass(frozen=True)
class SpNormalizerConfig:
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = False  # True collapses runs of spaces (lossy), as SentencePiece does
    escape_whitespaces: bool = True
    name: str = "identity"
    charsmap: bytes = b""  # the precompiled rules; b"": none (identity)
    denormalizer: Optional[Denormalizer] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, **{f: getattr(self, f) for f in _FLAGS}}
        if self.charsmap:
            out["charsmap"] = _b64(self.charsmap)
        if self.denormalizer is not None:
            out["denormalizer"] = self.denormalizer.to_json()
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], title: str) -> SpNormalizerConfig:
        exact_keys(raw, {"name", *_FLAGS}, title, optional=frozenset({"charsmap", "denormalizer"}))
        charsmap = _unb64(raw["charsmap"], title) if "charsmap" in raw else b""
        denormalizer = None
        if "denormalizer" in raw:
            d = raw["denormalizer"]
            if not isinstance(d, Mapping):
                raise InputError(f"this {title} version's denormalizer is not an object; the version is damaged")
            exact_keys(d, {"charsmap", *_FLAGS}, title)
            denormalizer = Denormalizer(_unb64(d["charsmap"], title), *(bool(d[f]) for f in _FLAGS))
        return cls(
            add_dummy_prefix=bool(raw["add_dummy_prefix"]),
            remove_extra_whitespaces=bool(raw["remove_extra_whitespaces"]),
            escape_whitespaces=bool(raw["escape_whitespaces"]),
            name=str(raw["name"]),
            charsmap=charsmap,
            denormalizer=denormalizer,
        )

    def core_args(self) -> dict[str, Any]:
        """The keyword arguments of the core's SentencePiece-style encoders."""
        d = self.denormalizer
        return {
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces,
            "charsmap": self.charsmap or None,
            "denormalizer": None if d is None else (d.charsmap, *(getattr(d, f) for f in _FLAGS)),
        }

    def summary(self) -> dict[str, Any]:
        """What `show` and `diff` display: the rule's name, whether its rules are a custom set
        (not the built-in ones of that name), the rules' hash, the flags."""
        try:
            builtin = builtin_charsmap(self.name)
        except InputError:
            builtin = None
        return {
            "rule": self.name,
            "custom_charsmap": bool(self.charsmap) and self.charsmap != builtin,
            "charsmap_hash": content_hash(self.charsmap) if self.charsmap else None,
            **{f: getattr(self, f) for f in _FLAGS},
            "denormalizer_hash": content_hash(self.denormalizer.charsmap) if self.denormalizer else None,
        }


def lossless(normalizer: SpNormalizerConfig, byte_fallback: bool) -> bool:
    """With byte fallback nothing is unknown; whitespace kept as it is decodes back. One
    character is the exception, as in SentencePiece itself: ▁ (U+2581) in the input is the
    space marker, so it decodes as a space."""
    return (
        byte_fallback
        and not normalizer.remove_extra_whitespaces
        and normalizer.escape_whitespaces
        and not normalizer.charsmap
        and normalizer.denormalizer is None
    )


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


def model_normalizer(m: Model, source: str) -> SpNormalizerConfig:
    """The normalizer of a model as SentencePiece loads it: its rules are the model's
    precompiled_charsmap and nothing else (SentencePiece fills in a named rule's charsmap when it
    trains, never when it loads, so a model that names a rule but carries none normalizes as
    identity). Without rules the name is stored as "identity", as tokreg always stored it."""
    charsmap = m.precompiled_charsmap
    name = (m.normalizer_name or "user_defined") if charsmap else "identity"
    denormalizer = None
    if m.denormalizer_charsmap:
        denormalizer = Denormalizer(
            m.denormalizer_charsmap,
            m.denormalizer_add_dummy_prefix,
            m.denormalizer_remove_extra_whitespaces,
            m.denormalizer_escape_whitespaces,
        )
    return SpNormalizerConfig(
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
        name=name,
        charsmap=charsmap,
        denormalizer=denormalizer,
    )


def _refuse_unsupported(m: Model, source: str) -> None:
    if m.model_type not in (1, 2):
        kind = MODEL_TYPES.get(m.model_type, f"type {m.model_type}")
        raise InputError(
            f"{source}: SentencePiece {kind} models are not supported (only UNIGRAM and BPE); nothing was written"
        )
    if m.treat_whitespace_as_suffix:
        raise InputError(
            f"{source}: the model uses treat_whitespace_as_suffix, which tokreg does not implement; "
            "retrain it without. Nothing was written"
        )


def export_model(data: TokenizerData, normalizer: SpNormalizerConfig, byte_fallback: bool, model_type: int) -> bytes:
    """A `.model` file of a version: its pieces in id order with their scores (as the f32 the
    format holds) and types, its normalizer and denormalizer, model_type and byte_fallback.

    SentencePiece BPE scores its pieces -rank, so its first learned piece has -0.0, which tokreg
    stores as 0.0 (SQL keeps no sign of zero); it is written back as -0.0 so that an imported
    model comes back byte for byte (the sign changes nothing in encoding)."""
    types = {kind: number for number, kind in KINDS.items()}

    def score(t: TokenRow) -> float:
        s = t.score if t.score is not None else 0.0
        return -0.0 if model_type == 2 and t.kind == "normal" and s == 0.0 else s

    pieces = [Piece(t.bytes, score(t), types[t.kind]) for t in data.tokens]
    d = normalizer.denormalizer
    m = Model(
        pieces=pieces,
        model_type=model_type,
        byte_fallback=byte_fallback,
        normalizer_name=normalizer.name,
        precompiled_charsmap=normalizer.charsmap,
        add_dummy_prefix=normalizer.add_dummy_prefix,
        remove_extra_whitespaces=normalizer.remove_extra_whitespaces,
        escape_whitespaces=normalizer.escape_whitespaces,
    )
    if d is not None:
        m.denormalizer_charsmap = d.charsmap
        m.denormalizer_add_dummy_prefix = d.add_dummy_prefix
        m.denormalizer_remove_extra_whitespaces = d.remove_extra_whitespaces
        m.denormalizer_escape_whitespaces = d.escape_whitespaces
    return dumps(m)
