"""SentencePiece `.model` files of `model_type: UNIGRAM`, both ways: the pieces with their log
probabilities and the normalizer, mapped by ../sentencepiece_model.py."""

from __future__ import annotations

from ...data import TokenizerData
from ...errors import InputError
from ...formats.sentencepiece_proto import Model as SpModel
from .. import sentencepiece_model
from ..interfaces import SentencePieceCodec
from .model import UNIGRAM, UnigramConfig


class UnigramModelFile(SentencePieceCodec):
    model_type = 1

    def read(self, model: SpModel, where: str) -> TokenizerData:
        tokens, unk = sentencepiece_model.model_tokens(model, where)
        normalizer = sentencepiece_model.model_normalizer(model, where)
        config = UnigramConfig(normalizer, model.byte_fallback, unk, unk_surface=model.unk_surface)
        return TokenizerData(algorithm="unigram", config=config.to_json(), tokens=tokens, source="import:sentencepiece")

    def write(self, data: TokenizerData, ref: str) -> bytes:
        cfg = UNIGRAM.parse_config(data.config)
        if cfg.hf is not None:
            raise InputError(
                f"{ref} runs a Hugging Face pipeline (its normalizer, pre-tokenizer and HF's Unigram arithmetic), "
                "which a SentencePiece model cannot hold; export it with --format hf or tokreg"
            )
        return sentencepiece_model.export_model(
            data, cfg.normalizer, cfg.byte_fallback, model_type=self.model_type, unk_surface=cfg.unk_surface
        )
