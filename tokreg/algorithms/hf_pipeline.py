"""Hugging Face pipelines kept as they are: the normalizer, pre-tokenizer and decoder steps of
a `tokenizer.json` that tokreg's own text handling does not reproduce (the converters' Unigram
layout: `Precompiled` + `Strip` + `Replace`, then `Metaspace`), stored with the version and run
by the core's `hfpipe` (src/hfpipe/), which follows HF's `tokenizers` step by step. See
docs/hf-layouts.md for the layouts and what is refused.

Config (hashed), under the algorithm's key "hf_pipeline", written only for versions imported
in such a layout (so no other version's hash changes):

    {"normalizer": [step...], "pre_tokenizer": [step...], "decoder": [step...] | null,
     "unk_added": bool}

`unk_added`: whether the unknown token is one of the file's `added_tokens` (then its text is
matched as a special token, before normalization); when it is not (T5's and XLM-R's converters
add only the control pieces), its text is ordinary text, which the model may match.

Each step is the HF JSON object of one step, with exactly the keys listed in `_KEYS` (a
`Sequence` is flattened into the list; a Metaspace written with the older `add_prefix_space`
is stored with the `prepend_scheme` it means). So a stored pipeline is written back to a
`tokenizer.json` as it is, and reading a stored config checks that it is in this canonical
form (`HfPipeline.from_json`).

Regexes are Oniguruma's (HF's engine); the core runs fancy-regex, so `^` and `$` (line anchors
in Oniguruma) become `(?m:^)` and `(?m:$)` and possessive intervals atomic groups
(`core_args`); a regex the core cannot compile is refused at import.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..content import content_hash
from ..errors import InputError
from ..formats import hf_json

KEY = "hf_pipeline"

# The keys of each step kind, by family; a value's kind is checked in `_check`.
_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "normalizer": {
        "Precompiled": ("precompiled_charsmap",),
        "Replace": ("pattern", "content"),
        "Prepend": ("prepend",),
        "Strip": ("strip_left", "strip_right"),
        "StripAccents": (),
        "Lowercase": (),
        "NFC": (),
        "NFD": (),
        "NFKC": (),
        "NFKD": (),
        "BertNormalizer": ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase"),
    },
    "pre_tokenizer": {
        "Metaspace": ("replacement", "prepend_scheme", "split"),
        "Split": ("pattern", "behavior", "invert"),
        "ByteLevel": ("add_prefix_space", "trim_offsets", "use_regex"),
        "Digits": ("individual_digits",),
        "Punctuation": ("behavior",),
        "Whitespace": (),
        "WhitespaceSplit": (),
        "BertPreTokenizer": (),
    },
    "decoder": {
        "Metaspace": ("replacement", "prepend_scheme", "split"),
        "Replace": ("pattern", "content"),
        "ByteFallback": (),
        "Fuse": (),
        "Strip": ("content", "start", "stop"),
        "ByteLevel": ("add_prefix_space", "trim_offsets", "use_regex"),
        "BPEDecoder": ("suffix",),
        "WordPiece": ("prefix", "cleanup"),
    },
}
_SEQUENCE = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders"}
_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
_SCHEMES = ("always", "first", "never")


def _refuse(where: str, family: str, kind: str, why: str = "") -> InputError:
    what = f"the {family.replace('_', '-')} {kind}" + (f" {why}" if why else "")
    return InputError(f"{where}: {what} is not supported by tokreg (nothing was imported)")


def _pattern(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) == 1
        and next(iter(value)) in ("String", "Regex")
        and isinstance(next(iter(value.values())), str)
    )


def _char(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 1


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**16


_CHECKS: dict[str, Any] = {
    "precompiled_charsmap": lambda v: isinstance(v, str) and bool(v),
    "pattern": _pattern,
    "content": lambda v: isinstance(v, str),
    "prepend": lambda v: isinstance(v, str) and bool(v),
    "strip_left": lambda v: isinstance(v, bool),
    "strip_right": lambda v: isinstance(v, bool),
    "replacement": _char,
    "prepend_scheme": lambda v: v in _SCHEMES,
    "split": lambda v: isinstance(v, bool),
    "behavior": lambda v: v in _BEHAVIORS,
    "invert": lambda v: isinstance(v, bool),
    "start": _count,
    "add_prefix_space": lambda v: isinstance(v, bool),
    "trim_offsets": lambda v: isinstance(v, bool),
    "use_regex": lambda v: isinstance(v, bool),
    "individual_digits": lambda v: isinstance(v, bool),
    "suffix": lambda v: isinstance(v, str) and bool(v),
    "clean_text": lambda v: isinstance(v, bool),
    "handle_chinese_chars": lambda v: isinstance(v, bool),
    "strip_accents": lambda v: v is None or isinstance(v, bool),
    "lowercase": lambda v: isinstance(v, bool),
    "prefix": lambda v: isinstance(v, str),
    "cleanup": lambda v: isinstance(v, bool),
    "stop": _count,
}


def _canonical(family: str, step: Any, where: str) -> list[dict[str, Any]]:
    """The canonical steps of one HF step (a Sequence gives its members, flattened)."""
    if not isinstance(step, dict) or not isinstance(step.get("type"), str):
        raise InputError(f"{where}: a {family} step is {step!r:.60}, not an object with a type")
    kind = step["type"]
    if kind == "Sequence":
        members = step.get(_SEQUENCE[family])
        if not isinstance(members, list):
            raise InputError(f"{where}: a {family} Sequence has no list of {_SEQUENCE[family]}")
        return [c for m in members for c in _canonical(family, m, where)]
    keys = _KEYS[family].get(kind)
    if keys is None:
        raise _refuse(where, family, kind)
    raw = dict(step)
    if kind == "Metaspace" and "prepend_scheme" not in raw and "add_prefix_space" in raw:
        # tokenizers < 0.15 wrote a flag; it means "always" or "never".
        raw["prepend_scheme"] = "always" if raw.pop("add_prefix_space") else "never"
    raw.pop("str_rep", None)  # old Metaspace files repeat the replacement
    if kind == "Metaspace":
        raw.setdefault("split", True)
    if kind == "ByteLevel":
        raw.setdefault("use_regex", True)
        raw.setdefault("trim_offsets", True)
    if kind == "Punctuation":
        raw.setdefault("behavior", "Isolated")
    if kind == "Strip" and family == "decoder":
        raw.setdefault("start", 0)
        raw.setdefault("stop", 0)
    out: dict[str, Any] = {"type": kind}
    for k in keys:
        if k not in raw or not _CHECKS[k](raw[k]):
            raise _refuse(where, family, kind, f"with {k}={raw.get(k)!r:.60}")
        out[k] = raw[k]
    extra = sorted(set(raw) - set(keys) - {"type"})
    if extra:
        raise _refuse(where, family, kind, f"with the setting(s) {', '.join(extra)}")
    if kind == "Precompiled":
        try:
            base64.b64decode(out["precompiled_charsmap"], validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{where}: the Precompiled normalizer's charsmap is not base64") from None
    if kind == "Replace" and "String" in out["pattern"] and not out["pattern"]["String"]:
        raise _refuse(where, family, kind, "with an empty pattern")
    return [out]


def _onig_to_core(regex: str) -> str:
    """An Oniguruma regex (HF's) in fancy-regex's dialect, which the core runs."""
    for ours, theirs in hf_json._POSSESSIVE_INTERVALS:
        regex = regex.replace(theirs, ours)
    return hf_json._swap_anchor(hf_json._swap_anchor(regex, "$", "(?m:$)"), "^", "(?m:^)")


def _pattern_args(p: Mapping[str, str]) -> list[str]:
    if "String" in p:
        return ["string", p["String"]]
    return ["regex", _onig_to_core(p["Regex"])]


@dataclass(frozen=True)
class HfPipeline:
    normalizer: tuple[Mapping[str, Any], ...]
    pre_tokenizer: tuple[Mapping[str, Any], ...]
    decoder: Optional[tuple[Mapping[str, Any], ...]]
    unk_added: bool = True

    @classmethod
    def read(cls, doc: Mapping[str, Any], where: str, unk_added: bool = True) -> HfPipeline:
        """The pipeline of a tokenizer.json; refuses, in one line naming it, any step tokreg
        does not implement."""

        def steps(family: str) -> tuple[dict[str, Any], ...]:
            raw = doc.get(family)
            return () if raw is None else tuple(_canonical(family, raw, where))

        decoder = None if doc.get("decoder") is None else steps("decoder")
        return cls(steps("normalizer"), steps("pre_tokenizer"), decoder, unk_added)

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizer": [dict(s) for s in self.normalizer],
            "pre_tokenizer": [dict(s) for s in self.pre_tokenizer],
            "decoder": None if self.decoder is None else [dict(s) for s in self.decoder],
            "unk_added": self.unk_added,
        }

    @classmethod
    def from_json(cls, raw: Any, title: str) -> HfPipeline:
        damaged = InputError(f"this {title} version's {KEY} is not in tokreg's form; the version is damaged")
        keys = {"normalizer", "pre_tokenizer", "decoder", "unk_added"}
        if not isinstance(raw, Mapping) or set(raw) != keys or not isinstance(raw["unk_added"], bool):
            raise damaged
        try:
            doc = {
                "normalizer": {"type": "Sequence", "normalizers": raw["normalizer"]},
                "pre_tokenizer": {"type": "Sequence", "pretokenizers": raw["pre_tokenizer"]},
                "decoder": None if raw["decoder"] is None else {"type": "Sequence", "decoders": raw["decoder"]},
            }
            made = cls.read(doc, f"this {title} version", raw["unk_added"])
        except InputError:
            raise damaged from None
        if made.to_json() != {k: raw[k] for k in keys}:
            raise damaged
        return made

    def summary(self) -> dict[str, Any]:
        """What `show` and `diff` display: the steps, a charsmap by its xxh3-128 hash."""

        def short(s: Mapping[str, Any]) -> dict[str, Any]:
            if s["type"] != "Precompiled":
                return dict(s)
            return {"type": "Precompiled", "charsmap_hash": content_hash(base64.b64decode(s["precompiled_charsmap"]))}

        out = self.to_json()
        out["normalizer"] = [short(s) for s in self.normalizer]
        return out

    def to_hf(self) -> dict[str, Any]:
        """The `normalizer`, `pre_tokenizer` and `decoder` of a tokenizer.json."""

        def seq(family: str, steps: Sequence[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
            return {"type": "Sequence", _SEQUENCE[family]: [dict(s) for s in steps]} if steps else None

        return {
            "normalizer": seq("normalizer", self.normalizer),
            "pre_tokenizer": seq("pre_tokenizer", self.pre_tokenizer),
            "decoder": None
            if self.decoder is None
            else {"type": "Sequence", "decoders": [dict(s) for s in self.decoder]},
        }

    def core_args(self) -> dict[str, Any]:
        """The keyword arguments of the core's `Encoder.hf_*` constructors for these steps."""
        blobs: list[bytes] = []

        def norm(s: Mapping[str, Any]) -> tuple[str, list[str]]:
            kind = s["type"]
            if kind == "Precompiled":
                blobs.append(base64.b64decode(s["precompiled_charsmap"]))
                return kind, [str(len(blobs) - 1)]
            if kind == "Replace":
                return kind, [*_pattern_args(s["pattern"]), s["content"]]
            if kind == "Prepend":
                return kind, [s["prepend"]]
            if kind == "Strip":
                return kind, [_flag(s["strip_left"]), _flag(s["strip_right"])]
            if kind == "BertNormalizer":
                # strip_accents null: as lowercase says (HF's rule)
                strip = s["lowercase"] if s["strip_accents"] is None else s["strip_accents"]
                return kind, [_flag(s[k]) for k in ("clean_text", "handle_chinese_chars")] + [
                    _flag(strip),
                    _flag(s["lowercase"]),
                ]
            return kind, []

        def pre(s: Mapping[str, Any]) -> tuple[str, list[str]]:
            kind = s["type"]
            if kind == "Metaspace":
                return kind, [s["replacement"], s["prepend_scheme"], _flag(s["split"])]
            if kind == "Split":
                return kind, [*_pattern_args(s["pattern"]), s["behavior"], _flag(s["invert"])]
            if kind == "ByteLevel":
                return kind, [_flag(s["add_prefix_space"]), _flag(s["use_regex"])]
            if kind == "Digits":
                return kind, [_flag(s["individual_digits"])]
            if kind == "Punctuation":
                return kind, [s["behavior"]]
            return kind, []

        def dec(s: Mapping[str, Any]) -> tuple[str, list[str]]:
            kind = s["type"]
            if kind == "Metaspace":
                return kind, [s["replacement"], _flag(s["prepend_scheme"] != "never")]
            if kind == "Replace":
                return kind, [*_pattern_args(s["pattern"]), s["content"]]
            if kind == "Strip":
                return kind, [s["content"], str(s["start"]), str(s["stop"])]
            if kind == "BPEDecoder":
                return kind, [s["suffix"]]
            if kind == "WordPiece":
                return kind, [s["prefix"], _flag(s["cleanup"])]
            return kind, []

        normalizer = [norm(s) for s in self.normalizer]
        return {
            "normalizer": normalizer,
            "pre_tokenizer": [pre(s) for s in self.pre_tokenizer],
            "decoder": None if self.decoder is None else [dec(s) for s in self.decoder],
            "blobs": blobs,
            "unk_special": self.unk_added,
        }


def _flag(value: bool) -> str:
    return "true" if value else "false"
