"""Decode and offsets against the reference libraries, for every algorithm: each layout is a
real file (built with the `tokenizers` API, trained by `sentencepiece`, or trained by tokreg and
exported to the library that reads it), imported or loaded by tokreg; on every line of the shared
corpora (a slice in the fast lane) and on hypothesis text, tokreg's `decode` and
`encode_with_offsets` must give what the reference gives for the same ids: Hugging Face's
`Tokenizer.decode`/`Encoding.offsets`, sentencepiece's `decode`/`offset_mapping`.

The models are small and trained on English only (WordPiece, BPE) or with a character coverage
below 1 (sentencepiece), so that the Chinese corpus and the hypothesis text are full of unknown
tokens: decode and offsets around unknowns are what this file is for.

Character-level BPE with `</w>` has no reference (tokreg keeps the suffix a symbol of its own,
Hugging Face glues it to the last character, so their ids differ): its offsets are checked by
Hugging Face's rule, a token spans the characters it was made from, without the suffix."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokreg import BpeOptions, Registry, Tokenizer, UnigramOptions, WordPieceOptions

from .conftest import CORPORA, data_file, head_lines, slow, sweep_lines

tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")

#: (ids, decoded text, character offsets) of a line, as the reference gives them.
Reference = Callable[[str], tuple[list[int], str, list[tuple[int, int]]]]


@dataclass(frozen=True)
class Layout:
    tok: Tokenizer
    reference: Reference


def _hf(path: Path) -> Reference:
    t = tokenizers.Tokenizer.from_file(str(path))

    def run(line: str) -> tuple[list[int], str, list[tuple[int, int]]]:
        e = t.encode(line, add_special_tokens=False)
        return e.ids, t.decode(e.ids, skip_special_tokens=False), list(e.offsets)

    return run


def _sp(path: Path) -> Reference:
    sp = spm.SentencePieceProcessor(model_file=str(path))

    def run(line: str) -> tuple[list[int], str, list[tuple[int, int]]]:
        m = sp.encode(line, out_type="offset_mapping")
        return list(m["ids"]), sp.decode(list(m["ids"])), [tuple(o) for o in m["offsets"]]

    return run


def _bert(corpus: Path, folder: Path, cleanup: bool) -> Path:
    """A BERT-style WordPiece file built with the tokenizers API."""
    m = tokenizers.models
    t = tokenizers.Tokenizer(m.WordPiece(unk_token="[UNK]"))
    t.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=cleanup)
    t.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    t.decoder = tokenizers.decoders.WordPiece(cleanup=cleanup)
    trainer = tokenizers.trainers.WordPieceTrainer(vocab_size=1500, limit_alphabet=100, special_tokens=["[UNK]"])
    t.train([str(corpus)], trainer)
    path = folder / f"bert-{cleanup}.json"
    t.save(str(path))
    return path


def _spm(corpus: Path, folder: Path, model_type: str) -> Path:
    prefix = folder / f"spm-{model_type}"
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        vocab_size=800,
        model_type=model_type,
        character_coverage=0.98,
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Layout]]:
    folder = tmp_path_factory.mktemp("reference")
    english = folder / "en.txt"
    english.write_bytes(head_lines("kjv.txt", 60_000) + head_lines("dr.en.txt", 60_000))
    mixed = folder / "mixed.txt"
    mixed.write_bytes(b"".join(head_lines(n, 40_000) for n in CORPORA))
    out: dict[str, Layout] = {}
    with Registry(folder / "registry.db") as reg:

        def imported_hf(name: str, path: Path) -> None:
            reg.import_hf(name, path)
            out[name] = Layout(reg.load(name), _hf(path))

        def exported_hf(name: str) -> None:
            reg.export(name, "hf", folder / f"{name}.json")
            out[name] = Layout(reg.load(name), _hf(folder / f"{name}.json"))

        imported_hf("bert-cleanup", _bert(english, folder, cleanup=True))
        imported_hf("bert-no-cleanup", _bert(english, folder, cleanup=False))
        reg.train("wordpiece", [english], WordPieceOptions(vocab_size=1500))
        exported_hf("wordpiece")
        reg.train("byte-bpe", [english], BpeOptions(vocab_size=600))
        exported_hf("byte-bpe")
        reg.train("char-bpe", [english], BpeOptions(vocab_size=600, char_level=True, special=("<unk>",)))
        exported_hf("char-bpe")
        for model_type in ("unigram", "bpe"):
            path = _spm(mixed, folder, model_type)
            reg.import_sentencepiece(f"spm-{model_type}", path)
            out[f"spm-{model_type}"] = Layout(reg.load(f"spm-{model_type}"), _sp(path))
        reg.train("unigram", [english], UnigramOptions(vocab_size=600))
        reg.export("unigram", "sentencepiece", folder / "unigram.model")
        out["unigram"] = Layout(reg.load("unigram"), _sp(folder / "unigram.model"))
        # without byte fallback (spm_train's default), so that unknown pieces happen on Chinese
        reg.train("unigram-unk", [english], UnigramOptions(vocab_size=600, byte_fallback=False))
        reg.export("unigram-unk", "sentencepiece", folder / "unigram-unk.model")
        out["unigram-unk"] = Layout(reg.load("unigram-unk"), _sp(folder / "unigram-unk.model"))
        eow = BpeOptions(vocab_size=600, char_level=True, end_of_word_suffix="</w>", special=("<unk>",))
        reg.train("char-bpe-eow", [english], eow)
        out["char-bpe-eow"] = Layout(reg.load("char-bpe-eow"), _no_reference)
        yield out


def _no_reference(line: str) -> tuple[list[int], str, list[tuple[int, int]]]:
    raise AssertionError("this layout has no reference library")


REFERENCED = [
    "bert-cleanup",
    "bert-no-cleanup",
    "wordpiece",
    "byte-bpe",
    "char-bpe",
    "spm-unigram",
    "spm-bpe",
    "unigram",
    "unigram-unk",
]


def _differences(layout: Layout, lines: list[str]) -> tuple[list[str], list[str]]:
    """The lines whose decode differ and those whose offsets differ (each with its first
    difference), among the lines where tokreg gives the reference's ids."""
    bad_decode, bad_offsets = [], []
    for line in lines:
        ids, text, offsets = layout.reference(line)
        ours = layout.tok.encode_with_offsets(line)
        assert ours.ids == ids, f"ids differ on {line[:60]!r}"
        if layout.tok.decode(ids) != text:
            bad_decode.append(f"{line[:60]!r}: {layout.tok.decode(ids)[:60]!r} != {text[:60]!r}")
        if [tuple(o) for o in ours.offsets] != offsets:
            k = next(k for k, (a, b) in enumerate(zip(ours.offsets, offsets)) if tuple(a) != b)
            bad_offsets.append(f"{line[:60]!r}: token {k} ({ids[k]}) {ours.offsets[k]} != {offsets[k]}")
    return bad_decode, bad_offsets


def _lines(corpus: str, limit: int) -> list[str]:
    """The first `limit` lines, or (0) the lines a sweep compares (conftest.sweep_lines)."""
    return data_file(corpus).read_text(encoding="utf-8").splitlines()[:limit] if limit else sweep_lines(corpus)


def _check(layout: Layout, lines: list[str]) -> None:
    bad_decode, bad_offsets = _differences(layout, lines)
    assert not bad_decode, f"decode differs on {len(bad_decode)} of {len(lines)} lines, first: {bad_decode[0]}"
    assert not bad_offsets, f"offsets differ on {len(bad_offsets)} of {len(lines)} lines, first: {bad_offsets[0]}"


@pytest.mark.parametrize("name", REFERENCED)
@pytest.mark.parametrize("corpus", CORPORA)
def test_decode_and_offsets_on_a_slice(layouts: dict[str, Layout], name: str, corpus: str) -> None:
    _check(layouts[name], _lines(corpus, 60))


@pytest.mark.parametrize("name", [slow(n) for n in REFERENCED])
@pytest.mark.parametrize("corpus", CORPORA)
def test_decode_and_offsets_on_every_line(layouts: dict[str, Layout], name: str, corpus: str) -> None:
    _check(layouts[name], _lines(corpus, 0))


#: Hostile text: emoji and ZWJ sequences, combining marks, RTL, full-width forms, control
#: characters, whitespace runs, CJK (unknown to the English models), a ligature.
PARTS = [
    "a", "the", " ", "  ", "\t", "\n", " \n ", ".", "1.", "'s", "n't", "Café", "e\u0301", "👍", "👩‍👩‍👧",
    "🏳️‍🌈", "שלום", "مرحبا", "ＡＢＣ１２", "\x00", "\x07", "\u200b", "東京", "参考", "ﬁ", "İ", "\u2047",
]  # fmt: skip
hostile = st.lists(st.sampled_from(PARTS), max_size=12).map("".join)


@pytest.mark.parametrize("name", REFERENCED)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile)
def test_decode_and_offsets_on_hostile_text(layouts: dict[str, Layout], name: str, text: str) -> None:
    _check(layouts[name], [text])


@pytest.mark.slow
@pytest.mark.parametrize("name", REFERENCED)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile)
def test_decode_and_offsets_on_much_hostile_text(layouts: dict[str, Layout], name: str, text: str) -> None:
    _check(layouts[name], [text])


@pytest.mark.parametrize("corpus", [slow(CORPORA[0]), *CORPORA[1:]])
def test_end_of_word_bpe_spans_follow_hugging_faces_rule(layouts: dict[str, Layout], corpus: str) -> None:
    """A token spans its characters without the `</w>` suffix (alone, the suffix is empty at
    the word's end); an unknown token spans the one character it replaced."""
    tok = layouts["char-bpe-eow"].tok
    lines = [*_lines(corpus, 0 if corpus == CORPORA[0] else 300), "CAFÉ au lait"]
    for line in lines:
        enc = tok.encode_with_offsets(line)
        for i, (s, e) in zip(enc.ids, enc.offsets):
            token = tok.token_bytes(i).decode("utf-8")
            if token == "<unk>":
                assert e - s == 1, (line, enc)
            else:
                assert line[s:e] == token.removesuffix("</w>"), (line, token, (s, e))


def test_wordpiece_cleanup_is_stored_only_when_off(layouts: dict[str, Layout]) -> None:
    """BERT's default decoder (cleanup on) adds no config key, so no version's hash changed;
    the setting survives an export."""
    on, off = layouts["bert-cleanup"].tok, layouts["bert-no-cleanup"].tok
    ids = on.encode("1. 1.")
    assert on.decode(ids) == "1. 1."
    assert off.decode(off.encode("1. 1.")) == "1 . 1 ."


def test_unk_surface_round_trips_through_model_files(tmp_path: Path) -> None:
    """A model's own `unk_surface` is read, decoded with and written back; the default one is
    not stored (trained versions keep their hashes)."""
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(head_lines("dr.zh-cn.txt", 30_000))
    prefix = tmp_path / "m"
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), vocab_size=800, character_coverage=0.98, minloglevel=2,
        unk_surface="<?>",
    )  # fmt: skip
    sp = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    with Registry(tmp_path / "r.db") as reg:
        reg.import_sentencepiece("m", str(prefix) + ".model")
        assert reg.stored("m@1").data().config["unk_surface"] == "<?>"
        lines = data_file("dr.zh-cn.txt").read_text(encoding="utf-8").splitlines()[:2000]
        ids = next(ids for ids in sp.encode(lines) if sp.unk_id() in ids)
        assert reg.load("m").decode(ids) == sp.decode(ids) and "<?>" in sp.decode(ids)
        reg.export("m", "sentencepiece", tmp_path / "back.model")
        back = spm.SentencePieceProcessor(model_file=str(tmp_path / "back.model"))
        assert back.decode(ids) == sp.decode(ids)
        reg.train("u", [corpus], UnigramOptions(vocab_size=1000, byte_fallback=False))
        assert "unk_surface" not in reg.stored("u@1").data().config
