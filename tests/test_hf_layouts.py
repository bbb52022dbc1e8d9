"""The common Hub layouts of Unigram `tokenizer.json` import with HF's ids (issue 23, point 2):
files made by transformers' converters (T5, XLM-R, ALBERT, the generic SentencePiece one) from
SentencePiece models trained here, and Metaspace variants made with the `tokenizers` API. For
each: ids, decode and offsets against `tokenizers` on the shared corpora (every line in the slow
lane, a slice in the fast one) and on hypothesis text; then `export --format hf` and `to_hf()`
give the same ids in `tokenizers`, and `--format tokreg` round-trips with the same hash.

Run with `-s` to see the figures per layout (lines compared, lines differing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import strategies as st

from tokreg import Registry
from tokreg.errors import InputError

from . import hf_layouts as L
from .conftest import CORPORA, slow

LAYOUTS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "t5": ("plain", L.t5),
    "xlm-r": ("plain", L.xlm_r),
    "albert": ("albert", L.albert),
    "spm-generic": ("plain", L.generic),
    "spm-generic-byte-fallback": ("bytes", L.generic),
    "metaspace-first": ("plain", L.metaspace("first", True)),
    "metaspace-never": ("plain", L.metaspace("never", True)),
    "metaspace-always-nosplit": ("plain", L.metaspace("always", False)),
}

#: Text the corpora have little of: emoji and ZWJ sequences, combining marks, RTL, full-width
#: forms, control characters, whitespace runs, ALBERT's quotes, the ▁ itself, special tokens.
HARD = [
    "",
    " ",
    "   leading and trailing   ",
    "a  b   c\t\td\n\ne",
    "e\u0301 cafe\u0301 café ﬁne ＡＢＣ１２３ 　x",
    "👩\u200d👩\u200d👧 🏳️\u200d🌈 👍🏽!",
    "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 \u202eabc\u202c",
    "\x00\x01\x1f\x7f\u200b\ufeff x",
    "``quoted'' and ''again``",
    "\u2581x \u2581\u2581 y\u2581",
    "ÀÉÎÕÜ àéîõü Ǆ ǅ ß İ",
    "</s> <unk> <s>",
    "\ufb01\u05b4\u05b9\u0665",  # an expansion (NFKD's fi) then marks StripAccents drops
    "x" * 3000 + " " + "ab " * 500,
]


#: The layouts the fast lane compares; the others run in `just test` only.
FAST = {"t5", "albert", "metaspace-first"}
BY_LANE = [name if name in FAST else slow(name) for name in LAYOUTS]
MODELS: dict[str, dict[str, Any]] = {
    "plain": {},
    "albert": {"pad_id": 0, "unk_id": 1, "bos_id": -1, "eos_id": -1, "control_symbols": "[CLS],[SEP],[MASK]"},
    "bytes": {"byte_fallback": True},
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> L.Built:
    folder = tmp_path_factory.mktemp("layouts")

    def make(name: str, path: Path) -> None:
        model, build = LAYOUTS[name]
        spm_file = folder / f"{model}.model"
        if not spm_file.exists():
            L.train_model(spm_file, **MODELS[model])
        build(spm_file).save(str(path))

    return L.Built(folder, make)


def _slice(name: str) -> list[str]:
    return L.corpus_lines(name, 150)


@pytest.mark.parametrize("layout", BY_LANE)
def test_slice_and_hard_text_match_tokenizers(layout: str, built: L.Built) -> None:
    hf = built.hf(layout)
    lines = [line for c in CORPORA for line in _slice(c)] + HARD
    L.check(L.compare(built.tok(layout), hf, lines), f"{layout} (slice + hard text)")


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_line_matches_tokenizers(layout: str, corpus: str, built: L.Built) -> None:
    hf = built.hf(layout)
    lines = L.corpus_lines(corpus)
    L.check(L.compare(built.tok(layout), hf, lines), f"{layout} on {corpus}")


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from(list(" \t\n\u2581\u200d\u0301\u3000`'")),
    max_size=80,
)


@pytest.mark.parametrize("layout", ["t5", slow("albert"), slow("spm-generic-byte-fallback"), slow("metaspace-first")])
def test_hypothesis_text(layout: str, built: L.Built) -> None:
    hf = built.hf(layout)
    tok = built.tok(layout)

    L.check_hypothesis(tok, hf, _TEXT)


@pytest.mark.parametrize("layout", BY_LANE)
def test_exports_back_with_the_same_ids(layout: str, built: L.Built, tmp_path: Path) -> None:
    L.check_export(built, layout, tmp_path, [line for c in CORPORA for line in _slice(c)] + HARD)


@pytest.mark.parametrize("layout", ["t5", "albert"])
def test_sentencepiece_export_is_refused(layout: str, built: L.Built, tmp_path: Path) -> None:
    built.tok(layout)
    with pytest.raises(InputError, match="Hugging Face pipeline"):
        built.registry.export(layout, "sentencepiece", tmp_path / "x.model")


@pytest.mark.parametrize(
    "step, needle",
    [
        ({"normalizer": {"type": "Nmt"}}, "normalizer Nmt"),
        ({"normalizer": {"type": "Strip", "strip_left": True}}, "normalizer Strip with strip_right"),
        ({"pre_tokenizer": {"type": "UnicodeScripts"}}, "pre-tokenizer UnicodeScripts"),
        ({"decoder": {"type": "CTC"}}, "decoder CTC"),
        ({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}}, "prepend_scheme"),
    ],
)
def test_unknown_steps_are_refused_in_one_line(
    step: dict[str, Any], needle: str, built: L.Built, tmp_path: Path
) -> None:
    import json

    doc = json.loads(built.file("t5").read_text(encoding="utf-8"))
    doc.update(step)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as e:
        Registry(tmp_path / "r.db").import_hf("bad", path)
    assert needle in str(e.value) and "\n" not in str(e.value)
    assert "nothing was imported" in str(e.value)
