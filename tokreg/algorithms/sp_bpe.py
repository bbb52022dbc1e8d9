"""SentencePiece BPE (Llama 1/2, Mistral style `model_type: BPE` models), imported from `.model`
files: SentencePiece's text handling (sp_text.py), then merges driven by the pieces' scores
(`_core.Encoder.sp_bpe`, see src/spbpe). tokreg does not train it; `--algo bpe` trains
GPT-style BPE.

Config (hashed): {"byte_level": false, "model": "sentencepiece", "normalizer": {...},
"byte_fallback", "unk_token"}.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..data import TokenizerData
from ..formats.sentencepiece_proto import Model as SpModel
from . import sp_text, template
from .base import Algorithm, exact_keys
from .sp_text import SpNormalizerConfig


@dataclass(frozen=True)
class SpBpeConfig:
    normalizer: SpNormalizerConfig
    byte_fallback: bool
    unk_token: str

    def to_json(self) -> dict[str, Any]:
        return {
            "byte_level": False,
            "model": "sentencepiece",
            "normalizer": self.normalizer.to_json(),
            "byte_fallback": self.byte_fallback,
            "unk_token": self.unk_token,
        }


class SpBpe(Algorithm[SpBpeConfig]):
    name = "sp_bpe"
    stored_as = "bpe"
    title = "SentencePiece BPE"
    special_kind = "control"
    score_label = "score"
    sentencepiece_model_type = 2
    export_formats = ("sentencepiece",)

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("model") == "sentencepiece"

    def parse_config(self, raw: Mapping[str, Any]) -> SpBpeConfig:
        exact_keys(raw, {"byte_level", "model", "normalizer", "byte_fallback", "unk_token"}, self.title, template.KEYS)
        return SpBpeConfig(
            normalizer=SpNormalizerConfig.from_json(raw["normalizer"], self.title),
            byte_fallback=bool(raw["byte_fallback"]),
            unk_token=str(raw["unk_token"]),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The normalizer as its rule's name, whether the rules are custom, their hash."""
        return {**raw, "normalizer": self.parse_config(raw).normalizer.summary()}

    def compile(self, content: bytes, config: SpBpeConfig) -> _core.Encoder:
        return _core.Encoder.sp_bpe(content, **config.normalizer.core_args())

    def lossless(self, config: SpBpeConfig) -> bool:
        return sp_text.lossless(config.normalizer, config.byte_fallback)

    def from_sentencepiece(self, model: SpModel, where: str) -> TokenizerData:
        tokens, unk = sp_text.model_tokens(model, where)
        config = SpBpeConfig(sp_text.model_normalizer(model, where), model.byte_fallback, unk)
        return TokenizerData(algorithm="bpe", config=config.to_json(), tokens=tokens, source="import:sentencepiece")

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        if fmt != "sentencepiece":
            return super().export(fmt, data, ref)
        cfg = self.parse_config(data.config)
        return sp_text.export_model(data, cfg.normalizer, cfg.byte_fallback, model_type=2)


ALGORITHM = SpBpe()
