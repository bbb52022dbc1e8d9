"""Hugging Face `tokenizer.json` for BPE: a file tokreg exports, loaded with the `tokenizers`
package, gives tokreg's ids on the shared corpora (byte-level and character-level); importing
it back gives the same content hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokreg import BpeOptions, InputError, Registry
from tokreg.formats import hf_json
from tokreg.versions import import_export as transfer

from .conftest import CORPORA_BY_LANE, Cli, corpus_slice, data_file

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, Path]:
    """byte@1 (cl100k, 3000 tokens, a special) and char@1 (character-level, 1500 tokens),
    trained on the first 200 KB (whole lines) of each corpus."""
    folder = tmp_path_factory.mktemp("hf")
    corpus = corpus_slice(folder / "slice.txt")
    reg = Registry(folder / "registry.db")
    reg.train("byte", [corpus], BpeOptions(vocab_size=3000, special=("<|endoftext|>",)))
    reg.train("char", [corpus], BpeOptions(vocab_size=1500, char_level=True))
    return reg, folder


def _chunks(name: str) -> list[str]:
    lines = data_file(name).read_text(encoding="utf-8").splitlines(keepends=True)
    return ["".join(lines[i : i + 200]) for i in range(0, len(lines), 200)]


@pytest.mark.parametrize("name", ["byte", "char"])
@pytest.mark.parametrize("corpus", CORPORA_BY_LANE)
def test_hf_gives_tokreg_ids_on_the_corpora(trained: tuple[Registry, Path], name: str, corpus: str) -> None:
    reg, folder = trained
    path = folder / f"{name}.json"
    if not path.exists():
        reg.export(f"{name}@1", "hf", path)
    theirs = tokenizers.Tokenizer.from_file(str(path))
    chunks = _chunks(corpus)
    ours = reg.load(f"{name}@1").encode_batch(chunks)
    got = [e.ids for e in theirs.encode_batch(chunks, add_special_tokens=False)]
    bad = [i for i in range(len(chunks)) if ours[i] != got[i]]
    assert not bad, f"{len(bad)} of {len(chunks)} chunks differ, first: {chunks[bad[0]][:80]!r}"
    assert sum(map(len, ours)) > 10_000


def test_byte_level_file_shape(trained: tuple[Registry, Path]) -> None:
    reg, folder = trained
    reg.export("byte@1", "hf", folder / "shape.json")
    doc = json.loads((folder / "shape.json").read_text(encoding="utf-8"))
    split, level = doc["pre_tokenizer"]["pretokenizers"]
    assert (split["type"], split["behavior"], level["type"], level["use_regex"]) == (
        "Split",
        "Isolated",
        "ByteLevel",
        False,
    )
    assert hf_json.from_onig(split["pattern"]["Regex"]) == reg.resolve("byte@1").config["pattern"]
    assert doc["decoder"]["type"] == "ByteLevel"
    assert doc["added_tokens"][0]["content"] == "<|endoftext|>" and doc["added_tokens"][0]["id"] == 2999
    assert doc["model"]["vocab"]["Ġ"] == 32 and doc["model"]["vocab"]["!"] == 33  # GPT-2's byte mapping
    theirs = tokenizers.Tokenizer.from_file(str(folder / "shape.json"))
    assert theirs.encode("a<|endoftext|>b").ids[1] == 2999


@pytest.mark.parametrize("name", ["byte", "char"])
def test_import_of_an_exported_file_gives_the_same_hash(trained: tuple[Registry, Path], name: str) -> None:
    reg, folder = trained
    reg.export(f"{name}@1", "hf", folder / f"rt-{name}.json")
    v = reg.import_hf(f"{name}-back", folder / f"rt-{name}.json")
    assert v.content_hash == reg.resolve(f"{name}@1").content_hash and v.source == "import:hf"


def test_cli_export_and_import_hf(run: Cli, small_corpus: Path, tmp_path: Path) -> None:
    run("train", "h", small_corpus, "--vocab-size", 400, "-q", "--pattern", "o200k")
    out = tmp_path / "tokenizer.json"
    assert "[hf]" in run("export", "h", "--format", "hf", "-o", out).output
    imported = json.loads(run("import", "hf", out, "--name", "h2", "--json").output)
    assert imported["hash"] == json.loads(run("show", "h@1", "--json").output)["hash"]
    ids = run("encode", "h@1", "Hello wörld 123").output.split()
    assert [int(i) for i in ids] == tokenizers.Tokenizer.from_file(str(out)).encode("Hello wörld 123").ids


def test_char_level_with_end_of_word_suffix_is_refused(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    registry.train("w", [small_corpus], BpeOptions(vocab_size=200, char_level=True, end_of_word_suffix="</w>"))
    with pytest.raises(InputError, match="end-of-word suffix cannot be written as hf"):
        registry.export("w", "hf", tmp_path / "w.json")


def test_unsupported_hf_files_say_so(registry: Registry, tmp_path: Path) -> None:
    p = tmp_path / "wp.json"
    p.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {}}}), encoding="utf-8")
    with pytest.raises(InputError, match="WordLevel models are not supported"):
        registry.import_hf("wl", p)
    p.write_text(
        json.dumps({"normalizer": {"type": "Nmt"}, "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}}}),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="the normalizer Nmt is not supported by tokreg"):
        registry.import_hf("wp", p)
    p.write_text(
        json.dumps({"normalizer": {"type": "Nmt"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="the normalizer Nmt is not supported"):
        transfer.read_hf(p)
    p.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not a Hugging Face tokenizer.json"):
        transfer.read_hf(p)
