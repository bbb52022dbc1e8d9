"""`reproduce`: retrain from the recorded run; corpus files are checked against the recorded
fingerprint first (a changed or missing file is named); the answer is whether the new hash
equals the stored one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tokreg import BpeOptions, InputError, NotFoundError, Registry
from tokreg.training import reproduce as reproduce_mod
from tokreg.training import train_run
from tokreg.training.corpus import Corpus

from .conftest import Cli, head_lines


@pytest.fixture
def corpus(tmp_path: Path) -> list[Path]:
    out = []
    for name in ("dr.en.txt", "dr.zh-cn.txt"):
        p = tmp_path / name
        p.write_bytes(head_lines(name, 120_000))
        out.append(p)
    return out


def test_a_trained_version_reproduces(registry: Registry, corpus: list[Path]) -> None:
    v = registry.train("r", corpus, BpeOptions(vocab_size=500, pattern="o200k", special=("<s>",)))
    registry.train("r", corpus, BpeOptions(vocab_size=1500, char_level=True, end_of_word_suffix="</w>"))
    for ref in ("r@1", "r@2"):
        r = registry.reproduce(ref)
        assert r.same and r.reproduced == r.stored == registry.resolve(ref).content_hash
    assert list(registry.reproduce("r@1").files) == [str(p.resolve()) for p in corpus]
    assert v.content_hash == registry.reproduce("r@1").reproduced


def test_a_changed_or_missing_file_is_named(registry: Registry, corpus: list[Path]) -> None:
    registry.train("r", corpus, BpeOptions(vocab_size=400))
    with corpus[1].open("ab") as fh:
        fh.write(b"one more line\n")
    with pytest.raises(InputError, match=r"dr.zh-cn.txt' changed since training: recorded [\d,]+ bytes"):
        registry.reproduce("r")
    corpus[0].unlink()
    with pytest.raises(InputError, match=r"dr.en.txt' \(recorded as dr.en.txt, [\d,]+ bytes\) is missing"):
        registry.reproduce("r")


def test_moved_files_can_be_given(registry: Registry, corpus: list[Path], tmp_path: Path) -> None:
    registry.train("r", corpus, BpeOptions(vocab_size=400))
    moved = tmp_path / "moved"
    moved.mkdir()
    for p in corpus:
        shutil.move(p, moved / p.name)
    assert registry.reproduce("r", [moved / p.name for p in corpus]).same
    with pytest.raises(InputError, match="trained on 2 file"):
        registry.reproduce("r", [moved / corpus[0].name])
    with pytest.raises(InputError, match="changed since training"):  # the right files, in the wrong order
        registry.reproduce("r", [moved / p.name for p in reversed(corpus)])


def test_an_imported_version_has_no_run(registry: Registry, corpus: list[Path], tmp_path: Path) -> None:
    registry.train("r", corpus, BpeOptions(vocab_size=300))
    registry.export("r", "hf", tmp_path / "t.json")
    registry.import_hf("imp", tmp_path / "t.json")
    with pytest.raises(NotFoundError, match="imp@1 has no recorded training run"):
        registry.reproduce("imp")


def test_cli_reproduce(run: Cli, corpus: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    run("train", "c", *corpus, "--vocab-size", 400, "-q")
    out = run("reproduce", "c@1").output
    assert "same hash: reproduced exactly" in out
    assert json.loads(run("reproduce", "c", "--json").output)["same"] is True

    def drifted(files: list[str], config: dict[str, object], field: object = None) -> object:  # output changed
        return train_run.train(Corpus.of(files), BpeOptions(vocab_size=399))[0]

    monkeypatch.setattr(reproduce_mod, "retrain", drifted)
    res = run("reproduce", "c@1", ok=False)
    assert res.exit_code == 3 and "DIFFERENT hash" in res.output and "did not reproduce" in res.output
