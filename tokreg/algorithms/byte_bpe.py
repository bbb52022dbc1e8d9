"""Byte-level BPE (GPT-2, cl100k, o200k style): 256 byte tokens, a pre-tokenizer pattern, and
tiktoken's encoding rule, so a trained version and an imported `.tiktoken` file share one
encoder (`_core.Encoder.byte_bpe`). Lossless: any text decodes back to itself.

Config (hashed): {"byte_level": true, "pattern": REGEX}, plus "keep_gaps": true when the text
between the pattern's matches is pieces too (Hugging Face's `Split` with `Isolated`; stored
only then, so other versions' hashes never change).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core, patterns
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError
from ..formats import hf_json, tiktoken_file
from . import bpe_hf, bpe_training
from .base import Algorithm, exact_keys
from .training import Progress, TrainOptions


@dataclass(frozen=True)
class ByteBpeConfig:
    pattern: str
    keep_gaps: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"byte_level": True, "pattern": self.pattern, **bpe_hf.gaps_json(self.keep_gaps)}


class ByteBpe(Algorithm[ByteBpeConfig]):
    name = "byte_bpe"
    stored_as = "bpe"
    title = "byte-level BPE"
    options_type = bpe_training.BpeOptions
    export_formats = ("hf", "tiktoken")

    def owns(self, config: Mapping[str, Any]) -> bool:
        return config.get("byte_level") is True and "model" not in config

    def parse_config(self, raw: Mapping[str, Any]) -> ByteBpeConfig:
        exact_keys(raw, {"byte_level", "pattern"}, self.title, bpe_hf.GAPS_KEYS)
        return ByteBpeConfig(pattern=str(raw["pattern"]), keep_gaps=bpe_hf.gaps_of(raw, self.title))

    def compile(self, content: bytes, config: ByteBpeConfig) -> _core.Encoder:
        return _core.Encoder.byte_bpe(content, config.pattern, keep_gaps=config.keep_gaps)

    def lossless(self, config: ByteBpeConfig) -> bool:
        return True

    def trains(self, options: TrainOptions) -> bool:
        return isinstance(options, bpe_training.BpeOptions) and not options.char_level

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, bpe_training.BpeOptions)
        bpe_training.check(options, sizes)

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, bpe_training.BpeOptions)
        return bpe_training.counting(options)

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        assert isinstance(options, bpe_training.BpeOptions)
        datas, info = bpe_training.train_counts(counts, options, sizes, progress)
        regex = self.counting(options)["pattern"]
        for data in datas:
            data.config = ByteBpeConfig(regex).to_json()
        return datas, info

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        config = self.parse_config(data.config)
        if fmt == "hf":
            return hf_json.dumps(
                bpe_hf.export(data, ref, byte_level=True, pattern=config.pattern, keep_gaps=config.keep_gaps, unk=None)
            )
        if fmt == "tiktoken":
            return tiktoken_file.dumps([(t.id, t.bytes) for t in data.tokens if t.kind != "special"])
        return super().export(fmt, data, ref)

    def reads_hf(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "BPE" and bpe_hf.is_byte_level(doc)

    def from_hf(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        data, regex, keep_gaps = bpe_hf.read(doc, model, where, byte_level=True)
        data.config = ByteBpeConfig(regex, keep_gaps).to_json()
        return data

    def from_tiktoken(
        self, ranks: dict[bytes, int], where: str, *, pattern: str, specials: Optional[dict[str, int]] = None
    ) -> TokenizerData:
        """A `.tiktoken` rank map (token bytes -> rank = id) with its pattern and special tokens.
        The merge list is recovered from the ranks (each token split by the merges of lower
        rank), so an imported vocabulary is stored, queried and diffed like a trained one."""
        _, regex = patterns.resolve(pattern)
        specials = dict(specials or {})
        taken = set(ranks.values())
        for s, i in specials.items():
            if i in taken:
                raise InputError(f"special token {s!r} has id {i}, which is already the rank of an ordinary token")
        ordinary = sorted((r, t) for t, r in ranks.items())
        try:
            recovered = _core.merges_from_ranks(ordinary)
        except InputError as e:
            raise InputError(f"{where}: not a usable byte-level vocabulary: {e}") from None
        rows = [TokenRow(id=r, bytes=t, kind="byte" if len(t) == 1 else "merged") for r, t in ordinary]
        rows += [TokenRow(id=i, bytes=s.encode("utf-8"), kind="special") for s, i in specials.items()]
        rows.sort(key=lambda t: t.id)
        merges = [MergeRow(rank=k, left=a, right=b, result=z) for k, (a, b, z) in enumerate(recovered)]
        return TokenizerData(
            algorithm="bpe",
            config=ByteBpeConfig(regex).to_json(),
            tokens=rows,
            merges=merges,
            source="import:tiktoken",
        )


ALGORITHM = ByteBpe()
