"""BPE imported from a Hugging Face `tokenizer.json` that tokreg's own BPE flavours cannot
encode exactly (a normalizer, chained `Split`/`Digits`/`Punctuation` pre-tokenizers as in
Qwen2, Llama 3 and DeepSeek-V3 files, CLIP's `</w>` words...): the version keeps the file's
pipeline (../hf_pipeline.py) and HF's BPE model settings, and runs them in the core
(`_core.Encoder.hf_bpe`: HF's merge rule, unknown and byte-fallback handling). It is read only
when the flavour's own reader (hf.py) refuses the file, so the files that imported before keep
their path and hashes; it is written back as it came.

Config (hashed):

    {"byte_level": bool, "hf_pipeline": {...}, "hf_bpe": {"unk_token", "continuing_subword_prefix",
     "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges"}}

`byte_level`: the pre-tokenizer has a ByteLevel step, so the vocabulary is spelled in GPT-2's
alphabet; tokens are stored as raw bytes, as every byte-level version's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ... import _core
from ...data import MergeRow, TokenizerData, TokenRow
from ...errors import InputError
from ...formats import hf_json
from .. import hf_pipeline, template
from ..hf_pipeline import HfPipeline
from ..interfaces import HfCodec, Model, exact_keys

KEY = "hf_bpe"
_STRINGS = ("unk_token", "continuing_subword_prefix", "end_of_word_suffix")
_FLAGS = ("fuse_unk", "byte_fallback", "ignore_merges")


@dataclass(frozen=True)
class HfBpeConfig:
    byte_level: bool
    pipeline: HfPipeline
    settings: tuple[tuple[str, Any], ...]  # the model settings, in _STRINGS + _FLAGS order

    def to_json(self) -> dict[str, Any]:
        return {"byte_level": self.byte_level, hf_pipeline.KEY: self.pipeline.to_json(), KEY: dict(self.settings)}

    @property
    def model(self) -> dict[str, Any]:
        return dict(self.settings)


def _settings(raw: Mapping[str, Any], where: str) -> tuple[tuple[str, Any], ...]:
    out: list[tuple[str, Any]] = []
    for k in _STRINGS:
        v = raw.get(k)
        if v is not None and not isinstance(v, str):
            raise InputError(f"{where}: model.{k} is {v!r:.40}, not a string or null")
        out.append((k, v))
    for k in _FLAGS:
        v = raw.get(k, False)
        if not isinstance(v, bool):
            raise InputError(f"{where}: model.{k} is {v!r:.20}, not true or false")
        out.append((k, v))
    return tuple(out)


class HfBpe(Model[HfBpeConfig]):
    name = "hf_bpe"
    stored_as = "bpe"
    title = "BPE (Hugging Face pipeline)"

    def owns(self, config: Mapping[str, Any]) -> bool:
        return hf_pipeline.KEY in config

    def parse_config(self, raw: Mapping[str, Any]) -> HfBpeConfig:
        exact_keys(raw, {"byte_level", hf_pipeline.KEY, KEY}, self.title, template.KEYS)
        settings = raw[KEY]
        if not isinstance(settings, Mapping) or set(settings) != {*_STRINGS, *_FLAGS}:
            raise InputError(f"this {self.title} version's {KEY} is not in tokreg's form; the version is damaged")
        return HfBpeConfig(
            byte_level=bool(raw["byte_level"]),
            pipeline=HfPipeline.from_json(raw[hf_pipeline.KEY], self.title),
            settings=_settings(settings, f"this {self.title} version"),
        )

    def display_config(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return {**raw, hf_pipeline.KEY: self.parse_config(raw).pipeline.summary()}

    def compile(self, content: bytes, config: HfBpeConfig) -> _core.Encoder:
        args = config.pipeline.core_args()
        args.pop("unk_special")
        m = config.model
        return _core.Encoder.hf_bpe(
            content,
            **args,
            byte_level=config.byte_level,
            unk_token=m["unk_token"],
            continuing_subword_prefix=m["continuing_subword_prefix"],
            end_of_word_suffix=m["end_of_word_suffix"],
            fuse_unk=m["fuse_unk"],
            byte_fallback=m["byte_fallback"],
            ignore_merges=m["ignore_merges"],
        )

    def lossless(self, config: HfBpeConfig) -> bool:
        return False

    def lossy_by_design(self, config: HfBpeConfig) -> Optional[str]:
        return "a Hugging Face pipeline's normalizer, pre-tokenizer and decoder decide what comes back"


HF_BPE = HfBpe()


def token_bytes(s: str, byte_level: bool, where: str) -> bytes:
    """The bytes a BPE vocabulary's token string stands for (GPT-2's alphabet when byte-level)."""
    if not byte_level:
        return s.encode("utf-8")
    b = hf_json.unmapped(s)
    if b is None:
        raise InputError(
            f"{where}: token {s[:40]!r} is not in GPT-2's byte-to-unicode alphabet, but the pre-tokenizer is ByteLevel"
        )
    return b


def merge_pairs(model: Mapping[str, Any], vocab: Mapping[str, int], where: str) -> list[tuple[int, str, str]]:
    """(rank, left, right) of a BPE model's merges ("a b" strings or [a, b] pairs), each naming
    two tokens of `vocab` that join into a third."""
    merges_in = model.get("merges", [])
    if not isinstance(merges_in, list):
        raise InputError(f"{where}: model.merges is not a list")
    out = []
    for rank, m in enumerate(merges_in):
        pair = tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) if isinstance(m, list) else ()
        if (
            len(pair) != 2
            or any(not isinstance(p, str) or p not in vocab for p in pair)
            or (pair[0] + pair[1]) not in vocab
        ):
            raise InputError(f"{where}: merge {rank} {str(m)[:60]!r} names a token that is not in the vocab")
        out.append((rank, pair[0], pair[1]))
    return out


def read(doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
    """The version of a BPE tokenizer.json whose pipeline tokreg runs step by step; refuses, in
    one line naming it, a step or model setting it does not implement."""
    pipeline = HfPipeline.read(doc, where)
    byte_level = any(s["type"] == "ByteLevel" for s in pipeline.pre_tokenizer)
    if model.get("dropout") not in (None, 0, 0.0):
        raise InputError(f"{where}: the BPE model's dropout is not supported by tokreg (nothing was imported)")
    unknown = sorted(set(model) - {"type", "dropout", "vocab", "merges", *_STRINGS, *_FLAGS})
    if unknown:
        raise InputError(f"{where}: the BPE model's setting(s) {', '.join(unknown)} are not supported by tokreg")
    settings = _settings(model, where)
    specials = hf_json.read_added(doc, where, normalized_ok=False)
    vocab_in = model.get("vocab")
    if not isinstance(vocab_in, dict) or not vocab_in:
        raise InputError(f"{where}: the BPE model has no vocab of token -> id")
    vocab: dict[str, int] = {}
    for s, i in vocab_in.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32:
            raise InputError(f"{where}: the token {s[:40]!r} has the id {i!r:.30}; ids are 0..4294967295")
        if not s:
            raise InputError(f"{where}: the vocab has an empty token (id {i}); remove it")
        vocab[s] = i

    merges = [
        MergeRow(rank=k, left=vocab[a], right=vocab[b], result=vocab[a + b])
        for k, a, b in merge_pairs(model, vocab, where)
    ]
    rows: dict[int, TokenRow] = {}
    results = {m.result for m in merges}
    for s, i in vocab.items():
        if i in rows:
            raise InputError(f"{where}: id {i} is used by two tokens")
        if specials.get(i) == s:
            rows[i] = TokenRow(id=i, bytes=s.encode("utf-8"), kind="special")
            continue
        if i in specials:
            raise InputError(f"{where}: id {i} is the added token {specials[i][:40]!r} and the token {s[:40]!r}")
        b = token_bytes(s, byte_level, where)
        single = len(b) == 1 if byte_level else len(s) == 1 and i not in results
        rows[i] = TokenRow(id=i, bytes=b, kind=("byte" if byte_level else "char") if single else "merged")
    for i, s in specials.items():
        rows.setdefault(i, TokenRow(id=i, bytes=s.encode("utf-8"), kind="special"))
    if sorted(rows) != list(range(len(rows))):
        raise InputError(f"{where}: the vocab's ids have gaps, which tokreg's HF pipeline BPE does not support")
    tokens = [rows[i] for i in range(len(rows))]
    unk = dict(settings)["unk_token"]
    if unk is not None and unk not in vocab and unk not in specials.values():
        raise InputError(f"{where}: the unknown token {unk[:40]!r} is not in the vocab")
    config = HfBpeConfig(byte_level, pipeline, settings)
    return TokenizerData(algorithm="bpe", config=config.to_json(), tokens=tokens, merges=merges, source="import:hf")


def _spelled(t: TokenRow, byte_level: bool) -> str:
    if t.kind == "special" or not byte_level:
        return t.bytes.decode("utf-8")
    return hf_json.mapped(t.bytes)


class HfPipelineBpeHf(HfCodec):
    """Writes the versions `read` made (they are read through the BPE flavours' codecs, which
    fall back on `read`)."""

    def reads(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return False

    def read(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        return read(doc, model, where)

    def write(self, data: TokenizerData, ref: str) -> bytes:
        config = HF_BPE.parse_config(data.config)
        spelled = {t.id: _spelled(t, config.byte_level) for t in data.tokens}
        doc = hf_json.document(
            ((t.id, spelled[t.id]) for t in data.tokens if t.kind == "special"),
            **config.pipeline.to_hf(),
            post_processor=template.hf_for(data),
            model={
                "type": "BPE",
                "dropout": None,
                **config.model,
                "vocab": {spelled[t.id]: t.id for t in data.tokens},
                "merges": [[spelled[m.left], spelled[m.right]] for m in data.merges],
            },
        )
        return hf_json.dumps(doc)


def fallback(doc: Mapping[str, Any], model: Mapping[str, Any], where: str, refused: InputError) -> TokenizerData:
    """`read`, for a file a flavour's own reader refused; when the pipeline cannot take it
    either, its own reason (naming the component) is given."""
    try:
        return read(doc, model, where)
    except InputError as e:
        raise e from refused
