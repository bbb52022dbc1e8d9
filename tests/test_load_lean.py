"""`tokreg.load(NAME@N, db=FILE)` with the content cached reads the version row through sqlite3
(store/sqlite_read.py), without SQLAlchemy, and gives exactly what `Registry.load` gives: the
same version, the same refusals; whatever it cannot answer goes the registry's way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

import tokreg
from tokreg import BpeOptions, IntegrityError, NotFoundError, Registry
from tokreg.encoding import content_cache
from tokreg.store import sqlite_read


@pytest.fixture
def reg(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("lean", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("lean", [small_corpus], BpeOptions(vocab_size=320))
    registry.load("lean@1")  # fills the cache
    registry.load("lean@2")
    return registry


#: What loading a version never needs: the other families, the trainer and the file codecs.
NOT_IMPORTED = (
    "sqlalchemy",
    "tokreg.algorithms.unigram",
    "tokreg.algorithms.wordpiece",
    "tokreg.algorithms.bpe.bundles",
    "tokreg.algorithms.bpe.training",
    "tokreg.algorithms.bpe.hf",
    "tokreg.algorithms.bpe.tiktoken",
)


def test_a_fresh_process_loads_without_sqlalchemy(reg: Registry, db_path: Path, small_corpus: Path) -> None:
    code = (
        "import sys, tokreg; tok = tokreg.load('lean@1', db=sys.argv[1]); "
        "print(tok.ref, tok.hash, tok.encode_ordinary(sys.argv[2])); "
        f"assert not [m for m in sys.modules if m.startswith({NOT_IMPORTED!r})], sorted(sys.modules)"
    )
    line = small_corpus.read_text(encoding="utf-8")[:300]
    out = subprocess.run([sys.executable, "-c", code, str(db_path), line], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    want = reg.load("lean@1")
    assert out.stdout.strip() == f"{want.ref} {want.hash} {want.encode_ordinary(line)}"


def test_the_same_version_as_the_registry(reg: Registry, db_path: Path) -> None:
    for ref in ["lean@1", "lean@2", "lean", " lean@1 "]:
        row = sqlite_read.version_row(str(db_path), ref)
        assert row is not None
        want = reg.resolve(ref.strip())
        assert (row.ref, row.content_hash, row.algorithm, row.config) == (
            want.ref,
            want.content_hash,
            want.algorithm,
            want.config,
        )
        assert tokreg.load(ref, db=db_path).hash == want.content_hash


def test_what_it_cannot_answer_goes_the_registry_way(reg: Registry, db_path: Path) -> None:
    for ref in ["lean@latest", "lean@3", "nope", "xxh3-128:00", "lean@x", "bad name"]:
        assert sqlite_read.version_row(str(db_path), ref) is None
        try:
            want: object = reg.load(ref).hash
        except tokreg.TokregError as e:
            want = (type(e), str(e))
        try:
            got: object = tokreg.load(ref, db=db_path).hash
        except tokreg.TokregError as e:
            got = (type(e), str(e))
        assert got == want, ref


def test_an_older_schema_or_another_location_is_not_read(reg: Registry, db_path: Path, tmp_path: Path) -> None:
    assert sqlite_read.version_row(f"sqlite:///{db_path}", "lean@1") is None
    assert sqlite_read.version_row(str(tmp_path / "missing.db"), "lean@1") is None
    with reg.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0006'"))
    assert sqlite_read.version_row(str(db_path), "lean@1") is None


def test_an_edited_row_is_refused_as_the_registry_refuses_it(reg: Registry, db_path: Path) -> None:
    v = reg.resolve("lean@1")
    config = dict(v.config, pattern="gpt2" if v.config.get("pattern") != "gpt2" else "cl100k")
    with reg.engine.begin() as conn:
        conn.execute(text("UPDATE versions SET config = :c WHERE id = :i"), {"c": json.dumps(config), "i": v.id})
    with pytest.raises(IntegrityError) as lean:
        tokreg.load("lean@1", db=db_path)
    with pytest.raises(IntegrityError) as full:
        reg.load("lean@1")
    assert str(lean.value) == str(full.value) and "version row's algorithm or config" in str(lean.value)


def test_a_cold_cache_is_filled_by_the_registry(reg: Registry, db_path: Path) -> None:
    v = reg.resolve("lean@2")
    path = content_cache.path_of(v.content_hash)
    assert path is not None and path.exists()
    os.remove(path)
    assert tokreg.load("lean@2", db=db_path).hash == v.content_hash
    assert path.exists()
    with reg.engine.begin() as conn:  # a row that names other content: not in the cache, so the registry reads
        conn.execute(
            text("UPDATE versions SET content_hash = :h WHERE id = :i"), {"h": "xxh3-128:" + "0" * 32, "i": v.id}
        )
    with pytest.raises((IntegrityError, NotFoundError)):
        tokreg.load("lean@2", db=db_path)


def test_the_model_alone_is_the_algorithms_model() -> None:
    """`algorithms.model_of` (what loading uses, importing model modules only) tries the same
    models in the same order as `algorithms.of`, so both pick the same one for any version."""
    import importlib

    from tokreg import algorithms

    registered = algorithms._REGISTERED
    assert len(registered) == len(algorithms.ALGORITHMS)
    for (_, _, module, name, _), algo in zip(registered, algorithms.ALGORITHMS):
        assert getattr(importlib.import_module(f"tokreg.algorithms.{module}"), name) is algo.model


def test_the_trainer_alone_is_the_algorithms_trainer() -> None:
    """`trainer_for` and `option_types` (what training and `tokreg train` use, importing the
    trainer modules only) find the trainers the algorithms bundle, in the same order."""
    import importlib

    from tokreg import algorithms

    for (*_, module), algo in zip(algorithms._REGISTERED, algorithms.ALGORITHMS):
        trainer = None if module is None else importlib.import_module(f"tokreg.algorithms.{module}").TRAINER
        assert trainer is algo.trainer
    bundled = [a.trainer for a in algorithms.ALGORITHMS if a.trainer is not None]
    assert list(algorithms._trainers()) == list(dict.fromkeys(bundled))
    assert algorithms.option_types() == list(dict.fromkeys(t.options_type for t in bundled))


def test_training_imports_no_file_codec() -> None:
    """`tokreg train`'s command and trainer lookup import the trainers, not the bundles of
    file codecs (tokenizer.json, tiktoken, SentencePiece, vocab.txt)."""
    code = (
        "import sys, tokreg.cli.train; from tokreg import algorithms, BpeOptions; "
        "algorithms.trainer_for(BpeOptions(vocab_size=300)); "
        "print([m for m in sys.modules if m.endswith(('.bundles', '.hf', '.tiktoken', '.vocab_txt'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: What a pinned load of a built encoder never needs either: the model module (read on first use
#: of `title`, `lossless`, `template`), dataclasses and everything they bring, tomllib.
NOT_IMPORTED_PINNED = (
    *NOT_IMPORTED,
    "tokreg.algorithms.bpe",
    "tokreg.algorithms.template",
    "tokreg.algorithms.interfaces",
    "tokreg.encoding.stochastic",
    "dataclasses",
    "inspect",
    "tomllib",
    "threading",
    "xxhash",
)


def test_a_pinned_built_encoder_loads_lean_and_in_place(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tokreg.load(NAME)` pinned in tokreg.lock, its built encoder cached: a fresh process maps
    the cache file and reads the tables in place, reads the lockfile without tomllib, and
    imports none of NOT_IMPORTED_PINNED; the same ids, and the model's answers on first use."""
    from tokreg.encoding import built_cache

    monkeypatch.setattr(built_cache, "MIN_TOKENS", 0)  # a small vocabulary is cached built too
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    registry.train("lean", [small_corpus], BpeOptions(vocab_size=300))
    registry.pin("lean@1")
    want = registry.load("lean@1")  # fills the content and built caches
    assert built_cache.path_of(want.hash) is not None and built_cache.path_of(want.hash).is_file()  # type: ignore[union-attr]
    line = small_corpus.read_text(encoding="utf-8")[:300]
    code = (
        "import sys, tokreg; tok = tokreg.load('lean'); ids = tok.encode_ordinary(sys.argv[1]); "
        f"loaded = [m for m in sys.modules if m.startswith({NOT_IMPORTED_PINNED!r})]; "
        "print(tok.ref, tok.hash, tok._enc.tables_in_place, tok._content is None, ids, loaded, tok.title, tok.lossless)"
    )
    out = subprocess.run([sys.executable, "-c", code, line], capture_output=True, text=True, cwd=project)
    assert out.returncode == 0, out.stderr
    expect = f"{want.ref} {want.hash} True True {want.encode_ordinary(line)} [] {want.title} {want.lossless}"
    assert out.stdout.strip() == expect
