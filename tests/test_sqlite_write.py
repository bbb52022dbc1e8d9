"""The lean write of `tokreg train` (store/sqlite_write.py) against the registry's own writer:
the same training run recorded both ways into two fresh registries gives the same rows, value
for value and type for type, in every table, and the same `VersionInfo`s; it takes only an
existing SQLite registry at the newest schema (None otherwise: the registry opens it)."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, Registry
from tokreg.cli.opening import Opening, samples_of
from tokreg.store import sqlite_write
from tokreg.store.schema import TrainingRun, table
from tokreg.training import train_run
from tokreg.training.corpus import Corpus

from .conftest import corpus_slice


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, each value with its SQLite type, in a fixed order."""
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {}
        for t in tables:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({t})")]
            typed = ", ".join(f"{c}, typeof({c})" for c in cols)
            out[t] = sorted(conn.execute(f"SELECT {typed} FROM {t}").fetchall(), key=repr)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[list[Any]]:
    """Two runs on a slice of the shared corpora: one of two sizes (a run group), one of one size."""
    corpus = Corpus.of([corpus_slice(tmp_path_factory.mktemp("lean") / "slice.txt", 15_000)])
    opts = BpeOptions(vocab_size=400, pattern="gpt2")
    return [train_run.train(corpus, opts, [300, 400]), train_run.train(corpus, BpeOptions(vocab_size=350))]


def test_the_lean_write_stores_what_the_registry_stores(tmp_path: Path, runs: list[list[Any]]) -> None:
    full, lean = tmp_path / "full.db", tmp_path / "lean.db"
    Registry(lean, create=True).close()
    rec = sqlite_write.open_file(str(lean), samples_of)
    assert rec is not None
    with Registry(full, create=True) as reg:
        for i, run in enumerate(runs):
            want = [r.info for r in reg.record_trained("m", run, message=f"run {i}" if i else None)]
            with sqlite3.connect(full) as conn:
                (last,) = conn.execute("SELECT created_at FROM versions ORDER BY id DESC LIMIT 1").fetchone()
            created = datetime.fromisoformat(last).replace(tzinfo=timezone.utc)
            got = [r.info for r in rec.record_trained("m", run, message=f"run {i}" if i else None, created_at=created)]
            assert got == want
    rec.close()
    assert [v.ref for v in want] == ["m@3"]
    assert _dump(lean) == _dump(full)
    with Registry(lean) as reg:  # the registry reads and verifies what the lean write wrote
        assert [(r.ref, r.ok) for r in reg.verify()] == [("m@1", True), ("m@2", True), ("m@3", True)]


def test_it_records_the_run_columns_of_the_schema() -> None:
    assert set(sqlite_write.RUN_COLUMNS) == {c.name for c in table(TrainingRun).c} - {"id", "version_id"}


def test_only_an_existing_registry_at_the_newest_schema_is_taken(tmp_path: Path) -> None:
    assert sqlite_write.open_file(str(tmp_path / "none.db"), samples_of) is None
    assert sqlite_write.open_file("postgresql://nobody@localhost/none", samples_of) is None
    (tmp_path / "other.db").write_bytes(b"not a database")
    assert sqlite_write.open_file(str(tmp_path / "other.db"), samples_of) is None
    old = tmp_path / "old.db"
    Registry(old, create=True).close()
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0010'")
    assert sqlite_write.open_file(str(old), samples_of) is None


def test_train_opens_an_existing_registry_without_sqlalchemy(tmp_path: Path) -> None:
    """`tokreg train` into an existing SQLite registry records through the lean write; into a
    new one, through the registry (which creates it)."""
    Registry(tmp_path / "r.db", create=True).close()
    opening = Opening(str(tmp_path / "r.db"), "m")
    assert isinstance(opening.registry(), sqlite_write.SqliteRecorder)
    opening.abandon()
    opening = Opening(str(tmp_path / "new.db"), "m")
    assert isinstance(opening.registry(), Registry)
    opening.abandon()


def test_a_write_waits_for_ready_and_what_it_raises_rolls_it_back(tmp_path: Path, runs: list[list[Any]]) -> None:
    """`tokreg train` measures its versions while it records them (`ready` waits for the
    measure before the commit): a measure that fails leaves both kinds of write uncommitted."""

    class Failed(Exception):
        pass

    def fail() -> None:
        raise Failed

    full, lean = tmp_path / "full.db", tmp_path / "lean.db"
    Registry(lean, create=True).close()
    shutil.copy(lean, full)  # one registry made, not two (the migrations take most of this test)
    rec = sqlite_write.open_file(str(lean), samples_of)
    assert rec is not None
    with Registry(full) as reg:
        for write in (rec.record_trained, reg.record_trained):
            with pytest.raises(Failed):
                write("m", runs[1], ready=fail)
            called: list[int] = []
            assert [r.info.ref for r in write("m", runs[1], ready=lambda c=called: c.append(1))] == ["m@1"]
            assert called == [1]
    rec.close()
    for db in (lean, full):
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT name, number, content_hash FROM versions").fetchall() == [
                ("m", 1, runs[1][0].content_hash)
            ]


def test_measured_in_the_background_is_measured_in_line(tmp_path: Path) -> None:
    corpus = Corpus.of([corpus_slice(tmp_path / "slice.txt", 15_000)])
    opts = BpeOptions(vocab_size=400, pattern="gpt2")
    trained = train_run.train_unmeasured(corpus, opts, [300, 400])
    assert all(v.round_trip is None for v in trained.versions)
    measured = trained.measure_in_background()()
    assert all(v.round_trip is not None and v.round_trip.lossless for v in measured)
    assert [v.round_trip for v in measured] == [v.round_trip for v in train_run.train(corpus, opts, [300, 400])]
    assert [v.content_hash for v in measured] == [v.content_hash for v in trained.versions]
