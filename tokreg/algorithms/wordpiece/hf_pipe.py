"""WordPiece imported from a Hugging Face `tokenizer.json` whose pipeline tokreg's own WordPiece
(BERT's normalizer and pre-tokenizer) does not reproduce, such as the `tokenizers` trainers'
files with a `Whitespace` or `Sequence[WhitespaceSplit, Punctuation]` pre-tokenizer: the version
keeps the file's pipeline (../hf_pipeline.py) and runs it in the core
(`_core.Encoder.hf_wordpiece`: HF's greedy longest match). It is read only when hf.py's reader
refuses the file, so files that imported before keep their hashes; it is written back as it came.

Config (hashed):

    {"hf_pipeline": {...}, "unk_token", "continuing_prefix", "max_input_chars_per_word"}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...data import TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import hf_pipeline, template
from ..hf_pipeline import HfPipeline
from ..interfaces import HfCodec, Model, exact_keys

_KEYS = {hf_pipeline.KEY, "unk_token", "continuing_prefix", "max_input_chars_per_word"}


@dataclass(frozen=True)
class HfWordPieceConfig:
    pipeline: HfPipeline
    unk_token: str
    continuing_prefix: str
    max_input_chars_per_word: int

    def to_json(self) -> dict[str, Any]:
        return {
            hf_pipeline.KEY: self.pipeline.to_json(),
            "unk_token": self.unk_token,
            "continuing_prefix": self.continuing_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
        }


class HfWordPiece(Model[HfWordPieceConfig]):
    name = "hf_wordpiece"
    stored_as = "wordpiece"
    title = "WordPiece (Hugging Face pipeline)"
    special_kind = "special"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return hf_pipeline.KEY in config

    def parse_config(self, raw: Mapping[str, Any]) -> HfWordPieceConfig:
        exact_keys(raw, _KEYS, self.title, template.KEYS)
        return HfWordPieceConfig(
            pipeline=HfPipeline.from_json(raw[hf_pipeline.KEY], self.title),
            unk_token=str(raw["unk_token"]),
            continuing_prefix=str(raw["continuing_prefix"]),
            max_input_chars_per_word=int(raw["max_input_chars_per_word"]),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {**raw, hf_pipeline.KEY: self.parse_config(raw).pipeline.summary()}

    def compile(self, content: bytes, config: HfWordPieceConfig) -> _core.Encoder:
        args = config.pipeline.core_args()
        args.pop("unk_special")
        return _core.Encoder.hf_wordpiece(
            content,
            **args,
            unk_token=config.unk_token,
            continuing_subword_prefix=config.continuing_prefix,
            max_input_chars_per_word=config.max_input_chars_per_word,
        )

    def lossless(self, config: HfWordPieceConfig) -> bool:
        return False

    def lossy_by_design(self, config: HfWordPieceConfig) -> Optional[str]:
        return "a WordPiece pipeline keeps words, not the whitespace between them; its normalizer does the rest"


HF_WORDPIECE = HfWordPiece()


def read(doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
    """The version of a WordPiece tokenizer.json whose pipeline tokreg runs step by step."""
    pipeline = HfPipeline.read(doc, where)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise InputError(f"{where}: the WordPiece model has no vocab of token -> id")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in vocab.values()):
        raise InputError(f"{where}: the WordPiece vocab's ids are not all integers")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise InputError(f"{where}: a WordPiece vocab whose ids are not 0..n-1 is not supported by tokreg")
    if "" in vocab:
        raise InputError(f"{where}: the vocab has an empty token (id {vocab['']}); remove it")
    unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
    max_chars = model.get("max_input_chars_per_word", 100)
    if not isinstance(unk, str) or unk not in vocab:
        raise InputError(f"{where}: the unknown token {unk!r:.40} is not in the vocab")
    if not isinstance(prefix, str):
        raise InputError(f"{where}: continuing_subword_prefix {prefix!r:.40} is not a string")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or not 0 < max_chars < 2**31:
        raise InputError(f"{where}: max_input_chars_per_word {max_chars!r:.30} is not a positive integer")
    specials = hf_json.read_added(doc, where, normalized_ok=False)
    if any(vocab.get(t) != i for i, t in specials.items()):
        raise InputError(f"{where}: an added token is not in the vocab with its id; the file is damaged")
    tokens = [
        TokenRow(id=i, bytes=t.encode("utf-8"), kind="special" if i in specials else "normal")
        for t, i in sorted(vocab.items(), key=lambda kv: kv[1])
    ]
    config = HfWordPieceConfig(pipeline, unk, prefix, max_chars)
    return TokenizerData(algorithm="wordpiece", config=config.to_json(), tokens=tokens, source="import:hf")


class HfPipelineWordPieceHf(HfCodec):
    """Writes the versions `read` made (read through hf.py's codec, which falls back on it)."""

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return False

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        return read(doc, model, where)

    def write(self, data: TokenizerData, ref: str) -> bytes:
        cfg = HF_WORDPIECE.parse_config(data.config)
        doc = hf_json.document(
            ((t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind == "special"),
            **cfg.pipeline.to_hf(),
            post_processor=template.hf_for(data),
            model={
                "type": "WordPiece",
                "unk_token": cfg.unk_token,
                "continuing_subword_prefix": cfg.continuing_prefix,
                "max_input_chars_per_word": cfg.max_input_chars_per_word,
                "vocab": {t.bytes.decode("utf-8"): t.id for t in data.tokens},
            },
        )
        return hf_json.dumps(doc)


def fallback(doc: Mapping[str, Any], model: Mapping[str, Any], where: str, refused: InputError) -> TokenizerData:
    """`read`, for a file hf.py's reader refused; when the pipeline cannot take it either, its
    own reason (naming the component) is given."""
    try:
        return read(doc, model, where)
    except InputError as e:
        raise e from refused
