"""Hugging Face `tokenizer.json` for Unigram: normalizers that put a ▁ in front and turn spaces
into ▁ (`Prepend`, `Replace`; as HF writes SentencePiece models itself: its `Metaspace`
pre-tokenizer would skip the ▁ when the text already starts with a space, SentencePiece never
does), no pre-tokenizer, and the Unigram model with its log probabilities. Control and unknown
pieces become added special tokens; byte fallback carries over; whitespace collapsing, when the
version uses it, comes first as two more Replace normalizers. Reading accepts exactly this."""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..result import TokenizerData, TokenRow
from ..trainers.unigram import encoding_config

_COLLAPSE = [
    {"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
]


_PREPEND = {"type": "Prepend", "prepend": "\u2581"}
_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}


def _normalizers(collapse: bool, dummy_prefix: bool) -> list[dict[str, Any]]:
    return (_COLLAPSE if collapse else []) + ([_PREPEND] if dummy_prefix else []) + [_SPACES]


def export(data: TokenizerData) -> dict[str, Any]:
    cfg, n = data.config, data.config["normalizer"]
    added = [{"id": t.id, "content": t.bytes.decode("utf-8"), "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for t in data.tokens if t.kind in ("control", "unknown")]
    unk = next(t.id for t in data.tokens if t.kind == "unknown")
    decoders: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]
    if cfg.get("byte_fallback"):
        decoders += [{"type": "ByteFallback"}, {"type": "Fuse"}]
    if n["add_dummy_prefix"]:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": _normalizers(n["remove_extra_whitespaces"],
                                                                       n["add_dummy_prefix"])},
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {"type": "Unigram", "unk_id": unk, "byte_fallback": bool(cfg.get("byte_fallback")),
                  "vocab": [[t.bytes.decode("utf-8"), t.score if t.score is not None else 0.0] for t in data.tokens]},
    }


def _kind(piece: str, score: float, unk_id: int, i: int, specials: set[str], byte_fallback: bool) -> str:
    if i == unk_id:
        return "unknown"
    if piece in specials:
        return "control"
    if byte_fallback and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return "byte"
    return "normal"


def read(doc: dict[str, Any], model: dict[str, Any], where: str) -> TokenizerData:
    def refuse(what: str) -> InputError:
        return InputError(f"{where}: {what} is not supported by tokreg's Unigram (nothing was imported)")

    if doc.get("pre_tokenizer") is not None:
        pre = doc["pre_tokenizer"]
        raise refuse(f"the pre-tokenizer {pre.get('type') if isinstance(pre, dict) else pre!r} (tokreg writes "
                     "SentencePiece-style Unigram files as Prepend + Replace normalizers)")
    norm = doc.get("normalizer")
    steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" else None
    forms = {(c, p): _normalizers(c, p) for c in (False, True) for p in (False, True)}
    found = next((key for key, value in forms.items() if value == steps), None)
    if found is None:
        raise refuse("this normalizer (expected Prepend('▁') and Replace(' ', '▁'), as SentencePiece models use)")
    collapse, dummy_prefix = found
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        raise InputError(f"{where}: the Unigram model has no vocab")
    unk_id = model.get("unk_id")
    if not isinstance(unk_id, int) or not 0 <= unk_id < len(vocab):
        raise refuse("a Unigram model without an unknown piece")
    byte_fallback = bool(model.get("byte_fallback"))
    specials = {a["content"] for a in doc.get("added_tokens", []) if a.get("special")}
    tokens = [TokenRow(id=i, bytes=p.encode("utf-8"), kind=_kind(p, s, unk_id, i, specials, byte_fallback),
                       score=float(s)) for i, (p, s) in enumerate(vocab)]
    config = encoding_config(byte_fallback=byte_fallback, unk_token=vocab[unk_id][0],
                             add_dummy_prefix=dummy_prefix, remove_extra_whitespaces=collapse)
    return TokenizerData(algorithm="unigram", config=config, tokens=tokens, source="import:hf")
