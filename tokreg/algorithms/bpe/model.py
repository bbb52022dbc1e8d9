"""The two BPE models tokreg trains, byte-level and character-level: what a version of each
flavour is (its typed config, stored and hashed) and the core encoder it compiles to. Both are
stored as "bpe" and told apart by their config, as is the third, SentencePiece BPE (sp_model.py).

Byte-level BPE (GPT-2, cl100k, o200k style): 256 byte tokens, a pre-tokenizer pattern, and
tiktoken's encoding rule, so a trained version and an imported `.tiktoken` file share one
encoder (`_core.Encoder.byte_bpe`). Lossless: any text decodes back to itself. Config:
{"byte_level": true, "pattern": REGEX}.

Character-level BPE (Sennrich et al.): the corpus' characters as the base alphabet, an
optional end-of-word suffix such as `</w>` kept as a symbol of its own, and the learned merges
applied by rank within each word (`_core.Encoder.char_bpe`). Characters never seen in training
become `<unk>`; whitespace between words is not kept, so it is lossy. Config:
{"byte_level": false, "pattern": REGEX, "end_of_word_suffix": S|null, "unk_token": "<unk>"|null}.

Both take "keep_gaps": true when the text between the pattern's matches is pieces too (Hugging
Face's `Split` with `Isolated`; stored only then, so other versions' hashes never change).

SentencePiece BPE is in sp_model.py: SentencePiece's text handling, which byte-level training
never needs, is imported only with it (about 5 ms of a fresh `tokreg train`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...errors import InputError
from .. import template
from ..interfaces import Model, exact_keys

#: The optional config key of the byte- and character-level flavours (see `gaps_json`).
GAPS_KEYS = frozenset({"keep_gaps"})


def gaps_json(keep_gaps: bool) -> dict[str, Any]:
    """The config entry for `keep_gaps`: present only when true, so that every version that
    keeps only the pattern's matches (all trained ones) hashes as before the setting existed."""
    return {"keep_gaps": True} if keep_gaps else {}


def gaps_of(raw: Mapping[str, Any], title: str) -> bool:
    value = raw.get("keep_gaps", False)
    if not isinstance(value, bool):
        raise InputError(f"this {title} version's config has keep_gaps={value!r:.20}; the version is damaged")
    return value


@dataclass(frozen=True)
class ByteBpeConfig:
    pattern: str
    keep_gaps: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"byte_level": True, "pattern": self.pattern, **gaps_json(self.keep_gaps)}


class ByteBpe(Model[ByteBpeConfig]):
    name = "byte_bpe"
    stored_as = "bpe"
    title = "byte-level BPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("byte_level") is True and "model" not in config and "hf_pipeline" not in config

    def parse_config(self, raw: Mapping[str, Any]) -> ByteBpeConfig:
        exact_keys(raw, {"byte_level", "pattern"}, self.title, GAPS_KEYS | template.KEYS)
        return ByteBpeConfig(pattern=str(raw["pattern"]), keep_gaps=gaps_of(raw, self.title))

    def compile(self, content: bytes, config: ByteBpeConfig) -> _core.Encoder:
        return _core.Encoder.byte_bpe(content, config.pattern, keep_gaps=config.keep_gaps)

    def lossless(self, config: ByteBpeConfig) -> bool:
        return True


@dataclass(frozen=True)
class CharBpeConfig:
    pattern: str
    end_of_word_suffix: Optional[str]
    unk_token: Optional[str]
    keep_gaps: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "byte_level": False,
            "pattern": self.pattern,
            "end_of_word_suffix": self.end_of_word_suffix,
            "unk_token": self.unk_token,
            **gaps_json(self.keep_gaps),
        }


class CharBpe(Model[CharBpeConfig]):
    name = "char_bpe"
    stored_as = "bpe"
    title = "character-level BPE"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("byte_level") is False and "model" not in config and "hf_pipeline" not in config

    def parse_config(self, raw: Mapping[str, Any]) -> CharBpeConfig:
        exact_keys(
            raw,
            {"byte_level", "pattern", "end_of_word_suffix", "unk_token"},
            self.title,
            GAPS_KEYS | template.KEYS,
        )
        if not all(isinstance(raw[k], (str, type(None))) for k in ("end_of_word_suffix", "unk_token")):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return CharBpeConfig(
            pattern=str(raw["pattern"]),
            end_of_word_suffix=raw["end_of_word_suffix"],
            unk_token=raw["unk_token"],
            keep_gaps=gaps_of(raw, self.title),
        )

    def compile(self, content: bytes, config: CharBpeConfig) -> _core.Encoder:
        return _core.Encoder.char_bpe(
            content,
            config.pattern,
            end_of_word=config.end_of_word_suffix,
            unk_token=config.unk_token,
            keep_gaps=config.keep_gaps,
        )

    def lossless(self, config: CharBpeConfig) -> bool:
        return False

    def lossy_by_design(self, config: CharBpeConfig) -> Optional[str]:
        return "classic BPE keeps words, not the whitespace between them: decoding joins them with single spaces"


BYTE_LEVEL = ByteBpe()
CHAR_LEVEL = CharBpe()
