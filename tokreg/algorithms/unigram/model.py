"""The Unigram LM model (SentencePiece style): what a version is and how it encodes. Encoding
is the Viterbi best path over a trie lattice with SentencePiece's exact rules
(`_core.Encoder.unigram`), after SentencePiece's text handling (../sentencepiece_text.py);
n-best and sampling give subword regularization. Every piece keeps its log probability as its
score.

Config (hashed): {"normalizer": {...} (../sentencepiece_text.py), "byte_fallback", "unk_token"},
and "unk_surface" (what the unknown piece decodes to) only when not SentencePiece's ` ⁇ `,
plus "hf_pipeline" (../hf_pipeline.py) only for a version imported from a Hugging Face layout
that SentencePiece's text handling does not reproduce: such a version runs HF's own steps and
HF's Unigram arithmetic (`_core.Encoder.hf_unigram`: f64 path scores, HF's unknown and tie
rules), and its SentencePiece normalizer is unused (identity, no flags).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from .. import hf_pipeline, sentencepiece_text, template
from ..hf_pipeline import HfPipeline
from ..interfaces import Model, exact_keys
from ..sentencepiece_text import UNK_SURFACE, UNK_SURFACE_KEYS, SpNormalizerConfig, unk_surface_json, unk_surface_of


@dataclass(frozen=True)
class UnigramConfig:
    normalizer: SpNormalizerConfig
    byte_fallback: bool
    unk_token: str
    unk_surface: str = UNK_SURFACE  # what the unknown piece decodes to
    hf: Optional[HfPipeline] = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "normalizer": self.normalizer.to_json(),
            "byte_fallback": self.byte_fallback,
            "unk_token": self.unk_token,
            **unk_surface_json(self.unk_surface),
        }
        if self.hf is not None:
            out[hf_pipeline.KEY] = self.hf.to_json()
        return out


class Unigram(Model[UnigramConfig]):
    name = "unigram"
    stored_as = "unigram"
    title = "Unigram"
    score_label = "log prob"
    special_kind = "control"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return True

    def parse_config(self, raw: Mapping[str, Any]) -> UnigramConfig:
        exact_keys(
            raw,
            {"normalizer", "byte_fallback", "unk_token"},
            self.title,
            template.KEYS | UNK_SURFACE_KEYS | {hf_pipeline.KEY},
        )
        return UnigramConfig(
            normalizer=SpNormalizerConfig.from_json(raw["normalizer"], self.title),
            byte_fallback=bool(raw["byte_fallback"]),
            unk_token=str(raw["unk_token"]),
            unk_surface=unk_surface_of(raw, self.title),
            hf=HfPipeline.from_json(raw[hf_pipeline.KEY], self.title) if hf_pipeline.KEY in raw else None,
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The normalizer as its rule's name, whether the rules are custom, their hash."""
        cfg = self.parse_config(raw)
        out = {**raw, "normalizer": cfg.normalizer.summary()}
        if cfg.hf is not None:
            out[hf_pipeline.KEY] = cfg.hf.summary()
        return out

    def compile(self, content: bytes, config: UnigramConfig) -> _core.Encoder:
        if config.hf is not None:
            return _core.Encoder.hf_unigram(content, **config.hf.core_args(), byte_fallback=config.byte_fallback)
        return _core.Encoder.unigram(content, **config.normalizer.core_args(), unk_surface=config.unk_surface)

    def lossless(self, config: UnigramConfig) -> bool:
        if config.hf is not None:
            return False
        return sentencepiece_text.lossless(config.normalizer, config.byte_fallback)

    def lossy_by_design(self, config: UnigramConfig) -> Optional[str]:
        if config.hf is not None:
            return "a Hugging Face pipeline's normalizer, pre-tokenizer and decoder decide what comes back"
        return sentencepiece_text.lossy_by_design(config.normalizer, config.byte_fallback)


UNIGRAM = Unigram()
