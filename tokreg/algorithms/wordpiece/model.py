"""The WordPiece model (BERT): what a version is and how it encodes. BERT normalization and
pre-tokenization (the core's `normalize::BertNormalizer`), then greedy longest-match-first
encoding per word over a trie (`_core.Encoder.wordpiece`), the unknown token for a word that
cannot be covered. Lossy: normalization, whitespace and punctuation splitting, the unknown token.

Config (hashed): {"normalizer": {clean_text, handle_chinese_chars, strip_accents, lowercase,
unicode_form}, "pre_tokenizer": "bert", "continuing_prefix", "unk_token",
"max_input_chars_per_word"}, and the decoder's settings only where they are not BERT's (so
that versions made before them keep their hashes): "decode_cleanup": false (no clean-up of
` .`, ` ,`, ` n't`, ... as Hugging Face's WordPiece decoder does with `cleanup: true`), and
"decode_prefix": the prefix the decoder glues on when it is not the continuing prefix ("": a
file without a decoder, whose tokens Hugging Face joins with spaces).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...errors import InputError
from .. import template
from ..interfaces import Model, exact_keys

FORMS = ("none", "nfc", "nfkc", "nfd", "nfkd")
#: The decoder's settings, stored only when not BERT's (see the module's docstring).
DECODER_KEYS = frozenset({"decode_cleanup", "decode_prefix"})


@dataclass(frozen=True)
class BertNormalizerConfig:
    clean_text: bool = True  # drop control characters, map whitespace to spaces
    handle_chinese_chars: bool = True  # isolate each CJK character as a word
    strip_accents: Optional[bool] = None  # None: strip exactly when lowercasing (BERT's rule)
    lowercase: bool = False
    unicode_form: Optional[str] = None  # applied before the BERT steps: nfc | nfkc | nfd | nfkd

    def to_json(self) -> dict[str, Any]:
        return {
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
            "unicode_form": self.unicode_form,
        }


@dataclass(frozen=True)
class WordPieceConfig:
    normalizer: BertNormalizerConfig
    continuing_prefix: str
    unk_token: str
    max_input_chars_per_word: int
    decode_cleanup: bool = True  # the decoder's clean-up (BERT's default)
    decode_prefix: Optional[str] = None  # the decoder's prefix; None: continuing_prefix

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizer": self.normalizer.to_json(),
            "pre_tokenizer": "bert",
            "continuing_prefix": self.continuing_prefix,
            "unk_token": self.unk_token,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            **({} if self.decode_cleanup else {"decode_cleanup": False}),
            **({} if self.decode_prefix is None else {"decode_prefix": self.decode_prefix}),
        }


def token_kind(token: str, prefix: str, specials: set[str]) -> str:
    """A WordPiece token's kind, from the token alone (so imports hash like training output):
    special; char (one character, or the prefix and one character: the alphabet); merged."""
    if token in specials:
        return "special"
    body = token[len(prefix) :] if prefix and token.startswith(prefix) and token != prefix else token
    return "char" if len(body) == 1 else "merged"


class WordPiece(Model[WordPieceConfig]):
    name = "wordpiece"
    stored_as = "wordpiece"
    title = "WordPiece"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return "hf_pipeline" not in config

    def parse_config(self, raw: Mapping[str, Any]) -> WordPieceConfig:
        exact_keys(
            raw,
            {"normalizer", "pre_tokenizer", "continuing_prefix", "unk_token", "max_input_chars_per_word"},
            self.title,
            template.KEYS | DECODER_KEYS,
        )
        n = raw["normalizer"]
        if not isinstance(n, dict):
            raise InputError(f"this {self.title} version's normalizer config is {n!r:.40}; the version is damaged")
        exact_keys(n, {"clean_text", "handle_chinese_chars", "strip_accents", "lowercase", "unicode_form"}, self.title)
        if raw["pre_tokenizer"] != "bert":
            raise InputError(f"WordPiece pre-tokenizer {raw['pre_tokenizer']!r:.40} is not implemented by this tokreg")
        # Stored configs can come from a file (a tokreg file's content is only as good as its
        # hash): every value must have its type before it reaches the core.
        max_chars = raw["max_input_chars_per_word"]
        if (
            not all(isinstance(n[k], bool) for k in ("clean_text", "handle_chinese_chars", "lowercase"))
            or not isinstance(n["strip_accents"], (bool, type(None)))
            or n["unicode_form"] not in (None, *FORMS[1:])
            or not isinstance(raw["continuing_prefix"], str)
            or not raw["continuing_prefix"]
            or not isinstance(raw["unk_token"], str)
            or not isinstance(max_chars, int)
            or isinstance(max_chars, bool)
            or not 1 <= max_chars <= 2**32
            or not isinstance(raw.get("decode_cleanup", True), bool)
            or not isinstance(raw.get("decode_prefix", ""), str)
        ):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return WordPieceConfig(
            normalizer=BertNormalizerConfig(**n),
            continuing_prefix=str(raw["continuing_prefix"]),
            unk_token=str(raw["unk_token"]),
            max_input_chars_per_word=int(raw["max_input_chars_per_word"]),
            decode_cleanup=raw.get("decode_cleanup", True),
            decode_prefix=raw.get("decode_prefix"),
        )

    def compile(self, content: bytes, config: WordPieceConfig) -> _core.Encoder:
        return _core.Encoder.wordpiece(
            content,
            config.unk_token,
            continuing_prefix=config.continuing_prefix,
            max_input_chars_per_word=config.max_input_chars_per_word,
            decode_prefix=config.decode_prefix,
            decode_cleanup=config.decode_cleanup,
            **config.normalizer.to_json(),
        )

    def lossless(self, config: WordPieceConfig) -> bool:
        return False

    def lossy_by_design(self, config: WordPieceConfig) -> Optional[str]:
        n = config.normalizer
        strips = n.lowercase if n.strip_accents is None else n.strip_accents
        changes = [w for w, on in (("lowercased", n.lowercase), ("without accents", strips)) if on]
        return "WordPiece keeps words, not the whitespace between them: decoding joins them with single spaces" + (
            f", {' and '.join(changes)}" if changes else ""
        )


WORDPIECE = WordPiece()
