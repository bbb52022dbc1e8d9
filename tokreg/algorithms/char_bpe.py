"""Classic character-level BPE (Sennrich et al.): the corpus' characters as the base alphabet,
an optional end-of-word suffix such as `</w>` kept as a symbol of its own, and the learned
merges applied by rank within each word (`_core.Encoder.char_bpe`). Characters never seen in
training become `<unk>`; whitespace between words is not kept, so it is lossy.

Config (hashed): {"byte_level": false, "pattern": REGEX, "end_of_word_suffix": S|null,
"unk_token": "<unk>"|null}, plus "keep_gaps": true when the text between the pattern's matches
is pieces too (imported `Split` with `Isolated`; stored only then).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core
from ..data import TokenizerData
from ..errors import InputError
from ..formats import hf_json
from . import bpe_hf, bpe_training
from .base import Algorithm, exact_keys
from .training import Progress, TrainOptions


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
            **bpe_hf.gaps_json(self.keep_gaps),
        }


class CharBpe(Algorithm[CharBpeConfig]):
    name = "char_bpe"
    stored_as = "bpe"
    title = "character-level BPE"
    options_type = bpe_training.BpeOptions
    export_formats = ("hf",)

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("byte_level") is False and "model" not in config

    def parse_config(self, raw: Mapping[str, Any]) -> CharBpeConfig:
        exact_keys(raw, {"byte_level", "pattern", "end_of_word_suffix", "unk_token"}, self.title, bpe_hf.GAPS_KEYS)
        if not all(isinstance(raw[k], (str, type(None))) for k in ("end_of_word_suffix", "unk_token")):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return CharBpeConfig(
            pattern=str(raw["pattern"]),
            end_of_word_suffix=raw["end_of_word_suffix"],
            unk_token=raw["unk_token"],
            keep_gaps=bpe_hf.gaps_of(raw, self.title),
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

    def trains(self, options: TrainOptions) -> bool:
        return isinstance(options, bpe_training.BpeOptions) and options.char_level

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, bpe_training.BpeOptions)
        bpe_training.check(options, sizes)

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, bpe_training.BpeOptions)
        return bpe_training.counting(options)

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return "character-level BPE needs UTF-8 text (convert the file, or drop --char-level to train byte-level)"

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        assert isinstance(options, bpe_training.BpeOptions)
        datas, info = bpe_training.train_counts(counts, options, sizes, progress)
        regex = self.counting(options)["pattern"]
        for data in datas:
            data.config = CharBpeConfig(regex, options.end_of_word_suffix, bpe_training.CHAR_LEVEL_UNK).to_json()
        return datas, info

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        config = self.parse_config(data.config)
        if fmt != "hf":
            return super().export(fmt, data, ref)
        if config.end_of_word_suffix:
            raise InputError(
                f"{ref}: character-level BPE with an end-of-word suffix cannot be written as hf: "
                "Hugging Face joins the suffix to a word's last character before merging "
                f"('t{config.end_of_word_suffix}'), while tokreg keeps it a symbol of its own, so the ids "
                "would differ; use --format tokreg"
            )
        doc = bpe_hf.export(
            data, ref, byte_level=False, pattern=config.pattern, keep_gaps=config.keep_gaps, unk=config.unk_token
        )
        return hf_json.dumps(doc)

    def reads_hf(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "BPE" and not bpe_hf.is_byte_level(doc)

    def from_hf(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        data, regex, keep_gaps = bpe_hf.read(doc, model, where, byte_level=False)
        tokens = data.tokens
        n_chars = sum(1 for t in tokens if t.kind == "char")
        if any(t.kind != "char" for t in tokens[:n_chars]) or [t.id for t in tokens] != list(range(len(tokens))):
            raise InputError(
                f"{where}: a character-level vocab whose single characters are not ids 0..N-1 is not supported "
                "by tokreg's BPE (nothing was imported)"
            )
        unk = model.get("unk_token")
        if unk is not None and not isinstance(unk, str):
            raise InputError(f"{where}: model.unk_token is {unk!r:.40}, not a string")
        if unk is not None and unk not in data.special_tokens:
            # tokreg's encoder turns unknown characters into a special token; HF into any token.
            raise InputError(
                f"{where}: the unknown token {unk[:40]!r} is not one of the special added_tokens, which tokreg's "
                "character-level BPE needs it to be (nothing was imported)"
            )
        data.config = CharBpeConfig(regex, None, unk, keep_gaps).to_json()
        return data


ALGORITHM = CharBpe()
