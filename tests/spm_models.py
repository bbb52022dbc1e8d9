"""SentencePiece models trained in the tests with the `sentencepiece` library itself, once per
session (conftest.py exposes the fixtures): Unigram and BPE, every built-in normalization rule,
a custom TSV rule (with user-defined pieces it must leave alone) and a denormalizer. The import
tests and the export tests share them, so each model is trained once."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry, Tokenizer
from tokreg.formats import sentencepiece_proto

from .conftest import data_file

# name -> SentencePieceTrainer options (besides the shared ones in `train`)
VARIANTS: dict[str, dict[str, Any]] = {
    # identity, SentencePiece's other defaults: whitespace collapsed, dummy prefix, no byte fallback
    "unigram": {"model_type": "unigram"},
    "unigram-bytes": {"model_type": "unigram", "byte_fallback": True, "remove_extra_whitespaces": False},
    "unigram-symbols": {
        "model_type": "unigram",
        "user_defined_symbols": ["LORD", "<sep>", "神"],
        "control_symbols": ["<cls>", "<mask>"],
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
    },
    # Llama's settings: byte fallback, dummy prefix, whitespace kept
    "bpe-llama": {"model_type": "bpe", "byte_fallback": True, "remove_extra_whitespaces": False},
    "bpe-plain": {"model_type": "bpe", "user_defined_symbols": ["LORD", "<sep>"], "add_dummy_prefix": False},
    # The normalization rules: spm_train's defaults (nmt_nfkc) and the other built-in ones
    "unigram-nmt_nfkc": {"model_type": "unigram", "normalization_rule_name": "nmt_nfkc"},
    "bpe-nfkc": {"model_type": "bpe", "normalization_rule_name": "nfkc", "byte_fallback": True},
    "unigram-nmt_nfkc_cf": {
        "model_type": "unigram",
        "normalization_rule_name": "nmt_nfkc_cf",
        "remove_extra_whitespaces": False,
    },
    "bpe-nfkc_cf": {"model_type": "bpe", "normalization_rule_name": "nfkc_cf"},
    # A custom rule (below), with user-defined pieces that the rule would otherwise rewrite
    "unigram-custom": {"model_type": "unigram", "normalization_rule_tsv": "RULE", "user_defined_symbols": ["LORD"]},
    "bpe-custom": {"model_type": "bpe", "normalization_rule_tsv": "RULE"},
}
#: LORD -> Lord, U+3000 -> space, ﬁ -> fi, aa -> b, Ａ -> A (source and target code points, hex)
RULE_TSV = "4C 4F 52 44\t4C 6F 72 64\n3000\t20\nFB01\t66 69\n61 61\t62\nFF21\t41\n"
#: the denormalizer of "unigram-denorm": Lord -> LORD on decoding
DERULE_TSV = "4C 6F 72 64\t4C 4F 52 44\n"
#: every model, the spliced one included
ALL = [*VARIANTS, "unigram-denorm"]


def lines(name: str) -> list[str]:
    return data_file(name).read_text(encoding="utf-8").split("\n")


def training_lines() -> list[str]:
    """A whole-line slice of each corpus (about 0.6 MB in all)."""
    return lines("kjv.txt")[:3000] + lines("dr.en.txt")[:3000] + lines("dr.zh-cn.txt")[:2000]


def train(text: list[str], **options: Any) -> bytes:
    options.setdefault("normalization_rule_name", "identity")
    options.setdefault("vocab_size", 3000)
    buf = io.BytesIO()
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text), model_writer=buf, num_threads=2, minloglevel=2, **options
    )
    return buf.getvalue()


def import_small_bpe(reg: Registry, corpus: Path) -> object:
    """A SentencePiece BPE model of 400 pieces with byte fallback, trained on `corpus` and
    imported as `t` (the encoders-alike tests' SentencePiece BPE case)."""
    model = corpus.parent / "sp-bpe.model"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    model.write_bytes(
        train(lines, model_type="bpe", vocab_size=400, byte_fallback=True, remove_extra_whitespaces=False)
    )
    return reg.import_sentencepiece("t", model)


def with_denormalizer(model: bytes, charsmap: bytes) -> bytes:
    """`model` with a denormalizer_spec (no flags) appended: protobuf merges a repeated
    top-level message field, so SentencePiece reads it as if spm_train had written it (the
    `sentencepiece` package cannot set one)."""
    spec = bytearray()
    sentencepiece_proto._put_bytes(spec, 2, charsmap)
    for number in (3, 4, 5):
        sentencepiece_proto._put_int(spec, number, 0)
    out = bytearray(model)
    sentencepiece_proto._put_bytes(out, 5, bytes(spec))
    return bytes(out)


@pytest.fixture(scope="session")
def spm_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """variant -> its .model file, trained once for the session."""
    pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm")
    (folder / "rule.tsv").write_text(RULE_TSV)
    (folder / "derule.tsv").write_text(DERULE_TSV)
    text = training_lines()
    out = {}
    for name, options in VARIANTS.items():
        if options.get("normalization_rule_tsv") == "RULE":
            options = {**options, "normalization_rule_tsv": str(folder / "rule.tsv")}
        out[name] = folder / f"{name}.model"
        out[name].write_bytes(train(text, **options))
    rules = sentencepiece_proto.parse(
        train(text[:2000], vocab_size=500, normalization_rule_tsv=str(folder / "derule.tsv"))
    )
    out["unigram-denorm"] = folder / "unigram-denorm.model"
    out["unigram-denorm"].write_bytes(with_denormalizer(out["unigram-custom"].read_bytes(), rules.precompiled_charsmap))
    return out


@pytest.fixture(scope="session")
def spm_imported(spm_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tokenizer]:
    """variant -> the tokenizer imported through the API (one registry for all)."""
    reg = Registry(tmp_path_factory.mktemp("db") / "r.db")
    out = {}
    for name, path in spm_models.items():
        v = reg.import_sentencepiece(name, path)
        assert v.ref == f"{name}@1" and v.source == "import:sentencepiece"
        out[name] = reg.load(name)
    reg.close()
    return out


@pytest.fixture(scope="session")
def spm_processors(spm_models: dict[str, Path]) -> dict[str, Any]:
    spm = pytest.importorskip("sentencepiece")
    return {name: spm.SentencePieceProcessor(model_file=str(path)) for name, path in spm_models.items()}
