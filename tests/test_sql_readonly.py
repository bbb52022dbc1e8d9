"""`tokreg sql` reads and never writes: every write, ATTACH or setting change is refused with a
clear line and the database file is left byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tokreg import BpeOptions, ReadOnlyError, Registry, TokregError

from .conftest import Cli

WRITES = [
    "INSERT INTO versions (name) VALUES ('x')",
    "UPDATE tokens SET text = 'x'",
    "DELETE FROM merges",
    "DROP TABLE tokens",
    "DROP VIEW vocab",
    "CREATE TABLE evil (x)",
    "ALTER TABLE tokens ADD COLUMN x",
    "ATTACH DATABASE '/tmp/other.db' AS other",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA foreign_keys = OFF",
    "PRAGMA user_version = 7",
    "CREATE TEMP TABLE t AS SELECT 1",
    "REPLACE INTO versions (id) VALUES (1)",
    "VACUUM",
    "WITH x AS (SELECT 1) DELETE FROM tokens",
]


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def filled(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("ro", [small_corpus], BpeOptions(vocab_size=300))
    # Fold the WAL into the main file so that the file digest covers everything.
    with registry.engine.connect() as c:
        c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return registry


@pytest.mark.parametrize("stmt", WRITES)
def test_writes_are_refused(filled: Registry, db_path: Path, run: Cli, stmt: str) -> None:
    before = digest(db_path)
    res = run("sql", stmt, ok=False)
    assert res.exit_code != 0
    lines = [x for x in res.output.splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith("tokreg: error:") and "Traceback" not in res.output
    with pytest.raises(TokregError):
        filled.sql(stmt)
    assert digest(db_path) == before
    _, rows = filled.sql("SELECT count(*) FROM tokens")
    assert rows[0][0] == 300


def test_write_is_a_read_only_error(filled: Registry) -> None:
    with pytest.raises(ReadOnlyError, match="read-only"):
        filled.sql("DELETE FROM tokens")


def test_reads_work_in_every_format(filled: Registry, run: Cli) -> None:
    q = "SELECT id, text, bytes FROM vocab WHERE tokenizer = 'ro@1' AND id IN (104, 105) ORDER BY id"
    table = run("sql", q).output.splitlines()
    assert table[0].split() == ["ID", "TEXT", "BYTES"] and table[1].split() == ["104", "h", "0x68"]
    assert run("sql", q, "--csv").output.splitlines()[1] == "104,h,0x68"
    assert '"text": "i"' in run("sql", q, "--json").output
    assert run("sql", "PRAGMA table_info(tokens)").exit_code == 0
    res = run("sql", "SELECT 1; SELECT 2", ok=False)
    assert res.exit_code != 0 and "one statement" in res.output
