"""A Unigram `tokenizer.json` in the layout HF's converters write for SentencePiece models
(Prepend + Replace normalizers, no pre-tokenizer), made from a tokreg version. tokreg no longer
writes one (HF's f64 path sums break ties other than SentencePiece's f32 ones: see
tokreg/algorithms/unigram/hf.py), but reads the layout, so the import tests make their files
here."""

from __future__ import annotations

import json
from typing import Any

from tokreg.algorithms import template
from tokreg.data import TokenizerData
from tokreg.formats import hf_json

_COLLAPSE = [
    {"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
]
_PREPEND = {"type": "Prepend", "prepend": "\u2581"}
_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}


def unigram_json(data: TokenizerData) -> bytes:
    n = data.config["normalizer"]
    collapse, prefix = n.get("remove_extra_whitespaces", True), n.get("add_dummy_prefix", True)
    decoders: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]
    if data.config["byte_fallback"]:
        decoders += [{"type": "ByteFallback"}, {"type": "Fuse"}]
    if prefix:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": hf_json.added_tokens(
            (t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind in ("control", "unknown")
        ),
        "normalizer": {
            "type": "Sequence",
            "normalizers": (_COLLAPSE if collapse else []) + ([_PREPEND] if prefix else []) + [_SPACES],
        },
        "pre_tokenizer": None,
        "post_processor": template.hf_for(data),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {
            "type": "Unigram",
            "unk_id": next(t.id for t in data.tokens if t.kind == "unknown"),
            "byte_fallback": data.config["byte_fallback"],
            "vocab": [[t.bytes.decode("utf-8"), t.score if t.score is not None else 0.0] for t in data.tokens],
        },
    }
    return json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
