"""Hugging Face `tokenizer.json` for WordPiece and Unigram: a WordPiece file tokreg exports, loaded
with the `tokenizers` package, gives tokreg's ids on every line of the shared corpora; a Unigram
version is refused (HF's f64 path sums break ties other than SentencePiece's f32 ones), and a
Unigram file in HF's SentencePiece layout is read. Importing either back gives the same hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokreg import Registry, UnigramOptions, WordPieceOptions

from .conftest import CORPORA_BY_LANE, Cli, corpus_slice, data_file
from .hf_unigram import unigram_json

tokenizers = pytest.importorskip("tokenizers")

VARIANTS = {
    "wp-uncased": WordPieceOptions(vocab_size=4000, lowercase=True, special=("[CLS]", "[SEP]")),
    "wp-cased-nfkc": WordPieceOptions(vocab_size=4000, unicode_normalization="nfkc"),
    "ug-bytes": UnigramOptions(vocab_size=4000, byte_fallback=True, special=("<s>", "</s>")),
    "ug-collapse": UnigramOptions(vocab_size=4000, remove_extra_whitespaces=True),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, Path]:
    folder = tmp_path_factory.mktemp("hfx")
    corpus = corpus_slice(folder / "slice.txt")
    reg = Registry(folder / "registry.db")
    for name, opts in VARIANTS.items():
        reg.train(name, [corpus], opts)
        if name.startswith("wp"):
            reg.export(f"{name}@1", "hf", folder / f"{name}.json")
        else:  # refused (tests/test_exports_exact.py); the file HF's converters would write
            (folder / f"{name}.json").write_bytes(unigram_json(reg.stored(f"{name}@1").data()))
    return reg, folder


@pytest.mark.parametrize("corpus", CORPORA_BY_LANE)
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_hf_gives_tokreg_ids(trained: tuple[Registry, Path], name: str, corpus: str) -> None:
    reg, folder = trained
    theirs = tokenizers.Tokenizer.from_file(str(folder / f"{name}.json"))
    lines = data_file(corpus).read_text(encoding="utf-8").splitlines()
    tok = reg.load(f"{name}@1")
    ours = tok.encode_batch(lines)
    got = [e.ids for e in theirs.encode_batch(lines, add_special_tokens=False)]
    bad = [i for i in range(len(lines)) if ours[i] != got[i]]
    if name.startswith("wp"):
        assert not bad, f"{len(bad)} of {len(lines)} lines differ, first: {lines[bad[0]][:80]!r}"
        return
    # Unigram: tokreg breaks exact ties as SentencePiece does (f32 path sums); HF sums in f64 and
    # can break the same tie the other way. Every difference must be such a tie: the same text,
    # and two segmentations of equal probability (why tokreg refuses `export --format hf` of a
    # Unigram). How many lines hold such a tie depends on the trained scores: under 1% with
    # trainer revision 2, 1.5% for the whitespace-collapsing variant with revision 3.
    score = {i: s for i, s in enumerate(piece_scores(reg, f"{name}@1"))}
    for i in bad:
        assert tok.decode(got[i]) == tok.decode(ours[i])
        assert sum(score[t] for t in got[i]) == pytest.approx(sum(score[t] for t in ours[i]), abs=1e-4)
    assert len(bad) < len(lines) / 50


def piece_scores(reg: Registry, ref: str) -> list[float]:
    _, rows = reg.sql(f"SELECT score FROM vocab WHERE tokenizer = '{ref}' ORDER BY id")
    return [r[0] for r in rows]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_import_of_the_export_gives_the_same_hash(trained: tuple[Registry, Path], name: str, run: Cli) -> None:
    """WordPiece: the same hash. Unigram: the file is HF's SentencePiece layout, whose decoder
    writes the unknown piece's own text where the trained version (SentencePiece's rule) writes
    ` ⁇ `; the import keeps the file's (config "unk_surface"), so it is the trained version but
    for that key, and the same file always gives the same hash."""
    reg, folder = trained
    back = reg.import_hf(f"{name}-back", folder / f"{name}.json")
    trained_version = reg.resolve(f"{name}@1")
    assert f"{name}-again@1" in run("import", "hf", folder / f"{name}.json", "--name", f"{name}-again").output
    assert reg.import_hf(f"{name}-twice", folder / f"{name}.json").content_hash == back.content_hash
    if name.startswith("wp"):
        assert back.content_hash == trained_version.content_hash
        return
    ours, theirs = reg.load(f"{name}@1"), reg.load(f"{name}-back@1")
    unk = next(t.id for t in reg.stored(f"{name}@1").data().tokens if t.kind == "unknown")
    assert theirs.config == {**ours.config, "unk_surface": ours.token_bytes(unk).decode()}
    assert back.content_hash != trained_version.content_hash


@pytest.mark.parametrize("name", ["ug-bytes", "ug-collapse"])
def test_unigram_file_decodes_the_unknown_piece_as_hf(trained: tuple[Registry, Path], name: str) -> None:
    reg, folder = trained
    hf = tokenizers.Tokenizer.from_file(str(folder / f"{name}.json"))
    reg.import_hf(f"{name}-unk", folder / f"{name}.json")
    tok = reg.load(f"{name}-unk@1")
    unk = next(t.id for t in reg.stored(f"{name}-unk@1").data().tokens if t.kind == "unknown")
    for ids in ([unk], [unk, *tok.encode("in the beginning")], [*tok.encode("and God said"), unk, unk]):
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
