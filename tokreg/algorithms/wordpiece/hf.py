"""Hugging Face `tokenizer.json` for WordPiece, both ways: BertNormalizer (after an optional
NFC/NFKC/NFD/NFKD step), BertPreTokenizer, the WordPiece model and decoder; read only in the
pipelines tokreg's WordPiece encoder implements. The decoder's prefix and cleanup are carried
(no decoder: HF joins the tokens with spaces, kept as an empty decode prefix).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Optional

from ...data import TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import template
from ..interfaces import HfCodec
from . import hf_pipe
from .model import WORDPIECE, BertNormalizerConfig, WordPieceConfig, token_kind

_HF_FORMS = {"NFC": "nfc", "NFKC": "nfkc", "NFD": "nfd", "NFKD": "nfkd"}


class WordPieceHf(HfCodec):
    def write(self, data: TokenizerData, ref: str) -> bytes:
        """A tokenizer.json: BertNormalizer (after an optional NFC/NFKC/NFD/NFKD step),
        BertPreTokenizer, the WordPiece model and decoder; special tokens as added tokens."""
        cfg = WORDPIECE.parse_config(data.config)
        n = cfg.normalizer
        bert = {
            "type": "BertNormalizer",
            "clean_text": n.clean_text,
            "handle_chinese_chars": n.handle_chinese_chars,
            "strip_accents": n.strip_accents,
            "lowercase": n.lowercase,
        }
        form = n.unicode_form
        normalizer = bert if not form else {"type": "Sequence", "normalizers": [{"type": form.upper()}, bert]}
        return hf_json.dumps(
            {
                "version": "1.0",
                "truncation": None,
                "padding": None,
                "added_tokens": hf_json.added_tokens(
                    (t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind == "special"
                ),
                "normalizer": normalizer,
                "pre_tokenizer": {"type": "BertPreTokenizer"},
                "post_processor": template.hf_for(data),
                "decoder": _decoder(cfg),
                "model": {
                    "type": "WordPiece",
                    "unk_token": cfg.unk_token,
                    "continuing_subword_prefix": cfg.continuing_prefix,
                    "max_input_chars_per_word": cfg.max_input_chars_per_word,
                    "vocab": {t.bytes.decode("utf-8"): t.id for t in data.tokens},
                },
            }
        )

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "WordPiece"

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """The pipelines tokreg's WordPiece encoder implements; any other is read by
        hf_pipe.py when it can run every step (else its reason is given)."""
        try:
            return self._read(doc, model, where)
        except InputError as refused:
            return hf_pipe.fallback(doc, model, where, refused)

    def _read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """Accepts exactly the pipelines tokreg's WordPiece encoder implements."""

        def refuse(what: str) -> InputError:
            return InputError(f"{where}: {what} is not supported by tokreg's WordPiece (nothing was imported)")

        norm = doc.get("normalizer")
        form = None
        if isinstance(norm, dict) and norm.get("type") == "Sequence":
            steps = norm.get("normalizers", [])
            if (
                not isinstance(steps, list)
                or len(steps) != 2
                or not isinstance(steps[0], dict)
                or (steps[0].get("type") not in _HF_FORMS)
            ):
                raise refuse(f"the normalizer sequence {str(steps)[:80]}")
            form, norm = _HF_FORMS[steps[0]["type"]], steps[1]
        if not isinstance(norm, dict) or norm.get("type") != "BertNormalizer":
            raise refuse(f"the normalizer {str(norm.get('type') if isinstance(norm, dict) else None)[:40]}")
        pre = doc.get("pre_tokenizer")
        if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
            raise refuse(f"the pre-tokenizer {str(pre.get('type') if isinstance(pre, dict) else None)[:40]}")
        vocab = model.get("vocab")
        if (
            not isinstance(vocab, dict)
            or not vocab
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in vocab.values())
        ):
            raise InputError(f"{where}: the WordPiece model has no vocab of token -> id")
        ids = sorted(vocab.values())
        if ids != list(range(len(ids))):
            raise refuse("a vocab whose ids are not 0..n-1")
        if "" in vocab:
            raise InputError(f"{where}: the vocab has an empty token (id {vocab['']}); remove it")
        unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
        if not isinstance(unk, str) or unk not in vocab:
            raise InputError(f"{where}: the unknown token {unk!r:.40} is not in the vocab")
        if not isinstance(prefix, str) or not prefix:
            raise InputError(f"{where}: continuing_subword_prefix {prefix!r:.40} is not a non-empty string")
        max_chars = model.get("max_input_chars_per_word", 100)
        if not isinstance(max_chars, int) or isinstance(max_chars, bool) or not 1 <= max_chars <= 2**32:
            raise InputError(f"{where}: max_input_chars_per_word {max_chars!r:.40} is not a positive integer")
        flags = {k: norm.get(k, True) for k in ("clean_text", "handle_chinese_chars", "lowercase")}
        strip = norm.get("strip_accents")
        if not all(isinstance(v, bool) for v in flags.values()) or not isinstance(strip, (bool, type(None))):
            raise InputError(f"{where}: a BertNormalizer setting is not true, false (or null for strip_accents)")
        added = hf_json.read_added(doc, where, normalized_ok=False)
        if any(vocab.get(t) != i for i, t in added.items()):
            raise InputError(f"{where}: an added token is not in the vocab with its id; the file is damaged")
        specials = set(added.values())
        by_id = sorted(vocab.items(), key=lambda kv: kv[1])
        tokens = [TokenRow(id=i, bytes=t.encode("utf-8"), kind=token_kind(t, prefix, specials)) for t, i in by_id]
        cleanup, decode_prefix = _read_decoder(doc.get("decoder"), prefix, refuse)
        config = WordPieceConfig(
            normalizer=BertNormalizerConfig(
                clean_text=flags["clean_text"],
                handle_chinese_chars=flags["handle_chinese_chars"],
                strip_accents=strip,
                lowercase=flags["lowercase"],
                unicode_form=form,
            ),
            continuing_prefix=prefix,
            unk_token=unk,
            max_input_chars_per_word=max_chars,
            decode_cleanup=cleanup,
            decode_prefix=decode_prefix,
        )
        return TokenizerData(algorithm="wordpiece", config=config.to_json(), tokens=tokens, source="import:hf")


def _decoder(cfg: WordPieceConfig) -> Optional[dict[str, Any]]:
    """The version's decoder as HF writes it (none for an empty decode prefix)."""
    if cfg.decode_prefix == "":
        return None
    prefix = cfg.continuing_prefix if cfg.decode_prefix is None else cfg.decode_prefix
    return {"type": "WordPiece", "prefix": prefix, "cleanup": cfg.decode_cleanup}


def _read_decoder(decoder: Any, prefix: str, refuse: Callable[[str], InputError]) -> tuple[bool, Optional[str]]:
    """(cleanup, decode prefix) of a file's decoder: a WordPiece decoder's settings (HF's
    defaults: "##", cleanup on); no decoder joins the tokens with spaces (prefix "", no
    clean-up). Any other decoder is refused."""
    if decoder is None:
        return False, ""
    if not isinstance(decoder, dict) or decoder.get("type") != "WordPiece":
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        raise refuse(f"the decoder {str(kind)[:40]}")
    cleanup, dprefix = decoder.get("cleanup", True), decoder.get("prefix", "##")
    if not isinstance(cleanup, bool) or not isinstance(dprefix, str) or not dprefix:
        raise refuse(f"the WordPiece decoder {str(decoder)[:80]}")
    return cleanup, None if dprefix == prefix else dprefix
