"""`tokreg export REF --format sentencepiece`: a `.model` file of a Unigram or SentencePiece BPE
version, trained by tokreg or imported. It loads in the `sentencepiece` library and gives
tokreg's ids on every line of the shared corpora; importing it again gives the same content
hash; and an imported model comes back byte for byte once the fields tokreg drops (training-only
settings) are taken out of the original."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, InputError, Registry, Tokenizer, UnigramOptions
from tokreg.formats import sentencepiece_proto as proto

from . import spm_models
from .conftest import CORPORA, Cli, slow

spm = pytest.importorskip("sentencepiece")

#: (message field, kept sub-fields): everything else is what tokreg drops (trainer_spec's
#: training-only settings, normalization_rule_tsv, self_test_data)
_KEPT = {1: None, 2: {3, 24, 35}, 3: {1, 2, 3, 4, 5}, 5: {2, 3, 4, 5}}


def _raw_field(out: bytearray, number: int, wire: int, value: Any) -> None:
    proto._put_varint(out, (number << 3) | wire)
    if wire == 0:
        proto._put_varint(out, value)
    elif wire == 5:
        out += value.to_bytes(4, "little")
    elif wire == 1:
        out += value.to_bytes(8, "little")
    else:
        proto._put_varint(out, len(value))
        out += value


def _without_dropped(raw: bytes) -> bytes:
    """The original file's own bytes, field by field, less what tokreg drops."""
    out = bytearray()
    for number, wire, value in proto._fields(raw):
        if number not in _KEPT:
            continue
        kept = _KEPT[number]
        if kept is not None:
            inner = bytearray()
            for n, w, v in proto._fields(value):
                if n in kept:
                    _raw_field(inner, n, w, v)
            value = bytes(inner)
        _raw_field(out, number, wire, value)
    return bytes(out)


@pytest.fixture(scope="module")
def exported(spm_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """variant -> (the exported .model of its import, the imported version's hash)."""
    folder = tmp_path_factory.mktemp("export")
    out = {}
    with Registry(folder / "r.db") as reg:
        for name, path in spm_models.items():
            v = reg.import_sentencepiece(name, path)
            out[name] = (folder / f"{name}.model", v.content_hash)
            reg.export(name, "sentencepiece", out[name][0])
    return out


def _same_ids_on_every_line(model: Path, tok: Tokenizer) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model))
    for corpus in CORPORA:
        lines = spm_models.lines(corpus)
        got = tok.encode_batch(lines)
        bad = [i for i, line in enumerate(lines) if sp.encode(line) != got[i]]
        assert not bad, f"{model.name}: {len(bad)} lines of {corpus} differ, first {lines[bad[0]][:80]!r}"


# Every line for one model of each normalizer and type; the others' files are shown equal to
# their originals (less training-only fields) below, and the originals' ids are tested on
# every line in test_sentencepiece_import.py. The fast lane takes two of them.
EVERY_LINE = [
    "unigram-nmt_nfkc",
    slow("bpe-nfkc"),
    slow("unigram-custom"),
    slow("unigram-denorm"),
    "bpe-llama",
    slow("unigram-symbols"),
]


@pytest.mark.parametrize("variant", EVERY_LINE)
def test_imported_then_exported_loads_in_sentencepiece_with_the_same_ids(
    variant: str, exported: dict[str, tuple[Path, str]], spm_imported: dict[str, Tokenizer]
) -> None:
    _same_ids_on_every_line(exported[variant][0], spm_imported[variant])


@pytest.mark.parametrize("variant", spm_models.ALL)
def test_export_then_import_gives_the_same_hash_and_the_same_bytes(
    variant: str, exported: dict[str, tuple[Path, str]], spm_models: dict[str, Path], tmp_path: Path
) -> None:
    path, content_hash = exported[variant]
    with Registry(tmp_path / "r.db") as reg:
        assert reg.import_sentencepiece("again", path).content_hash == content_hash
    assert path.read_bytes() == _without_dropped(spm_models[variant].read_bytes())


def test_what_is_dropped_is_training_only(spm_models: dict[str, Path]) -> None:
    """The originals do carry dropped fields (vocab_size at least), so the byte test above
    compares against something smaller than the file; nothing else differs."""
    raw = spm_models["unigram"].read_bytes()
    assert len(_without_dropped(raw)) < len(raw)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, Path]:
    folder = tmp_path_factory.mktemp("trained")
    reg = Registry(folder / "r.db")
    text = [line + "\n" for line in spm_models.training_lines()]
    reg.train("plain", [text], UnigramOptions(vocab_size=2000))
    reg.train("bytes", [text], UnigramOptions(vocab_size=2000, byte_fallback=True, special=("<s>", "</s>")))
    return reg, folder


@pytest.mark.parametrize("name", ["plain", "bytes"])
def test_trained_then_exported_loads_in_sentencepiece_with_the_same_ids(
    name: str, trained: tuple[Registry, Path]
) -> None:
    reg, folder = trained
    path = folder / f"{name}.model"
    reg.export(name, "sentencepiece", path)
    tok = reg.load(name)
    _same_ids_on_every_line(path, tok)
    # The file holds scores as f32 (tokreg's trainer keeps f64), so importing it is a version of
    # its own, with the same ids.
    again = reg.import_sentencepiece(f"{name}-again", path)
    assert reg.load(again.ref).encode_batch(spm_models.lines("kjv.txt")[:2000]) == tok.encode_batch(
        spm_models.lines("kjv.txt")[:2000]
    )


def test_cli_export(spm_models: dict[str, Path], run: Cli, tmp_path: Path) -> None:
    run("import", "sentencepiece", spm_models["bpe-llama"], "--name", "llama")
    out = tmp_path / "llama.model"
    res = run("export", "llama", "--format", "sentencepiece", "-o", out)
    assert "[sentencepiece]" in res.output and out.exists()
    assert spm.SentencePieceProcessor(model_file=str(out)).get_piece_size() == 3000


def test_other_algorithms_have_no_model_form(registry: Registry, tmp_path: Path) -> None:
    registry.train("bpe", [["the cat the car the rat\n"] * 50], BpeOptions(vocab_size=270))
    with pytest.raises(InputError, match="no sentencepiece form"):
        registry.export("bpe", "sentencepiece", tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()
