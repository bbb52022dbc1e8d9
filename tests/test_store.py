"""The registry store: migrations build exactly the models, the schema is upgraded on open,
SQLite runs in WAL mode with foreign keys, the default location follows XDG."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from tokreg import BpeOptions, Registry
from tokreg.data import MergeRow, TokenizerData, TokenRow, texts
from tokreg.store import migrate
from tokreg.store.engine import locate
from tokreg.store.schema import Base
from tokreg.store.sqlite_files import default_path

from .conftest import Cli


def test_migrations_build_exactly_the_models(registry: Registry) -> None:
    with registry.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, Base.metadata) == []


def test_schema_at_head_with_views(registry: Registry) -> None:
    cur, head = registry.schema_revision()
    assert cur == head is not None
    insp = inspect(registry.engine)
    assert {"versions", "tokens", "merges", "training_runs"} <= set(insp.get_table_names())
    assert {"vocab", "merges_view"} <= set(insp.get_view_names())


def test_sqlite_runs_wal_with_foreign_keys(registry: Registry) -> None:
    with registry.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_old_database_is_upgraded_on_open(db_path: Path) -> None:
    engine = create_engine(f"sqlite:///{db_path}")
    migrate.upgrade(engine, "0001")
    engine.dispose()
    reg = Registry(db_path)
    assert reg.schema_revision()[0] == migrate.head()


def test_head_constant_is_the_scripts_head() -> None:
    assert migrate.head() == migrate.HEAD


def test_opening_a_current_registry_does_not_import_alembic(registry: Registry) -> None:
    code = (
        "import sys, tokreg; r = tokreg.Registry(sys.argv[1]); r.versions(); "
        "print(any(m == 'alembic' or m.startswith('alembic.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(registry.url)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_default_location_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOKREG_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "tokreg" / "registry.db"
    assert locate().url == f"sqlite:///{tmp_path / 'xdg' / 'tokreg' / 'registry.db'}"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "tokreg" / "registry.db"
    monkeypatch.setenv("TOKREG_DB", "postgresql+psycopg://u@h/db")
    assert locate().url == "postgresql+psycopg://u@h/db"


def test_db_commands(tmp_path: Path) -> None:
    run = Cli(tmp_path / "new.db")
    res = run("db", "current", ok=False)
    assert res.exit_code == 4 and "there is no registry at" in res.output
    out = run("db", "upgrade").output
    assert "created a new registry at" in out and "schema at revision" in out
    out = run("db", "current").output
    assert "(newest)" in out and "revision" in out
    assert "created" not in run("db", "upgrade").output


def test_views_for_hand_written_sql(registry: Registry, small_corpus: Path) -> None:
    registry.train("views", [small_corpus], BpeOptions(vocab_size=300))
    cols, rows = registry.sql(
        "SELECT tokenizer, rank, left_text, right_text, result_text, count FROM merges_view "
        "WHERE tokenizer = 'views@1' ORDER BY rank LIMIT 1"
    )
    assert rows[0][0] == "views@1" and rows[0][1] == 0 and rows[0][2] + rows[0][3] == rows[0][4]
    _, rows = registry.sql("SELECT count(*) FROM vocab WHERE tokenizer = 'views@1'")
    assert rows[0][0] == 300


def test_a_failed_write_leaves_nothing(registry: Registry, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tokreg.store import writer as record_mod

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    real = record_mod._bulk
    calls = {"n": 0}

    def flaky(conn: object, table: object, rows: list[dict[str, object]]) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # tokens written, merges not yet
            boom()
        real(conn, table, rows)

    monkeypatch.setattr(record_mod, "_bulk", flaky)
    with pytest.raises(Exception, match="unchanged"):
        registry.train("half", [small_corpus], BpeOptions(vocab_size=300))
    _, rows = registry.sql("SELECT (SELECT count(*) FROM versions), (SELECT count(*) FROM tokens)")
    assert rows[0] == (0, 0)


def test_a_cold_load_reads_the_stored_content_and_no_row(
    registry: Registry, small_corpus: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    v = registry.train("cold", [small_corpus], BpeOptions(vocab_size=300))
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "empty-cache"))
    seen: list[str] = []
    listener = lambda conn, cur, stmt, *a: seen.append(stmt)  # noqa: E731
    event.listen(Engine, "before_cursor_execute", listener)
    try:
        tok = Registry(registry.url).load("cold@1")
    finally:
        event.remove(Engine, "before_cursor_execute", listener)
    assert tok.hash == v.content_hash
    assert any("version_contents" in s for s in seen)
    assert not [s for s in seen if "FROM tokens" in s or "FROM merges" in s]
    assert (tmp_path / "empty-cache").is_dir()  # and the cache now holds it


def test_the_upgrade_stores_every_versions_content_with_its_hash(tmp_path: Path, small_corpus: Path) -> None:
    from alembic import command

    db = tmp_path / "old.db"
    with Registry(db) as reg:
        for i, name in enumerate("ab"):
            reg.train(name, [small_corpus], BpeOptions(vocab_size=300 + i))
        hashes = {v.ref: v.content_hash for v in reg.versions()}
        command.downgrade(migrate.config(reg.engine), "0003")
    with Registry(db) as reg:  # opening upgrades, backfilling version_contents
        assert reg.schema_revision()[0] == migrate.HEAD
        _, rows = reg.sql("SELECT count(*) FROM version_contents")
        assert rows == [(len(hashes),)]
        assert {v.ref: v.content_hash for v in reg.versions()} == hashes
        assert all(r.ok for r in reg.verify())


def test_rows_are_stored_as_the_data_says(registry: Registry) -> None:
    """The writer leaves out columns that are NULL in every row and decodes token texts in one
    pass; the stored rows are still exactly the data's, column for column."""
    odd = [b"\xff", b"a\x00b", b"\xe4\xb8", b"\xed\xa0\x80", "中".encode(), b"\xf0\x9f\x98\x80", b"abc\xc3", b"ab"]
    tokens = [TokenRow(id=i, bytes=bytes([i]), kind="byte") for i in range(256)]
    tokens[ord("a")] = TokenRow(id=ord("a"), bytes=b"a", kind="byte", count=7)  # one count: the column stays
    tokens.append(TokenRow(id=256, bytes=b"ab", kind="merged"))
    data = TokenizerData(
        "bpe", {"byte_level": True, "pattern": "gpt2"}, tokens, [MergeRow(rank=0, left=97, right=98, result=256)]
    )
    assert texts([TokenRow(id=0, bytes=b, kind="byte") for b in odd]) == [
        TokenRow(id=0, bytes=b, kind="byte").text for b in odd
    ]
    vid = registry.add("rows", data).id
    with registry.engine.connect() as conn:
        got = conn.execute(
            text("SELECT id, bytes, text, kind, count, score FROM tokens WHERE version_id = :v ORDER BY id"), {"v": vid}
        ).all()
        merges = conn.execute(text("SELECT * FROM merges WHERE version_id = :v"), {"v": vid}).all()
    assert [tuple(r) for r in got] == [(t.id, t.bytes, t.text, t.kind, t.count, t.score) for t in tokens]
    assert [tuple(r) for r in merges] == [(vid, 0, 97, 98, 256, None, None, None, None, None)]


def _clustered(db: Path) -> dict[str, bool]:
    """Whether `tokens` and `merges` are WITHOUT ROWID tables (SQLite's own word: a rowid table
    answers `SELECT rowid`, a WITHOUT ROWID one has no such column)."""
    import sqlite3

    out = {}
    with sqlite3.connect(db) as conn:
        for t in ("tokens", "merges"):
            try:
                conn.execute(f"SELECT rowid FROM {t} LIMIT 1").fetchall()
                out[t] = False
            except sqlite3.OperationalError:
                out[t] = True
    return out


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's and view's rows in key order, and the schema of each view."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        names = [r for r in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view')")]
        out: dict[str, list[tuple[object, ...]]] = {}
        for kind, name, sql in names:
            if name == "alembic_version":
                continue
            out[name] = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            if kind == "view":
                out[name + " sql"] = [(sql,)]
            out[name + " columns"] = [tuple(r) for r in conn.execute(f'PRAGMA table_info("{name}")')]
    return out


def test_tokens_and_merges_are_clustered_on_their_key_and_the_upgrade_keeps_every_row(
    tmp_path: Path, small_corpus: Path
) -> None:
    """Migration 0014: one B-tree per table, keyed (version_id, id|rank); a registry written at
    0013 keeps every row, every view and every hash through the upgrade, and back down."""
    from alembic import command

    db = tmp_path / "old.db"
    with Registry(db, create=True) as reg:
        assert _clustered(db) == {"tokens": True, "merges": True}  # a new registry is made so
        reg.train("a", [small_corpus], BpeOptions(vocab_size=300))
        reg.train("b", [small_corpus], BpeOptions(vocab_size=320, pattern="gpt2"))
        hashes = {v.ref: v.content_hash for v in reg.versions()}
        command.downgrade(migrate.config(reg.engine), "0013")
    assert _clustered(db) == {"tokens": False, "merges": False}
    before = _rows(db)
    assert len(before["tokens"]) == 300 + 320 and len(before["merges"]) == 44 + 64
    with Registry(db) as reg:  # opening upgrades
        assert reg.schema_revision()[0] == migrate.HEAD == "0014"
        assert {v.ref: v.content_hash for v in reg.versions()} == hashes
        assert all(r.ok for r in reg.verify())
    assert _clustered(db) == {"tokens": True, "merges": True}
    assert _rows(db) == before
