"""Post-processing templates (`encode(text, add_special_tokens=True)`): imported from Hugging Face
post-processors with Hugging Face's ids (BERT-style WordPiece, a SentencePiece-style Unigram, a
RoBERTa-style byte-level BPE), set at training (`--bos`, `--eos`, `--template`), written back by
the HF export with the same hash, part of the hash only when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, InputError, Registry, UnigramOptions, WordPieceOptions

from .conftest import Cli, head_lines
from .hf_unigram import unigram_json

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return [x for x in head_lines("kjv.txt", 40_000).decode().splitlines() if x.strip()][:300]


def _hf_with(registry: Registry, ref: str, out: Path, post: dict[str, Any]) -> Path:
    if registry.resolve(ref).algorithm == "unigram":  # not exported (HF breaks its ties otherwise): HF's layout
        out.write_bytes(unigram_json(registry.stored(ref).data()))
    else:
        registry.export(ref, "hf", out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    doc["post_processor"] = post
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def _parity(registry: Registry, path: Path, name: str, lines: list[str]) -> None:
    v = registry.import_hf(name, path)
    tok, hf = registry.load(v.ref), tokenizers.Tokenizer.from_file(str(path))
    assert tok.template is not None
    for a, b in zip(lines, lines[1:] + lines[:1]):
        assert tok.encode(a, add_special_tokens=True) == hf.encode(a).ids
        assert tok.encode(a, pair=b, add_special_tokens=True) == hf.encode(a, b).ids
    assert tok.encode_batch(lines, add_special_tokens=True) == [e.ids for e in hf.encode_batch(lines)]
    assert tok.count(lines[0], add_special_tokens=True) == len(hf.encode(lines[0]).ids)
    # and back: the export writes the template, and importing that gives the same hash
    again = path.with_name(name + "-again.json")
    if v.algorithm == "unigram":
        with pytest.raises(InputError, match="Unigram cannot be written as hf exactly"):
            registry.export(v.ref, "hf", again)
        return
    registry.export(v.ref, "hf", again)
    assert registry.import_hf(name, again).content_hash == v.content_hash
    assert tokenizers.Tokenizer.from_file(str(again)).encode(lines[0]).ids == hf.encode(lines[0]).ids


def test_bert_processing_on_wordpiece(registry: Registry, small_corpus: Path, tmp_path: Path, lines: list[str]) -> None:
    registry.train("w", [small_corpus], WordPieceOptions(vocab_size=300, special=("[CLS]", "[SEP]")))
    ids = registry.load("w").special_tokens
    post = {"type": "BertProcessing", "sep": ["[SEP]", ids["[SEP]"]], "cls": ["[CLS]", ids["[CLS]"]]}
    _parity(registry, _hf_with(registry, "w", tmp_path / "bert.json", post), "bert", lines)


def test_template_processing_on_a_sentencepiece_style_unigram(
    registry: Registry, small_corpus: Path, tmp_path: Path, lines: list[str]
) -> None:
    registry.train("u", [small_corpus], UnigramOptions(vocab_size=400, byte_fallback=True, special=("<s>", "</s>")))
    ids = registry.load("u").special_tokens
    post = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "<s>", "type_id": 1}},
            {"Sequence": {"id": "B", "type_id": 1}},
        ],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [ids["<s>"]], "tokens": ["<s>"]}},
    }
    _parity(registry, _hf_with(registry, "u", tmp_path / "llama-style.json", post), "llama", lines)


def test_roberta_processing_on_byte_level_bpe(
    registry: Registry, small_corpus: Path, tmp_path: Path, lines: list[str]
) -> None:
    registry.train("b", [small_corpus], BpeOptions(vocab_size=300, special=("<s>", "</s>")))
    ids = registry.load("b").special_tokens
    post = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            {
                "type": "RobertaProcessing",
                "sep": ["</s>", ids["</s>"]],
                "cls": ["<s>", ids["<s>"]],
                "trim_offsets": True,
                "add_prefix_space": True,
            },
        ],
    }
    _parity(registry, _hf_with(registry, "b", tmp_path / "roberta.json", post), "roberta", lines)


def test_a_post_processor_naming_the_wrong_id_is_refused(
    registry: Registry, small_corpus: Path, tmp_path: Path
) -> None:
    registry.train("w", [small_corpus], WordPieceOptions(vocab_size=300, special=("[CLS]", "[SEP]")))
    post = {"type": "BertProcessing", "sep": ["[SEP]", 7], "cls": ["[CLS]", 8]}
    with pytest.raises(InputError, match="post-processor's '\\[(CLS|SEP)\\]' has id"):
        registry.import_hf("x", _hf_with(registry, "w", tmp_path / "bad.json", post))
    odd = {"type": "Mystery"}
    with pytest.raises(InputError, match="post_processor 'Mystery' is not supported"):
        registry.import_hf("x", _hf_with(registry, "w", tmp_path / "odd.json", odd))


def test_training_with_bos_and_eos(run: Cli, registry: Registry, small_corpus: Path) -> None:
    run("train", "plain", str(small_corpus), "--algo", "unigram", "--vocab-size", "600", "-q")
    run(
        "train",
        "sp",
        str(small_corpus),
        "--algo",
        "unigram",
        "--vocab-size",
        "600",
        "--bos",
        "<s>",
        "--eos",
        "</s>",
        "-q",
    )
    plain, sp = registry.load("plain"), registry.load("sp")
    assert plain.template is None and "template" not in plain.config
    assert plain.encode("hello there", add_special_tokens=True) == plain.encode("hello there")
    body = sp.encode("hello there")
    assert sp.encode("hello there", add_special_tokens=True) == [
        sp.special_tokens["<s>"],
        *body,
        sp.special_tokens["</s>"],
    ]
    assert registry.resolve("sp").content_hash != registry.resolve("plain").content_hash
    run(
        "train",
        "bert",
        str(small_corpus),
        "--algo",
        "wordpiece",
        "--vocab-size",
        "300",
        "--template",
        "[CLS] $A [SEP]",
        "-q",
    )
    bert = registry.load("bert")
    assert bert.encode("hi", add_special_tokens=True)[0] == bert.special_tokens["[CLS]"]
    res = run("train", "x", str(small_corpus), "--vocab-size", "300", "--template", "[CLS] [SEP]", ok=False)
    assert res.exit_code == 1 and "must hold $A exactly once" in res.output
    with pytest.raises(InputError, match="must also be special tokens"):
        registry.train("y", [small_corpus], BpeOptions(vocab_size=300, template="<s> $A"))


def test_sentencepiece_add_bos_and_eos(registry: Registry, small_corpus: Path, tmp_path: Path, run: Cli) -> None:
    spm = pytest.importorskip("sentencepiece")
    model = tmp_path / "sp.model"
    spm.SentencePieceTrainer.train(
        input=str(small_corpus),
        model_prefix=str(tmp_path / "sp"),
        vocab_size=600,
        normalization_rule_name="identity",
        byte_fallback=True,
        minloglevel=2,
    )
    run("import", "sentencepiece", str(model), "--name", "sp", "--bos", "--eos")
    run("import", "sentencepiece", str(model), "--name", "plain")
    tok, sp = registry.load("sp"), spm.SentencePieceProcessor(model_file=str(model))
    texts = ["Hello world, this is a test.", "  two  spaces", "naïve 東京"]
    for t in texts:
        assert tok.encode(t, add_special_tokens=True) == sp.encode(t, add_bos=True, add_eos=True)
        assert tok.encode(t) == sp.encode(t)
    assert registry.load("plain").template is None
    assert registry.resolve("plain").content_hash != registry.resolve("sp").content_hash
