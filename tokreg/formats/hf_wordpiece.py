"""Hugging Face `tokenizer.json` for WordPiece: BertNormalizer (after an optional NFC/NFKC/NFD/NFKD
step), BertPreTokenizer, the WordPiece model and decoder. Special tokens become added tokens.
Reading accepts exactly the pipelines tokreg's WordPiece encoder implements and refuses the rest."""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..result import TokenizerData, TokenRow
from ..trainers.wordpiece import token_kind

_FORMS = {"NFC": "nfc", "NFKC": "nfkc", "NFD": "nfd", "NFKD": "nfkd"}


def export(data: TokenizerData, added: list[dict[str, Any]]) -> dict[str, Any]:
    cfg = data.config
    n = cfg["normalizer"]
    bert = {"type": "BertNormalizer", "clean_text": n["clean_text"], "handle_chinese_chars": n["handle_chinese_chars"],
            "strip_accents": n["strip_accents"], "lowercase": n["lowercase"]}
    form = n.get("unicode_form")
    normalizer = bert if not form else {"type": "Sequence", "normalizers": [{"type": form.upper()}, bert]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": cfg["continuing_prefix"], "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": cfg["unk_token"],
            "continuing_subword_prefix": cfg["continuing_prefix"],
            "max_input_chars_per_word": cfg["max_input_chars_per_word"],
            "vocab": {t.bytes.decode("utf-8"): t.id for t in data.tokens},
        },
    }


def read(doc: dict[str, Any], model: dict[str, Any], where: str) -> TokenizerData:
    def refuse(what: str) -> InputError:
        return InputError(f"{where}: {what} is not supported by tokreg's WordPiece (nothing was imported)")

    norm = doc.get("normalizer")
    form = None
    if isinstance(norm, dict) and norm.get("type") == "Sequence":
        steps = norm.get("normalizers", [])
        if len(steps) != 2 or steps[0].get("type") not in _FORMS:
            raise refuse(f"the normalizer sequence {[s.get('type') for s in steps]}")
        form, norm = _FORMS[steps[0]["type"]], steps[1]
    if not isinstance(norm, dict) or norm.get("type") != "BertNormalizer":
        raise refuse(f"the normalizer {None if not isinstance(norm, dict) else norm.get('type')}")
    pre = doc.get("pre_tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        raise refuse(f"the pre-tokenizer {None if not isinstance(pre, dict) else pre.get('type')}")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise InputError(f"{where}: the WordPiece model has no vocab")
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise refuse("a vocab whose ids are not 0..n-1")
    unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
    if unk not in vocab:
        raise InputError(f"{where}: the unknown token {unk!r} is not in the vocab")
    specials = {a["content"] for a in doc.get("added_tokens", []) if a.get("special")}
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    tokens = [TokenRow(id=i, bytes=t.encode("utf-8"), kind=token_kind(t, prefix, specials)) for t, i in by_id]
    config = {
        "normalizer": {"clean_text": bool(norm.get("clean_text", True)),
                       "handle_chinese_chars": bool(norm.get("handle_chinese_chars", True)),
                       "strip_accents": norm.get("strip_accents"), "lowercase": bool(norm.get("lowercase", True)),
                       "unicode_form": form},
        "pre_tokenizer": "bert",
        "continuing_prefix": prefix,
        "unk_token": unk,
        "max_input_chars_per_word": int(model.get("max_input_chars_per_word", 100)),
    }
    return TokenizerData(algorithm="wordpiece", config=config, tokens=tokens, source="import:hf")
