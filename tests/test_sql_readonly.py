"""`tokreg sql` reads and never writes, on every database: every write, ATTACH or setting change
is refused with a clear line and the database is left exactly as it was (SQLite: byte for byte;
PostgreSQL: every table's rows, the settings, the roles, the server's files). It runs one
statement per call, stops at a time limit, and streams its rows."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional

import pytest

from tokreg import BpeOptions, InputError, ReadOnlyError, Registry, TokregError
from tokreg.store import sql_allow

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


# -- one statement, bounded time, bounded memory -----------------------------------------------------


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"


def test_stacked_statements_are_refused_before_anything_runs(filled: Registry, db_path: Path, run: Cli) -> None:
    before = digest(db_path)
    for stmt in ("SELECT 1; DELETE FROM tokens", "SELECT 1; SELECT 2", "SELECT ';'; ATTACH 'x' AS y"):
        res = run("sql", stmt, ok=False)
        assert res.exit_code == 1 and "give one statement per call" in res.output and "nothing was run" in res.output
    assert digest(db_path) == before


def test_a_query_may_start_with_a_comment(filled: Registry, run: Cli) -> None:
    assert run("sql", "-- how many?\nSELECT count(*) AS n FROM tokens").output.split() == ["N", "300"]
    assert run("sql", "/* a */ SELECT 1 AS one;").output.split() == ["ONE", "1"]


def test_a_runaway_query_stops_at_its_time_limit(filled: Registry, run: Cli) -> None:
    res = run("sql", ENDLESS.replace("SELECT x FROM c", "SELECT count(*) FROM c"), "--timeout", "0.3", ok=False)
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert "stopped after 0.3 s of database time" in res.output


def test_rows_are_streamed(filled: Registry, run: Cli) -> None:
    with filled.sql_rows(ENDLESS) as rows:  # an endless result: only streaming can give its first rows
        assert rows.columns == ["x"] and [r for _, r in zip(range(5), rows)] == [(1,), (2,), (3,), (4,), (5,)]
    res = run("sql", "SELECT id FROM tokens ORDER BY id", "--max-rows", "10")
    lines = res.output.splitlines()
    assert lines[:3] == ["ID", "0", "1"] and lines[10] == "9"
    assert "the table stops at 10 rows and more rows exist" in lines[11]
    assert len(run("sql", "SELECT id FROM tokens", "--csv").output.splitlines()) == 301
    assert len(json.loads(run("sql", "SELECT id FROM tokens", "--json").output)) == 300


def test_json_keeps_columns_that_share_a_name(filled: Registry, run: Cli) -> None:
    q = "SELECT t.id, v.id, t.id AS id_2, t.text FROM tokens t JOIN versions v ON v.id = t.version_id WHERE t.id = 104"
    assert json.loads(run("sql", q, "--json").output) == [{"id": 104, "id_3": 1, "id_2": 104, "text": "h"}]
    assert run("sql", q, "--csv").output.splitlines()[0] == "id,id,id_2,text"


def test_a_huge_value_is_refused_not_built(filled: Registry, run: Cli) -> None:
    res = run("sql", "SELECT length(zeroblob(1000000000))", ok=False)
    assert res.exit_code == 1 and "too big" in res.output and "256 MB" in res.output


# -- PostgreSQL: the attack list, as the owner and as a SELECT-only role ---------------------------------

ATTACKS = [
    # statements that end the read-only transaction first, then write
    "COMMIT; DELETE FROM aliases",
    "ROLLBACK; DELETE FROM alias_events",
    "COMMIT; UPDATE tokens SET bytes = 'x'",
    "END; CREATE TABLE evil (x int)",
    "ABORT; DROP VIEW merges_view",
    "COMMIT; ALTER DATABASE {db} SET default_transaction_read_only = off",
    "COPY (SELECT 'x') TO '{tmp}/copied'",
    "LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(25)",
    # more: writes, DDL, settings, roles, transaction control, server files, other sessions
    "DELETE FROM tokens",
    "UPDATE versions SET content_hash = 'x'",
    "INSERT INTO aliases (name, alias, version_id, updated_at) VALUES ('a', 'b', 1, now())",
    "TRUNCATE samples",
    "DROP TABLE merges",
    "ALTER TABLE tokens ADD COLUMN evil int",
    "CREATE TABLE evil AS SELECT 1",
    "SELECT 1 INTO evil",
    "WITH d AS (DELETE FROM tokens RETURNING 1) SELECT count(*) FROM d",
    "EXPLAIN ANALYZE DELETE FROM tokens",
    "SELECT * FROM tokens FOR UPDATE",
    "SET default_transaction_read_only = off",
    "SET ROLE tokreg",
    "RESET ROLE",
    "SET SESSION AUTHORIZATION tokreg",
    "BEGIN",
    "COMMIT",
    "PREPARE TRANSACTION 'x'",
    "DO $$ BEGIN DELETE FROM tokens; END $$",
    "CALL nothing()",
    "GRANT ALL ON tokens TO PUBLIC",
    "CREATE ROLE evil SUPERUSER",
    "ALTER SYSTEM SET fsync = on",
    "VACUUM FULL tokens",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT set_config('role', 'tokreg', true), count(*) FROM tokens",
    "SELECT pg_catalog.set_config('statement_timeout', '0', false)",
    "SELECT lo_export(lo_from_bytea(0, 'x'), '{tmp}/lo.out')",
    "SELECT lo_import('/etc/hostname')",
    "SELECT pg_read_file('/etc/hostname')",
    "SELECT \"lo_export\" /* spaced */ (1, '{tmp}/q')",
    "SELECT U&\"lo\\005fexport\"(1, '{tmp}/q')",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
    "SELECT pg_cancel_backend(pid) FROM pg_stat_activity",
    "SELECT pg_reload_conf()",
    "SELECT pg_advisory_lock(1)",
    "SELECT pg_notify('x', 'y')",
    "SELECT nextval('versions_id_seq')",
    "SELECT setval('versions_id_seq', 1)",
    "SELECT txid_current()",
    "SELECT query_to_xml('DELETE FROM tokens RETURNING 1', true, true, '')",
    "SELECT dblink_exec('dbname=x', 'DELETE FROM tokens')",
    "SELECT pg_sleep(30)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "SELECT 1; SELECT pg_sleep(30)",
    "SELECT ';' AS a; DELETE FROM tokens",
    "SELECT $x$;$x$; DELETE FROM tokens",
    "SELECT E'\\';'; DELETE FROM tokens",
    "/* ; */ DELETE FROM tokens",
    "LISTEN x",
    "NOTIFY x",
    "DISCARD ALL",
    "CHECKPOINT",
]

SNAPSHOT = """
SELECT (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM tokens t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM versions t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM merges t),
       (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM aliases t),
       (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM alias_events t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM samples t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM version_contents t),
       (SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables
         WHERE table_schema = 'public'),
       (SELECT md5(coalesce(string_agg(s::text, '|' ORDER BY s::text), '')) FROM pg_db_role_setting s),
       (SELECT string_agg(rolname || rolsuper::text, ',' ORDER BY rolname) FROM pg_roles),
       (SELECT md5(string_agg(name || '=' || setting, '|' ORDER BY name)) FROM pg_settings),
       (SELECT count(*) FROM pg_largeobject_metadata),
       (SELECT last_value FROM versions_id_seq)
"""


def _snapshot(url: str) -> tuple[Any, ...]:

    from tokreg.store.engine import create, locate

    engine = create(locate(url))
    with engine.connect() as c:
        row = tuple(c.exec_driver_sql(SNAPSHOT).one())
    engine.dispose()
    return row


def _attack(
    url: str, owner: str, tmp_path: Path, db: str, client_checks: bool, monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    """Runs every attack through `Registry.sql` on `url`; after each, the database as `owner` sees
    it must be exactly as before, no file may have appeared, and another session is still alive."""
    from tokreg.store import readonly_sql
    from tokreg.store.engine import create, locate

    if not client_checks:  # what the server refuses by itself, with tokreg's own reading of the SQL turned off
        monkeypatch.setattr(readonly_sql, "_check_text", lambda q, p: None)
        monkeypatch.setattr(readonly_sql, "_check_postgres", lambda q, scope: None)
    reg = Registry(url)
    before = _snapshot(owner)
    bystander = create(locate(owner)).connect()  # another user's session: no attack may end it
    outcomes = {"refused": 0, "stopped": 0, "ran": 0}
    for attack in ATTACKS:
        stmt = attack.format(db=db, tmp=tmp_path)
        try:
            reg.sql(stmt, timeout=1.0)
            outcomes["ran"] += 1  # allowed to run: then it must have changed nothing (below)
        except TokregError as e:
            outcomes["stopped" if "time limit" in str(e) or "waited too long" in str(e) else "refused"] += 1
        assert _snapshot(owner) == before, f"{stmt!r} changed the database or the server"
        assert not [p for p in tmp_path.iterdir() if p.name in ("copied", "lo.out", "q")]
        assert bystander.exec_driver_sql("SELECT 1").scalar() == 1
        bystander.rollback()
    bystander.close()
    reg.close()
    return outcomes


@pytest.fixture
def pg_filled(pg_db: str, small_corpus: Path) -> str:
    with Registry(pg_db) as reg:
        reg.train("ro", [small_corpus], BpeOptions(vocab_size=300))
        reg.tag("ro@1", "prod")
    return pg_db


def test_postgres_attacks_as_the_owner_change_nothing(
    pg_filled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.engine import make_url

    outcomes = _attack(pg_filled, pg_filled, tmp_path, str(make_url(pg_filled).database), True, monkeypatch)
    assert outcomes["ran"] == 0 and outcomes["stopped"] == 1, outcomes  # the endless CTE (pg_sleep is not allowed)


@pytest.mark.slow
def test_postgres_attacks_as_a_select_only_role_change_nothing_even_unchecked(
    pg_filled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strongest setup (README, "Read-only SQL"): with tokreg's own checks of the SQL text
    switched off, the server itself keeps every attack from changing anything."""
    from sqlalchemy.engine import make_url

    from .conftest import pg_role

    reader = pg_role(pg_filled, "tokreg_reader")
    with Registry(pg_filled) as reg:
        granted = reg.grant_read("tokreg_reader")
    assert {"versions", "tokens", "merges", "vocab", "merges_view"} <= set(granted)
    outcomes = _attack(reader, pg_filled, tmp_path, str(make_url(pg_filled).database), False, monkeypatch)
    # Some run (a session setting, an advisory lock, a notification), changing nothing that
    # outlives the connection, which tokreg closes.
    assert outcomes["refused"] >= 45, outcomes
    with Registry(reader) as reg:  # and reading works
        assert reg.sql("SELECT count(*) FROM vocab WHERE tokenizer = 'ro@1'")[1] == [(300,)]


def test_postgres_lock_and_statement_timeouts(pg_filled: str) -> None:
    from sqlalchemy import create_engine

    holder = create_engine(pg_filled)
    with Registry(pg_filled) as reg, holder.connect() as c:
        c.exec_driver_sql("LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE")  # another session, e.g. a migration
        with pytest.raises(InputError, match="waited too long for a lock"):
            reg.sql("SELECT count(*) FROM tokens", timeout=0.5)
        c.rollback()
        with pytest.raises(InputError, match="stopped after 0.5 s"):
            reg.sql(ENDLESS.replace("SELECT x FROM c", "SELECT count(*) FROM c"), timeout=0.5)
        with reg.sql_rows("SELECT generate_series(1, 100000000)") as rows:  # streamed
            assert [r for _, r in zip(range(3), rows)] == [(1,), (2,), (3,)]
    holder.dispose()


# -- docs/sql.md shows exactly the allow-lists of sql_allow.py -------------------------------------------


def _doc_lists() -> dict[str, dict[str, set[str]]]:
    """{"PostgreSQL" | "SQLite": {category: names}} from the function lists of docs/sql.md (a
    `### PostgreSQL …` or `### SQLite …` heading, then `- **category:** `name`, …` lines)."""
    out: dict[str, dict[str, set[str]]] = {}
    section: Optional[dict[str, set[str]]] = None
    for line in (Path(__file__).parent.parent / "docs" / "sql.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            section = out.setdefault(line[4:].split()[0], {})
        elif line.startswith("## "):
            section = None
        elif section is not None and (m := re.match(r"- \*\*(.+?):\*\* (.*)", line)):
            section[m.group(1)] = set(re.findall(r"`([^`]+)`", m.group(2)))
    return out


def _doc_line(start: str) -> set[str]:
    """The names listed after the colon of the docs' sentence that begins with `start`."""
    text = (Path(__file__).parent.parent / "docs" / "sql.md").read_text(encoding="utf-8")
    listed = text[text.index(": `", text.index(start)) :]
    m = re.search(r"\.(\s|$)", listed)
    assert m is not None
    return set(re.findall(r"`([^`]+)`", listed[: m.start()]))


def test_docs_show_the_allow_lists() -> None:
    lists = _doc_lists()
    assert {c: set(n) for c, n in sql_allow.PG_FUNCTION_CATEGORIES.items()} == lists["PostgreSQL"]
    assert {c: set(n) for c, n in sql_allow.SQLITE_FUNCTION_CATEGORIES.items()} == lists["SQLite"]
    assert _doc_line("Types a statement may name") == set(sql_allow.PG_TYPES)
    assert _doc_line("SQLite pragmas that only describe") == set(sql_allow.SQLITE_PRAGMAS)
