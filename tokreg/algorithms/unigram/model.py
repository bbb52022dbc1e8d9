"""The Unigram LM model (SentencePiece style): what a version is and how it encodes. Encoding
is the Viterbi best path over a trie lattice with SentencePiece's exact rules
(`_core.Encoder.unigram`), after SentencePiece's text handling (../sentencepiece_text.py);
n-best and sampling give subword regularization. Every piece keeps its log probability as its
score.

Config (hashed): {"normalizer": {...} (../sentencepiece_text.py), "byte_fallback", "unk_token"},
and "unk_surface" (what the unknown piece decodes to) only when not SentencePiece's ` ⁇ `.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import _core
from .. import sentencepiece_text, template
from ..interfaces import Model, exact_keys
from ..sentencepiece_text import UNK_SURFACE, UNK_SURFACE_KEYS, SpNormalizerConfig, unk_surface_json, unk_surface_of


@dataclass(frozen=True)
class UnigramConfig:
    normalizer: SpNormalizerConfig
    byte_fallback: bool
    unk_token: str
    unk_surface: str = UNK_SURFACE  # what the unknown piece decodes to

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizer": self.normalizer.to_json(),
            "byte_fallback": self.byte_fallback,
            "unk_token": self.unk_token,
            **unk_surface_json(self.unk_surface),
        }


class Unigram(Model[UnigramConfig]):
    name = "unigram"
    stored_as = "unigram"
    title = "Unigram"
    score_label = "log prob"
    special_kind = "control"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return True

    def parse_config(self, raw: Mapping[str, Any]) -> UnigramConfig:
        exact_keys(raw, {"normalizer", "byte_fallback", "unk_token"}, self.title, template.KEYS | UNK_SURFACE_KEYS)
        return UnigramConfig(
            normalizer=SpNormalizerConfig.from_json(raw["normalizer"], self.title),
            byte_fallback=bool(raw["byte_fallback"]),
            unk_token=str(raw["unk_token"]),
            unk_surface=unk_surface_of(raw, self.title),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The normalizer as its rule's name, whether the rules are custom, their hash."""
        return {**raw, "normalizer": self.parse_config(raw).normalizer.summary()}

    def compile(self, content: bytes, config: UnigramConfig) -> _core.Encoder:
        return _core.Encoder.unigram(content, **config.normalizer.core_args(), unk_surface=config.unk_surface)

    def lossless(self, config: UnigramConfig) -> bool:
        return sentencepiece_text.lossless(config.normalizer, config.byte_fallback)


UNIGRAM = Unigram()
