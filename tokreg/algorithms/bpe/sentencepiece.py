"""SentencePiece `.model` files of `model_type: BPE` (Llama 1/2, Mistral style), both ways: the
pieces with their scores and the normalizer, mapped by ../sentencepiece_model.py."""

from __future__ import annotations

from ...data import TokenizerData
from ...formats.sentencepiece_proto import Model as SpModel
from .. import sentencepiece_model
from ..interfaces import SentencePieceCodec
from .sp_model import SENTENCEPIECE, SpBpeConfig


class SpBpeModelFile(SentencePieceCodec):
    model_type = 2

    def read(self, model: SpModel, where: str) -> TokenizerData:
        tokens, unk = sentencepiece_model.model_tokens(model, where)
        normalizer = sentencepiece_model.model_normalizer(model, where)
        config = SpBpeConfig(normalizer, model.byte_fallback, unk, unk_surface=model.unk_surface)
        return TokenizerData(algorithm="bpe", config=config.to_json(), tokens=tokens, source="import:sentencepiece")

    def write(self, data: TokenizerData, ref: str) -> bytes:
        cfg = SENTENCEPIECE.parse_config(data.config)
        return sentencepiece_model.export_model(
            data, cfg.normalizer, cfg.byte_fallback, model_type=self.model_type, unk_surface=cfg.unk_surface
        )
