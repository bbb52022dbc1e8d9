"""Offset trimming of byte-level files (issue 23, point 5): a tokenizer.json whose
post-processor is `ByteLevel(trim_offsets=true)` (GPT-2's layout) or
`RobertaProcessing(trim_offsets=true)` (RoBERTa's) gives `Encoding.offsets` without each
token's leading and trailing spaces; tokreg's `encode_with_offsets` of the imported version
gives the same spans, and the export writes the trimming back. Files trained here with the
`tokenizers` library; compared on a slice of the shared corpora, hard text and hypothesis text
(run with `-s` to see the figures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from . import hf_layouts as L
from .conftest import CORPORA
from .test_hf_layouts import _TEXT, HARD

tk = L.tokenizers
P, D, PP = tk.pre_tokenizers, tk.decoders, tk.processors
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def byte_level(post: Callable[[], Any], prefix: bool) -> Callable[[], Any]:
    def build() -> Any:
        t = tk.Tokenizer(tk.models.BPE())
        t.pre_tokenizer = P.ByteLevel(add_prefix_space=prefix)
        t.decoder = D.ByteLevel()
        t.post_processor = post()
        trainer = tk.trainers.BpeTrainer(
            vocab_size=1500, special_tokens=SPECIALS, initial_alphabet=P.ByteLevel.alphabet(), show_progress=False
        )
        return t, trainer

    return build


LAYOUTS: dict[str, Callable[[], Any]] = {
    "gpt2": byte_level(lambda: PP.ByteLevel(trim_offsets=True, add_prefix_space=True), False),
    "gpt2-prefix": byte_level(lambda: PP.ByteLevel(trim_offsets=True, add_prefix_space=True), True),
    "gpt2-no-prefix": byte_level(lambda: PP.ByteLevel(trim_offsets=True, add_prefix_space=False), False),
    "roberta": byte_level(
        lambda: PP.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True, add_prefix_space=False), False
    ),
    "roberta-prefix": byte_level(
        lambda: PP.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=True, add_prefix_space=True), True
    ),
}

#: Text where trimming shows: runs of spaces, spaces at both ends, lone spaces, specials.
SPACES = ["  a  b   ", " ", "   ", "x ", " x", "a <mask> b", "<mask>  c", "\t a \n b ", "é  ü", "  \u00a0 x"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> L.Built:
    return L.trained(tmp_path_factory.mktemp("trim-layouts"), LAYOUTS)


def _lines() -> list[str]:
    return [line for c in CORPORA for line in L.corpus_lines(c, 100)] + HARD + SPACES


@pytest.mark.parametrize("layout", LAYOUTS)
def test_offsets_are_trimmed_as_tokenizers_trims_them(layout: str, built: L.Built) -> None:
    tok = built.tok(layout)
    prefix = layout in ("gpt2", "gpt2-prefix", "roberta-prefix")
    assert tok.config["hf_settings"]["trim_offsets"] == {"add_prefix_space": prefix}
    L.check(L.compare(tok, built.hf(layout), _lines()), f"{layout} trimmed (slice + hard text)")


@pytest.mark.parametrize("layout", ["gpt2", "roberta-prefix"])
def test_hypothesis_text(layout: str, built: L.Built) -> None:
    L.check_hypothesis(built.tok(layout), built.hf(layout), _TEXT)


@pytest.mark.parametrize("layout", ["gpt2", "roberta"])
def test_export_writes_the_trimming_back(layout: str, built: L.Built, tmp_path: Path) -> None:
    L.check_export(built, layout, tmp_path, _lines())
    exported = tk.Tokenizer.from_file(str(tmp_path / "out.json"))
    original = built.hf(layout)
    lines = _lines()
    assert [x for x in lines if exported.encode(x).offsets != original.encode(x).offsets] == []


def test_untrimmed_files_keep_the_untrimmed_spans(built: L.Built, tmp_path: Path) -> None:
    """The same model with `trim_offsets=false`: no setting stored, spans as the core gives."""
    t = tk.Tokenizer.from_file(str(built.file("gpt2")))
    t.post_processor = PP.ByteLevel(trim_offsets=False)
    path = tmp_path / "untrimmed.json"
    t.save(str(path))
    built.registry.import_hf("untrimmed", path)
    loaded = built.registry.load("untrimmed")
    assert "trim_offsets" not in (loaded.config.get("hf_settings") or {})
    assert loaded.hash != built.tok("gpt2").hash
    L.check(L.compare(loaded, t, _lines()), "gpt2 untrimmed")


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("layout", ["gpt2", "roberta-prefix"])
def test_every_line_is_trimmed_as_tokenizers_trims_it(layout: str, corpus: str, built: L.Built) -> None:
    L.check(L.compare(built.tok(layout), built.hf(layout), L.corpus_lines(corpus)), f"{layout} trimmed on {corpus}")
