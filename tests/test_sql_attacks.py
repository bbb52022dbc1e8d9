"""The attack battery: hundreds of statements that try to act outside a read-only
query through `Registry.sql` (what `tokreg sql` and the `/sql` page run), on SQLite and on a real
PostgreSQL server whose URL role is a superuser. Each must be refused with one ReadOnlyError
line that names what was refused, and after each nothing may have changed: the registry's rows,
its schema, the roles, the settings (and how often they were loaded), large objects, sequences,
locks, replication slots, files in a watched folder, and a victim session opened before.

The battery is made from lists (dangerous calls x the ways of writing them) so that it stays
readable; legitimate queries over the same registries must keep working.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, ReadOnlyError, Registry, TokregError
from tokreg.store import readonly_sql
from tokreg.store.sql_allow import SQLITE_FUNCTIONS

from .conftest import pg_role

CORPUS = "the cat the car the rat; low lower newest widest; aaabdaaabac\n" * 200


@dataclass(frozen=True)
class Attack:
    sql: str
    names: tuple[str, ...]  # what the refusal must name (any one of them)


def _refusal_ok(e: BaseException, attack: Attack) -> str:
    """'' when `e` is a proper refusal of `attack`, else what is wrong with it."""
    msg = str(e)
    if not isinstance(e, ReadOnlyError):
        return f"{type(e).__name__}: {msg}"
    if "\n" in msg or not msg.startswith("refused: "):
        return f"not one 'refused:' line: {msg!r}"
    if not any(n.lower() in msg.lower() for n in attack.names):
        return f"does not name any of {attack.names}: {msg}"
    return ""


def _train(url: str, folder: Path) -> None:
    corpus = folder / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    with Registry(url, create=True) as reg:
        reg.train("ro", [corpus], BpeOptions(vocab_size=280))
        reg.tag("ro@1", "prod")


# -- the ways of writing a call: each wraps an expression `{e}`, or spells the name `{n}` ------------

#: Wrappers around a whole call expression.
PG_WRAPPERS = (
    "SELECT {e}",
    "SELECT {e} AS a FROM versions",
    "WITH x AS (SELECT {e} AS v) SELECT * FROM x",
    "WITH RECURSIVE r(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM r WHERE {e} IS NULL) SELECT * FROM r",
    "SELECT * FROM (SELECT {e}) AS s",
    "SELECT count(*) FROM versions WHERE EXISTS (SELECT {e})",
    "SELECT * FROM versions v, LATERAL (SELECT {e}) AS l",
    "VALUES (1), (({e})::int)",
    "EXPLAIN SELECT {e}",
    "EXPLAIN (FORMAT JSON) WITH x AS (SELECT {e}) SELECT * FROM x",
    "SELECT 1 UNION ALL SELECT ({e})::int",
    "SELECT ({e})::text",
    "SELECT coalesce(NULL, {e})",
    "SELECT id FROM versions ORDER BY {e}",
)
#: Spellings of the function's name in a plain call.
PG_SPELLINGS = (
    'SELECT "{n}"({a})',
    "SELECT pg_catalog.{n}({a})",
    'SELECT pg_catalog."{n}" /* between */ ({a})',
    "SELECT {n} -- a comment\n ({a})",
    "SELECT {u}({a})",
    "SELECT * FROM {n}({a}) AS f",
)
#: Calls that reach outside the query: server files, large objects, other sessions, the server
#: itself, settings, locks, notifications, sequences, transaction ids. {victim} is a session's
#: pid, {watch} a folder that must stay empty.
PG_CALLS = (
    ("pg_read_file", "'/etc/hostname'"),
    ("pg_read_binary_file", "'/etc/hostname'"),
    ("pg_ls_dir", "'.'"),
    ("pg_stat_file", "'postgresql.conf'"),
    ("pg_ls_waldir", ""),
    ("pg_ls_tmpdir", ""),
    ("lo_import", "'/etc/hostname'"),
    ("lo_export", "lo_from_bytea(0, 'x'), '{watch}/lo.out'"),
    ("lo_from_bytea", "0, 'x'"),
    ("lo_create", "0"),
    ("lo_unlink", "1"),
    ("pg_terminate_backend", "{victim}"),
    ("pg_cancel_backend", "{victim}"),
    ("pg_log_backend_memory_contexts", "{victim}"),
    ("pg_reload_conf", ""),
    ("pg_rotate_logfile", ""),
    ("pg_switch_wal", ""),
    ("pg_create_restore_point", "'evil'"),
    ("pg_stat_reset", ""),
    ("pg_create_physical_replication_slot", "'evil'"),
    ("set_config", "'default_transaction_read_only', 'off', false"),
    ("set_config", "'role', 'tokreg', true"),
    ("current_setting", "'data_directory'"),
    ("pg_advisory_lock", "1"),
    ("pg_advisory_xact_lock", "1"),
    ("pg_notify", "'chan', 'x'"),
    ("nextval", "'versions_id_seq'"),
    ("setval", "'versions_id_seq', 999"),
    ("txid_current", ""),
    ("pg_sleep", "30"),
)
#: Functions that run SQL (or XPath) given as text: {q} is a query calling a dangerous function.
PG_TEXT_RUNNERS = (
    ("ts_stat", "SELECT * FROM ts_stat('{q}')"),
    ("ts_rewrite", "SELECT ts_rewrite('a'::tsquery, '{q}')"),
    ("ts_rewrite", "SELECT ts_rewrite(to_tsquery('a'), '{q}')"),
    ("query_to_xml", "SELECT query_to_xml('{q}', true, true, '')"),
    ("query_to_xml_and_xmlschema", "SELECT query_to_xml_and_xmlschema('{q}', true, true, '')"),
    ("query_to_xmlschema", "SELECT query_to_xmlschema('{q}', true, true, '')"),
    ("xpath", "SELECT xpath('/row', query_to_xml('{q}', true, true, ''))"),
    ("xmlexists", "SELECT xmlexists('/row' PASSING query_to_xml('{q}', true, true, ''))"),
    ("cursor_to_xml", "SELECT cursor_to_xml('c'::refcursor, 1, true, true, '')"),
    ("table_to_xml", "SELECT table_to_xml('versions', true, true, '')"),
    ("database_to_xml", "SELECT database_to_xml(true, true, '')"),
    ("dblink", "SELECT * FROM dblink('dbname=postgres', '{q}') AS t(x text)"),
)
#: Queries the text runners are given (quotes doubled inside the string).
PG_PAYLOADS = (
    "SELECT to_tsvector(pg_read_file(''/etc/hostname''))",
    "SELECT pg_terminate_backend({victim})",
    "SELECT lo_export(lo_from_bytea(0, ''x''), ''{watch}/q.out'')",
    "SELECT pg_reload_conf()",
    "SELECT set_config(''default_transaction_read_only'', ''off'', false)",
)
#: Whole statements that are not a plain query, or use something else than a function call.
PG_STATEMENTS = (
    ("DELETE FROM tokens", "DELETE"),
    ("UPDATE versions SET content_hash = 'x'", "UPDATE"),
    ("INSERT INTO aliases (name, alias, version_id, updated_at) VALUES ('a', 'b', 1, now())", "INSERT"),
    ("TRUNCATE samples", "TRUNCATE"),
    ("DROP TABLE merges", "DROP"),
    ("CREATE TABLE evil AS SELECT 1", "CREATE"),
    ("SELECT 1 INTO evil", "SELECT INTO"),
    ("SELECT * FROM tokens FOR UPDATE", "FOR UPDATE"),
    ("SELECT * FROM tokens FOR SHARE SKIP LOCKED", "FOR UPDATE"),
    ("WITH d AS (DELETE FROM tokens RETURNING 1) SELECT count(*) FROM d", "DELETE"),
    ("WITH d AS (UPDATE versions SET number = 9 RETURNING 1) SELECT * FROM d", "UPDATE"),
    ("WITH d AS (INSERT INTO samples SELECT * FROM samples RETURNING 1) SELECT * FROM d", "INSERT"),
    ("EXPLAIN ANALYZE SELECT 1", "ANALYZE"),
    ("EXPLAIN (ANALYZE true) SELECT 1", "ANALYZE"),
    ("EXPLAIN ANALYZE DELETE FROM tokens", "ANALYZE"),
    ("EXPLAIN DELETE FROM tokens", "DELETE"),
    ("SHOW data_directory", "SHOW"),
    ("SET ROLE tokreg", "SET"),
    ("SET LOCAL statement_timeout = 0", "SET"),
    ("RESET ROLE", "RESET"),
    ("SET SESSION AUTHORIZATION tokreg", "SET"),
    ("COPY (SELECT 1) TO '{watch}/copied'", "COPY"),
    ("COPY tokens TO PROGRAM 'touch {watch}/program'", "COPY"),
    ("LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE", "LOCK"),
    ("DO $$ BEGIN PERFORM pg_reload_conf(); END $$", "DO"),
    ("CALL nothing()", "CALL"),
    ("GRANT ALL ON tokens TO PUBLIC", "GRANT"),
    ("CREATE ROLE evil SUPERUSER", "CREATE"),
    ("ALTER SYSTEM SET work_mem = '1MB'", "ALTER"),
    ("VACUUM FULL tokens", "VACUUM"),
    ("LISTEN chan", "LISTEN"),
    ("NOTIFY chan", "NOTIFY"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("DISCARD ALL", "DISCARD"),
    ("PREPARE p AS SELECT 1", "PREPARE"),
    ("DECLARE c CURSOR FOR SELECT 1", "DECLARE"),
    ("BEGIN", "BEGIN"),
    ("COMMIT", "COMMIT"),
    ("SELECT * FROM pg_authid", "pg_authid"),
    ("SELECT * FROM pg_catalog.pg_stat_activity", "pg_stat_activity"),
    ("SELECT * FROM pg_settings", "pg_settings"),
    ("SELECT * FROM pg_largeobject", "pg_largeobject"),
    ("SELECT * FROM versions_id_seq", "versions_id_seq"),
    ("TABLE pg_shadow", "pg_shadow"),
    ("SELECT * FROM other.versions", "other.versions"),
    ("SELECT * FROM postgres.public.versions", "postgres.public.versions"),
    ("WITH a AS (SELECT * FROM pg_authid), pg_authid AS (SELECT 1) SELECT * FROM a", "pg_authid"),
    ("SELECT v.pg_sleep FROM versions v", "pg_sleep"),
    ("SELECT (v).lo_unlink FROM versions v", "lo_unlink"),
    ("SELECT t.txid_current FROM tokens t", "txid_current"),
    ("SELECT 'x'::xml", "xml"),
    ("SELECT 'versions'::regclass", "regclass"),
    ("SELECT 'pg_read_file'::regproc", "regproc"),
    ("SELECT '1'::public.evil", "public.evil"),
    ("SELECT xmlelement(name a, pg_read_file('/etc/hostname'))", "XML"),
    ("SELECT * FROM XMLTABLE('/a' PASSING '<a/>' COLUMNS x text)", "XMLTABLE"),
    ("SELECT 1 OPERATOR(public.+) 1", "OPERATOR(public.+)"),
    ("SELECT * FROM versions TABLESAMPLE SYSTEM (50)", "TABLESAMPLE"),
    ("SELECT $1", "$1"),
    ("SELECT * FROM ROWS FROM (pg_ls_dir('.')) AS t", "pg_ls_dir"),
    ("SELECT count(*) FILTER (WHERE pg_reload_conf()) FROM versions", "pg_reload_conf"),
    ("SELECT sum(id) OVER (ORDER BY pg_backend_pid()) FROM versions", "pg_backend_pid"),
    ("SELECT id FROM versions GROUP BY id HAVING pg_reload_conf()", "pg_reload_conf"),
    ("SELECT id FROM versions LIMIT pg_cancel_backend({victim})::int", "pg_cancel_backend"),
    ("SELECT * FROM json_to_record('{{}}') AS t(a public.evil)", "public.evil"),
)


def _u(name: str) -> str:
    """`name` as a U&"..." identifier with its first letter escaped."""
    return 'U&"\\' + f"{ord(name[0]):04x}" + name[1:] + '"'


def pg_battery() -> list[Attack]:
    out: list[Attack] = []
    for name, args in PG_CALLS:
        call = f"{name}({args})"
        out += [Attack(w.format(e=call), (name,)) for w in PG_WRAPPERS]
        out += [Attack(s.format(n=name, a=args, u=_u(name)), (name,)) for s in PG_SPELLINGS]
    for runner, template in PG_TEXT_RUNNERS:
        shown = (runner, "query_to_xml", "to_tsquery") if runner in ("xpath", "xmlexists") else (runner,)
        out += [Attack(template.format(q=q), shown) for q in PG_PAYLOADS]
    out += [Attack(sql, (name,)) for sql, name in PG_STATEMENTS]
    return out


# -- SQLite ------------------------------------------------------------------------------------------

SQLITE_WRAPPERS = (
    "SELECT {e}",
    "SELECT {e} AS a FROM versions",
    "WITH x AS (SELECT {e} AS v) SELECT * FROM x",
    "WITH RECURSIVE r(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM r WHERE {e} IS NULL) SELECT * FROM r",
    "SELECT * FROM (SELECT {e}) AS s",
    "SELECT count(*) FROM versions WHERE EXISTS (SELECT {e})",
    "VALUES (1), ({e})",
    "EXPLAIN SELECT {e}",
    "EXPLAIN QUERY PLAN SELECT {e}",
    "SELECT 1 UNION ALL SELECT {e}",
    "SELECT id FROM versions ORDER BY {e}",
    "SELECT count(*) FROM vocab GROUP BY kind HAVING {e} IS NULL",
)
SQLITE_SPELLINGS = ('SELECT "{n}"({a})', "SELECT [{n}]({a})", "SELECT `{n}` /* c */ ({a})", "SELECT {n} -- c\n({a})")
#: Statements and reads outside the allow-list.
SQLITE_STATEMENTS = (
    ("INSERT INTO versions (name) VALUES ('x')", "INSERT"),
    ("UPDATE tokens SET text = 'x'", "UPDATE"),
    ("DELETE FROM merges", "DELETE"),
    ("REPLACE INTO versions (id) VALUES (1)", "INSERT"),
    ("DROP TABLE tokens", "DROP"),
    ("DROP VIEW vocab", "DROP"),
    ("CREATE TABLE evil (x)", "CREATE"),
    ("CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
    ("CREATE VIEW evil AS SELECT 1", "CREATE"),
    ("CREATE INDEX evil ON tokens (text)", "CREATE"),
    ("CREATE VIRTUAL TABLE evil USING fts5(x)", "CREATE"),
    ("ALTER TABLE tokens ADD COLUMN x", "ALTER TABLE"),
    ("ATTACH DATABASE '{watch}/other.db' AS other", "ATTACH"),
    ("DETACH DATABASE main", "DETACH"),
    ("WITH x AS (SELECT 1) DELETE FROM tokens", "DELETE"),
    ("WITH x AS (SELECT 1) INSERT INTO samples SELECT * FROM samples", "INSERT"),
    ("PRAGMA journal_mode = DELETE", "journal_mode"),
    ("PRAGMA foreign_keys = OFF", "foreign_keys"),
    ("PRAGMA user_version = 7", "user_version"),
    ("PRAGMA writable_schema = ON", "writable_schema"),
    ("PRAGMA query_only = OFF", "query_only"),
    ("PRAGMA wal_checkpoint(TRUNCATE)", "wal_checkpoint"),
    ("PRAGMA integrity_check", "integrity_check"),
    ("SELECT * FROM pragma_journal_mode", "journal_mode"),
    ("SELECT * FROM pragma_integrity_check", "integrity_check"),
    ("VACUUM", "VACUUM"),
    ("VACUUM INTO '{watch}/copy.db'", "VACUUM"),
    ("REINDEX", "REINDEX"),
    ("ANALYZE", "ANALYZE"),
    ("BEGIN", "TRANSACTION"),
    ("SAVEPOINT s", "SAVEPOINT"),
    ("SELECT * FROM temp.sqlite_master", "sqlite_temp_master"),
    ("SELECT * FROM sqlite_temp_master", "sqlite_temp_master"),
)


def sqlite_refused_functions() -> list[tuple[str, int]]:
    """(name, number of arguments) of every function this SQLite has that is not on the
    allow-list: each must be refused, whatever it does."""
    c = sqlite3.connect(":memory:")
    rows = c.execute("SELECT DISTINCT name, narg FROM pragma_function_list ORDER BY name, narg").fetchall()
    c.close()
    out: dict[str, int] = {}
    for name, narg in rows:
        if name.lower() not in SQLITE_FUNCTIONS and name.isidentifier() and name not in out:
            out[name] = max(narg, 1) if narg != 0 else 0
    return sorted(out.items())


def _sqlite_args(name: str, n: int) -> str:
    if name == "load_extension":
        return "'{watch}/evil.so'"
    if name == "fts3_tokenizer":
        return "'simple'"
    return ", ".join(["'x'"] * n)


def sqlite_battery() -> list[Attack]:
    out: list[Attack] = []
    funcs = sqlite_refused_functions()
    assert {"fts3_tokenizer", "load_extension"} <= {n for n, _ in funcs}
    for name, n in funcs:
        call = f"{name}({_sqlite_args(name, n)})"
        out += [Attack(w.format(e=call), (name,)) for w in SQLITE_WRAPPERS]
        out += [Attack(s.format(n=name, a=_sqlite_args(name, n)), (name,)) for s in SQLITE_SPELLINGS]
    out += [Attack(sql, (name,)) for sql, name in SQLITE_STATEMENTS]
    return out


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def sqlite_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    base = tmp_path_factory.mktemp("sqlite-attacks")
    folder, watch = base / "registry", base / "watch"
    folder.mkdir()
    watch.mkdir()
    db = folder / "registry.db"
    _train(str(db), base)
    with sqlite3.connect(db) as c:  # fold the WAL into the file, so that its digest covers everything
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    yield db, watch


def test_sqlite_battery_is_refused_without_side_effects(sqlite_registry: tuple[Path, Path]) -> None:
    db, watch = sqlite_registry
    battery = sqlite_battery()
    assert len(battery) >= 150, len(battery)
    before, wrong = _digest(db.parent), []
    reg = Registry(db)
    for attack in battery:
        stmt = attack.sql.format(watch=watch)
        try:
            reg.sql(stmt, timeout=2.0)
            wrong.append(f"ran: {stmt!r}")
        except TokregError as e:
            if problem := _refusal_ok(e, attack):
                wrong.append(f"{stmt!r}: {problem}")
        assert _digest(db.parent) == before, f"{stmt!r} changed the registry's files"
        assert not list(watch.iterdir()), f"{stmt!r} wrote a file"
    assert reg.sql("SELECT count(*) FROM tokens")[1] == [(280,)]
    reg.close()
    assert not wrong, f"{len(wrong)} of {len(battery)}:\n" + "\n".join(wrong[:20])


# -- legitimate queries -------------------------------------------------------------------------------

#: (query, expected first row or None for "some rows") on both databases.
LEGIT_COMMON: tuple[tuple[str, Any], ...] = (
    ("SELECT text, count FROM vocab WHERE tokenizer = 'ro@1' ORDER BY count DESC, id LIMIT 20", None),
    ("SELECT name, number, algorithm, vocab_size, source, created_at FROM versions ORDER BY name, number", None),
    (
        "SELECT rank, left_text, right_text, result_text, count FROM merges_view WHERE tokenizer = 'ro@1' "
        "ORDER BY rank LIMIT 20",
        None,
    ),
    ("SELECT tokenizer, kind, count(*) AS n FROM vocab GROUP BY tokenizer, kind ORDER BY kind", None),
    ("SELECT name, alias, old_version, new_version FROM alias_events ORDER BY at", ("ro", "prod", None, 1)),
    (
        "SELECT count(*) FROM merges_view m JOIN vocab v ON v.tokenizer = m.tokenizer AND v.id = m.result_id "
        "WHERE m.result_text = v.text",
        (24,),
    ),
    ("SELECT count(*), min(id), max(id), sum(length(bytes)) > 0 FROM vocab", (280, 0, 279, True)),
    (
        "SELECT id, row_number() OVER (ORDER BY id DESC) AS r, lag(id) OVER (ORDER BY id), "
        "rank() OVER (PARTITION BY kind ORDER BY id) FROM vocab WHERE id < 3 ORDER BY id",
        (0, 3, None, 1),
    ),
    ("WITH top AS (SELECT id FROM vocab ORDER BY id LIMIT 5) SELECT count(*) FROM top", (5,)),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT sum(x) FROM n", (55,)),
    ("SELECT lower('ABC'), upper('abc'), replace('aXb', 'X', '-'), abs(-2), round(2.5)", ("abc", "ABC", "a-b", 2, 3)),
    ("VALUES (1, 'a'), (2, 'b')", (1, "a")),
    ("SELECT v.name FROM versions v WHERE v.number = 1", ("ro",)),
    ("SELECT t.n FROM (SELECT count(*) AS n FROM tokens) t", (280,)),
    ("SELECT 1 UNION SELECT 2 ORDER BY 1", (1,)),
    ("EXPLAIN SELECT * FROM vocab WHERE id = 1", None),
)
LEGIT_SQLITE: tuple[tuple[str, Any], ...] = (
    ("PRAGMA table_info(versions)", (0, "id", "INTEGER", 1, None, 1)),
    ("SELECT name FROM pragma_table_info('versions') WHERE cid = 1", ("name",)),
    ("SELECT count(*) > 0 FROM pragma_index_list('tokens')", (1,)),
    (
        "SELECT count(*) FROM sqlite_schema WHERE type = 'view'",
        (8,),
    ),  # vocab, merges, evaluations, audit, datasets, shards, parity, parity merges
    ("SELECT json_object('id', id, 'text', text) FROM vocab WHERE id = 104", ('{"id":104,"text":"h"}',)),
    ("SELECT json_array_length(json_group_array(id)) FROM vocab", (280,)),
    ("SELECT sum(value) FROM json_each('[1, 2, 3]')", (6,)),
    ("SELECT '{\"a\": [1, 2]}' -> '$.a' ->> '$[1]'", (2,)),
    ("SELECT date('2024-01-02', '+1 day'), hex(bytes) FROM vocab WHERE id = 104", ("2024-01-03", "68")),
    ("EXPLAIN QUERY PLAN SELECT * FROM vocab WHERE id = 1", None),
)
LEGIT_PG: tuple[tuple[str, Any], ...] = (
    ("SELECT column_name FROM information_schema.columns WHERE table_name = 'versions' AND ordinal_position = 2", None),
    ("TABLE alembic_version", None),
    (
        "SELECT json_build_object('id', id, 'text', text)::text FROM vocab WHERE id = 104",
        ('{"id" : 104, "text" : "h"}',),
    ),
    ("SELECT jsonb_array_length(jsonb_agg(id)) FROM vocab", (280,)),
    ("SELECT sum(x::int) FROM jsonb_array_elements_text('[1, 2, 3]') AS t(x)", (6,)),
    ("SELECT j.key, j.value FROM json_each('{\"a\": 1}') j", ("a", 1)),
    ("SELECT encode(bytes, 'hex'), length(bytes), md5(text) IS NOT NULL FROM vocab WHERE id = 104", ("68", 1, True)),
    ("SELECT count(*) FROM vocab WHERE text ~ '^[a-z]$' AND text ILIKE '%'", (26,)),
    (
        "SELECT date_trunc('year', created_at) <= now(), extract(year FROM created_at) > 2000 FROM versions",
        (True, True),
    ),
    (
        "SELECT trim(both 'x' FROM 'xax'), position('b' IN 'abc'), substring('abc' FROM 2), '1'::int + 1",
        ("a", 2, "bc", 2),
    ),
    ("SELECT string_agg(text, '' ORDER BY id) FROM vocab WHERE id BETWEEN 97 AND 99", ("abc",)),
    ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY id) FROM vocab", (139.5,)),
    ("SELECT id FROM vocab WHERE id = ANY(ARRAY[1, 2]) ORDER BY id", (1,)),
    ("SELECT g FROM generate_series(1, 3) AS g ORDER BY g DESC", (3,)),
    ("SELECT x.* FROM unnest(ARRAY['a', 'b']) WITH ORDINALITY AS x(v, n) ORDER BY n", ("a", 1)),
    ("SELECT current_user = session_user, pg_typeof(1)::text", (True, "integer")),
    ("EXPLAIN (COSTS false, FORMAT JSON) SELECT count(*) FROM merges_view", None),
)


def _check_legit(reg: Registry, queries: tuple[tuple[str, Any], ...]) -> list[str]:
    wrong = []
    for q, first in queries:
        try:
            _, rows = reg.sql(q)
        except TokregError as e:
            wrong.append(f"{q!r}: {e}")
            continue
        if not rows or (first is not None and tuple(rows[0]) != first):
            wrong.append(f"{q!r}: {rows[:2]}")
    return wrong


def test_sqlite_legitimate_queries_work(sqlite_registry: tuple[Path, Path]) -> None:
    with Registry(sqlite_registry[0]) as reg:
        assert not (wrong := _check_legit(reg, LEGIT_COMMON + LEGIT_SQLITE)), "\n".join(wrong)


# -- PostgreSQL -------------------------------------------------------------------------------------

#: What must not change, read as the superuser that owns the registry.
PG_SNAPSHOT = """
SELECT (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM tokens t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM versions t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM merges t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM aliases t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM alias_events t),
       (SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM samples t),
       (SELECT md5(string_agg(c.relname || c.relkind::text || coalesce(c.relacl::text, ''), ',' ORDER BY c.relname))
          FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace),
       (SELECT md5(string_agg(a.attrelid::regclass::text || '.' || a.attname, ',' ORDER BY a.attrelid, a.attnum))
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = 'public'::regnamespace),
       (SELECT string_agg(rolname || rolsuper::text || rolcanlogin::text, ',' ORDER BY rolname) FROM pg_roles),
       (SELECT md5(string_agg(name || '=' || setting, '|' ORDER BY name)) FROM pg_settings),
       (SELECT md5(coalesce(string_agg(f::text, '|' ORDER BY f::text), '')) FROM pg_file_settings f),
       (SELECT md5(coalesce(string_agg(s::text, '|' ORDER BY s::text), '')) FROM pg_db_role_setting s),
       pg_conf_load_time(),
       (SELECT count(*) FROM pg_largeobject_metadata),
       (SELECT string_agg(last_value::text, ',') FROM pg_sequences),
       (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
       (SELECT count(*) FROM pg_replication_slots),
       (SELECT count(*) FROM pg_prepared_xacts),
       pg_walfile_name(pg_current_wal_lsn()),
       (SELECT stats_reset FROM pg_stat_database WHERE datname = current_database()),
       pg_notification_queue_usage()
"""


@pytest.fixture(scope="module")
def pg_registry(pg_admin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A registry on the session's PostgreSQL server (a superuser URL), and a folder the server
    could write to (the target of lo_export and COPY attempts)."""
    import psycopg

    dsn = pg_admin.replace("postgresql+psycopg://", "postgresql://")
    name = f"attacks{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    url = pg_admin.replace("/postgres?", f"/{name}?")
    _train(url, tmp_path_factory.mktemp("pg-attacks"))
    with tempfile.TemporaryDirectory(prefix="tokreg-watch-") as d:
        watch = Path(d)
        watch.chmod(0o777)  # the server (user postgres) could write here if an attack got through
        yield url, watch
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.slow
def test_postgres_battery_as_a_superuser_is_refused_without_side_effects(pg_registry: tuple[str, Path]) -> None:
    import psycopg

    url, watch = pg_registry
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    owner = psycopg.connect(dsn, autocommit=True)
    assert owner.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
    victim = psycopg.connect(dsn, autocommit=True)  # another user's session: nothing may end it
    victim_pid = victim.info.backend_pid
    battery = pg_battery()
    assert len(battery) >= 150, len(battery)
    before, wrong = owner.execute(PG_SNAPSHOT).fetchone(), []
    reg = Registry(url)
    for attack in battery:
        stmt = attack.sql.format(victim=victim_pid, watch=watch)
        try:
            reg.sql(stmt, timeout=2.0)
            wrong.append(f"ran: {stmt!r}")
        except TokregError as e:
            if problem := _refusal_ok(e, attack):
                wrong.append(f"{stmt!r}: {problem}")
        assert owner.execute(PG_SNAPSHOT).fetchone() == before, f"{stmt!r} changed the database or the server"
        assert victim.execute("SELECT 1").fetchone() == (1,), f"{stmt!r} ended another session"
        assert not list(watch.iterdir()), f"{stmt!r} wrote a file"
    reg.close()
    owner.close()
    victim.close()
    assert not wrong, f"{len(wrong)} of {len(battery)}:\n" + "\n".join(wrong[:20])


def test_postgres_legitimate_queries_work(pg_registry: tuple[str, Path]) -> None:
    with Registry(pg_registry[0]) as reg:
        assert not (wrong := _check_legit(reg, LEGIT_COMMON + LEGIT_PG)), "\n".join(wrong)


def test_postgres_drops_to_a_reader_role(pg_registry: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """With a role made by grant-read that the URL's role is a member of (a superuser is a member
    of every role), queries run as that role; the server then refuses what the allow-list would
    have let through. It is no replacement for the allow-list: set_config('role', …) switches
    back to the session's own role, which is why set_config is not on the list."""
    import psycopg

    url, _ = pg_registry
    pg_role(url, "tokreg_attack_reader")
    with Registry(url) as reg, psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as owner:
        try:
            _reader_role(reg, monkeypatch)
        finally:  # the other tests of this module run as the superuser again
            owner.execute("DROP OWNED BY tokreg_attack_reader")
            owner.commit()
        assert reg.sql("SELECT current_user")[1] == [("tokreg",)]


def _reader_role(reg: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    assert reg.sql("SELECT current_user, session_user")[1] == [("tokreg", "tokreg")]
    reg.grant_read("tokreg_attack_reader")
    assert reg.sql("SELECT current_user, session_user")[1] == [("tokreg_attack_reader", "tokreg")]
    assert reg.sql("SELECT count(*) FROM vocab")[1] == [(280,)]
    with pytest.raises(ReadOnlyError, match="set_config"):
        reg.sql("SELECT set_config('role', 'tokreg', true)")
    # Without the allow-list: the server refuses a file read to the reader role, but the
    # session can switch back to its superuser role and is then a superuser again.
    monkeypatch.setattr(readonly_sql, "_check_postgres", lambda q, scope: None)
    with pytest.raises(ReadOnlyError, match="permission denied"):
        reg.sql("SELECT pg_read_file('/etc/hostname')")
    switched = reg.sql("SELECT set_config('role', 'tokreg', true), current_setting('is_superuser')")[1]
    assert switched == [("tokreg", "on")]
    monkeypatch.undo()


def test_postgres_cli_says_once_that_the_role_can_do_more(pg_registry: tuple[str, Path]) -> None:
    from click.testing import CliRunner

    from tokreg.cli.app import cli

    env = {"TOKREG_DB": pg_registry[0]}
    res = CliRunner().invoke(cli, ["sql", "SELECT count(*) AS n FROM vocab"], env=env, catch_exceptions=False)
    assert res.exit_code == 0 and res.stdout.split() == ["N", "280"]
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "is a superuser" in lines[0] and "tokreg db grant-read" in lines[0], lines
    res = CliRunner().invoke(cli, ["sql", "SELECT * FROM ts_stat('SELECT 1')"], env=env, catch_exceptions=False)
    assert res.exit_code == 1 and res.stdout == "" and "Traceback" not in res.output
    assert res.stderr.splitlines() == [res.stderr.strip()] and "refused: the function ts_stat()" in res.stderr


def test_postgres_without_pglast_says_what_to_install(
    pg_registry: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pglast", None)  # import pglast now raises ImportError
    with Registry(pg_registry[0]) as reg, pytest.raises(TokregError) as e:
        reg.sql("SELECT 1")
    assert str(e.value).count("\n") == 0 and "pip install 'tokreg[postgresql]'" in str(e.value)


#: The allowed functions PostgreSQL marks volatile: they read the random source or the clock.
PG_VOLATILE_ALLOWED = {"random", "clock_timestamp", "gen_random_uuid"}


def test_postgres_allowed_functions_exist_and_only_compute(pg_registry: tuple[str, Path]) -> None:
    """Every name on the allow-list is a pg_catalog function of this server (no typo, no
    procedure), and every one PostgreSQL marks volatile (the mark for "may have side effects") is
    one of the few that only read the random source or the clock."""
    import psycopg

    from tokreg.store.sql_allow import PG_FUNCTIONS

    with psycopg.connect(pg_registry[0].replace("postgresql+psycopg://", "postgresql://")) as c:
        rows = c.execute(
            "SELECT proname, bool_or(provolatile = 'v'), bool_or(prokind = 'p') FROM pg_proc "
            "WHERE pronamespace = 'pg_catalog'::regnamespace AND proname = ANY(%s) GROUP BY proname",
            [sorted(PG_FUNCTIONS)],
        ).fetchall()
    assert {name for name, _, _ in rows} == PG_FUNCTIONS
    assert {name for name, volatile, _ in rows if volatile} == PG_VOLATILE_ALLOWED
    assert not [name for name, _, procedure in rows if procedure]


#: 30,000 levels of nesting: more than pglast's parse survives on an 8 MB stack (the process
#: crashed near 25,000 before parsing moved to a thread with a larger stack).
DEEP = "SELECT " + "1+" * 30_000 + "1"


def test_deep_or_huge_statements_are_one_line_errors(
    sqlite_registry: tuple[Path, Path], pg_registry: tuple[str, Path]
) -> None:
    huge = "SELECT 1" + " " * 100_000  # PostgreSQL: longer than pg_check.MAX_CHARS
    for url, stmts in ((str(sqlite_registry[0]), (DEEP,)), (pg_registry[0], (DEEP, huge))):
        with Registry(url) as reg:
            for stmt in (*stmts, "SELECT " + "lower(" * 5_000 + "'a'" + ")" * 5_000):
                with pytest.raises(TokregError) as e:
                    reg.sql(stmt)
                assert "\n" not in str(e.value), str(e.value)
            assert reg.sql("SELECT " + "1+" * 500 + "1")[1] == [(501,)]


def test_postgres_refuses_names_the_registry_schema_also_defines(pg_registry: tuple[str, Path]) -> None:
    """A function or operator in the registry's schema (an extension's, or one made by hand) can
    win PostgreSQL's overload resolution over pg_catalog's for some argument types, so a call of
    its name is refused while it exists."""
    import psycopg

    url = pg_registry[0]
    with (
        psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as owner,
        Registry(url) as reg,
    ):
        owner.execute(
            "CREATE FUNCTION public.lower(integer) RETURNS text LANGUAGE sql AS 'SELECT pg_reload_conf()::text'"
        )
        owner.execute("CREATE OPERATOR public.### (FUNCTION = public.lower, RIGHTARG = integer)")
        try:
            for stmt, name in (("SELECT lower(1)", "lower()"), ("SELECT upper('a') ### 1", "###")):
                with pytest.raises(ReadOnlyError, match=f"{re.escape(name)} is also defined in schema public"):
                    reg.sql(stmt)
            assert reg.sql("SELECT upper('a')")[1] == [("A",)]
        finally:
            owner.execute("DROP FUNCTION public.lower(integer) CASCADE")
        assert reg.sql("SELECT lower('A')")[1] == [("a",)]


def _free_pthread_keys() -> int:
    """How many more pthread keys this process could create (all created here are deleted)."""
    import ctypes

    libc = ctypes.CDLL(None)
    made, key = [], ctypes.c_uint()
    while libc.pthread_key_create(ctypes.byref(key), None) == 0:
        made.append(key.value)
    for k in made:
        libc.pthread_key_delete(k)
    return len(made)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts pthread keys through glibc")
def test_checking_many_statements_uses_no_pthread_key_per_statement() -> None:
    """libpg_query keeps per-thread state under a pthread key it never deletes: parsing each
    statement on a new thread used one of the process's 1,024 keys per `Registry.sql` on
    PostgreSQL, until a long-lived process (a serve, a test worker) could make no more."""
    pytest.importorskip("pglast")
    from tokreg.store import pg_check

    pg_check.parse("SELECT 1")  # the parse thread and its key, once
    before = _free_pthread_keys()
    for k in range(200):
        pg_check.parse(f"SELECT {k} FROM vocab WHERE tokenizer = 'a@1'")
    assert before - _free_pthread_keys() <= 1
