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
from ..data import TokenizerData, TokenRow
from ..errors import InputError
from ..formats import hf_json
from . import bpe_hf, bpe_training, template
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
        exact_keys(
            raw,
            {"byte_level", "pattern", "end_of_word_suffix", "unk_token"},
            self.title,
            bpe_hf.GAPS_KEYS | template.KEYS,
        )
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

    def extend_counting(self, config: CharBpeConfig) -> dict[str, Any]:
        if config.keep_gaps:
            raise InputError(
                f"this {self.title} version keeps the text between its pattern's matches as pieces (an imported "
                "Split with Isolated), which tokreg's counter does not; it cannot be extended by training"
            )
        return {"splitting": "pieces", "pattern": config.pattern, "max_piece_bytes": 0}

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
    ) -> TokenizerData:
        config = self.parse_config(base.config)
        # The new corpus' characters the base lacks become tokens first (kind "char", ids after
        # the base's, by UTF-8 bytes): the most frequent ones when there are more than `add`,
        # and none that a kept text holds (they would stop being unknown there).
        known = {t.bytes.decode("utf-8") for t in base.tokens if t.kind == "char"}
        kept_chars = {ch for k in keep for ch in k.decode("utf-8", "replace")}
        freq: dict[str, int] = {}
        for piece, n in counts.items():
            for ch in piece.decode("utf-8", "replace"):
                if ch not in known and ch not in kept_chars:
                    freq[ch] = freq.get(ch, 0) + n
        chosen = sorted(sorted(freq, key=lambda ch: (-freq[ch], ch.encode("utf-8")))[:add], key=lambda ch: ch.encode())
        first = max(t.id for t in base.tokens) + 1
        with_chars = TokenizerData(
            algorithm=base.algorithm,
            config=dict(base.config),
            tokens=list(base.tokens)
            + [TokenRow(id=first + i, bytes=ch.encode("utf-8"), kind="char") for i, ch in enumerate(chosen)],
            merges=list(base.merges),
        )
        encoder = self.compile(with_chars.content(), config)
        # A merge's result may spell a word's end with its end-of-word symbol: keep those too.
        eow = (config.end_of_word_suffix or "").encode("utf-8")
        more = add - len(chosen)
        if more == 0:
            return with_chars
        return bpe_training.extend(with_chars, encoder, counts, more, [k + eow for k in keep], threads, progress)

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        config = self.parse_config(base.config)
        encoder = self.compile(base.content(), config)
        return bpe_training.add_merged_tokens(base, encoder, config.pattern, tokens, self.title)

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
