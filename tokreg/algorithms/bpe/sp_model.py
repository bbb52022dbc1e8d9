"""SentencePiece BPE (Llama 1/2, Mistral style `model_type: BPE` models), imported from `.model`
files: what a version is (its typed config, stored and hashed) and the core encoder it compiles
to. SentencePiece's text handling (../sentencepiece_text.py), then merges driven by the pieces'
scores (`_core.Encoder.sp_bpe`, see src/spbpe). tokreg does not train it; `--algo bpe` trains
the two flavours of model.py. Stored as "bpe", like them, and told apart by its config:
{"byte_level": false, "model": "sentencepiece", "normalizer": {...}, "byte_fallback",
"unk_token"}, and "unk_surface" only when not SentencePiece's ` ⁇ ` (../sentencepiece_text.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from .. import sentencepiece_text, template
from ..interfaces import Model, exact_keys
from ..sentencepiece_text import UNK_SURFACE, UNK_SURFACE_KEYS, SpNormalizerConfig, unk_surface_json, unk_surface_of


@dataclass(frozen=True)
class SpBpeConfig:
    normalizer: SpNormalizerConfig
    byte_fallback: bool
    unk_token: str
    unk_surface: str = UNK_SURFACE  # what the unknown piece decodes to

    def to_json(self) -> dict[str, Any]:
        return {
            "byte_level": False,
            "model": "sentencepiece",
            "normalizer": self.normalizer.to_json(),
            "byte_fallback": self.byte_fallback,
            "unk_token": self.unk_token,
            **unk_surface_json(self.unk_surface),
        }


class SpBpe(Model[SpBpeConfig]):
    name = "sp_bpe"
    stored_as = "bpe"
    title = "SentencePiece BPE"
    special_kind = "control"
    score_label = "score"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "sentencepiece"

    def parse_config(self, raw: Mapping[str, Any]) -> SpBpeConfig:
        keys = {"byte_level", "model", "normalizer", "byte_fallback", "unk_token"}
        exact_keys(raw, keys, self.title, template.KEYS | UNK_SURFACE_KEYS)
        return SpBpeConfig(
            normalizer=SpNormalizerConfig.from_json(raw["normalizer"], self.title),
            byte_fallback=bool(raw["byte_fallback"]),
            unk_token=str(raw["unk_token"]),
            unk_surface=unk_surface_of(raw, self.title),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The normalizer as its rule's name, whether the rules are custom, their hash."""
        return {**raw, "normalizer": self.parse_config(raw).normalizer.summary()}

    def compile(self, content: bytes, config: SpBpeConfig) -> _core.Encoder:
        return _core.Encoder.sp_bpe(content, **config.normalizer.core_args(), unk_surface=config.unk_surface)

    def lossless(self, config: SpBpeConfig) -> bool:
        return sentencepiece_text.lossless(config.normalizer, config.byte_fallback)

    def lossy_by_design(self, config: SpBpeConfig) -> Optional[str]:
        return sentencepiece_text.lossy_by_design(config.normalizer, config.byte_fallback)


SENTENCEPIECE = SpBpe()
