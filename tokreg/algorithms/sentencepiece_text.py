"""SentencePiece's text handling, shared by the two SentencePiece-style algorithms (Unigram and
SentencePiece BPE): the normalizer settings (normalization rules, a dummy `▁` in front, spaces
as `▁`, optional collapsing of whitespace runs, a denormalizer for decoding), and when that
makes encoding lossless. The core's `normalize::SpNormalizer` applies them; reading and writing
`.model` files is sentencepiece_model.py.

Normalizer config (hashed): {"name", "add_dummy_prefix", "remove_extra_whitespaces",
"escape_whitespaces"}, plus, only when the model has them (so identity versions keep their
hashes), "charsmap": the precompiled normalization rules (SentencePiece's double-array trie
and replacement strings, base64) and "denormalizer": {"charsmap", "add_dummy_prefix",
"remove_extra_whitespaces", "escape_whitespaces"}. The rules' bytes are in the config, so they
are hashed with everything else and travel with the version; `show` and `diff` name them by
their own xxh3-128 hash.

Beside the normalizer, a version's config holds "unk_surface" only when it is not SentencePiece's
default (` ⁇ `, `UNK_SURFACE`): what the unknown piece decodes to (`TrainerSpec.unk_surface` of
a `.model`; the piece's own text for a Hugging Face import, whose decoder writes the piece).

The rules of SentencePiece's built-in normalizations (`--normalization nmt_nfkc|nfkc|
nmt_nfkc_cf|nfkc_cf`) ship in charsmaps/ (zlib-compressed), exactly as SentencePiece 0.2
writes them into a model's `precompiled_charsmap`, so a version trained with them normalizes
like a model spm_train wrote with the same rule.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Optional

from ..content import content_hash
from ..errors import InputError
from ..formats.sentencepiece_proto import DEFAULT_UNK_SURFACE
from .interfaces import exact_keys

#: SentencePiece's built-in rules (what each does: NFKC; `nmt_`: plus NMT-style whitespace and
#: control-character cleanup; `_cf`: plus Unicode case folding) and "identity" (no rules).
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
_FLAGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")
#: SentencePiece's default `unk_surface` (` ⁇ `): what its decoder writes for the unknown piece.
UNK_SURFACE = DEFAULT_UNK_SURFACE
#: The optional config key of `unk_surface_json`.
UNK_SURFACE_KEYS = frozenset({"unk_surface"})


def unk_surface_json(surface: str) -> dict[str, Any]:
    """The config entry for `unk_surface`: present only when not the default, so that every
    version made before it keeps its hash."""
    return {} if surface == UNK_SURFACE else {"unk_surface": surface}


def unk_surface_of(raw: Mapping[str, Any], title: str) -> str:
    """The stored `unk_surface` of a config (the default when absent)."""
    value = raw.get("unk_surface", UNK_SURFACE)
    if not isinstance(value, str):
        raise InputError(f"this {title} version's config has unk_surface={value!r:.20}; the version is damaged")
    return value


@cache
def builtin_charsmap(name: str) -> bytes:
    """The precompiled rules of a built-in normalization (b"" for identity)."""
    if name == "identity":
        return b""
    if name not in RULES:
        raise InputError(f"unknown normalization {name!r}; choose one of {', '.join(RULES)}")
    from importlib import resources  # a charsmap is read rarely; the import is not free

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


def lossy_by_design(normalizer: SpNormalizerConfig, byte_fallback: bool) -> Optional[str]:
    """What `lossless` finds lost, for people; None when nothing is."""
    why = [
        text
        for text, on in (
            ("no byte fallback: characters outside the vocabulary become the unknown token", not byte_fallback),
            ("runs of whitespace are collapsed", normalizer.remove_extra_whitespaces),
            ("whitespace is not kept as ▁", not normalizer.escape_whitespaces),
            (f"its normalization rules ({normalizer.name}) rewrite text", bool(normalizer.charsmap)),
            ("its denormalizer rewrites decoded text", normalizer.denormalizer is not None),
        )
        if on
    ]
    return "; ".join(why) or None


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
