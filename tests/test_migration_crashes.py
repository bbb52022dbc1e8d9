"""Migrations never brick a registry: creating or upgrading the schema is one transaction, so a
process killed (SIGKILL) at ANY statement of ANY migration leaves the database exactly as it was
before (state A) or exactly as a completed run leaves it (state B), and both A and B open,
upgrade and verify with every hash kept. On a new registry and on one holding versions (the
registry written by tokreg 0.1.0, at revision 0003, whose upgrade backfills each version's
content), on SQLite and on PostgreSQL.

"Exactly" is checked with a fingerprint of every table's rows (and of the schema), taken by a
fresh process after each kill; opening and verifying is checked on A and on B."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from tokreg import BpeOptions, Registry
from tokreg.store import migrate

from .conftest import slow
from .procs import run_jobs

DATA = Path(__file__).parent / "data"

OPEN_AND_VERIFY = """
import json, tokreg
from tokreg.store import migrate
reg = tokreg.Registry({db!r}, create=True)
out = {{"revision": migrate.current(reg.engine), "versions": {{v.ref: v.content_hash for v in reg.versions()}},
       "problems": [p for r in reg.verify() for p in r.problems]}}
reg.close()
print(json.dumps(out))
"""

SQLITE_FINGERPRINT = """
import hashlib, json, os, sqlite3
db = {db!r}
h, objects = hashlib.sha256(), []
if os.path.exists(db):
    c = sqlite3.connect(db)
    objects = c.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    for kind, name, sql in objects:
        h.update(repr((kind, name, sql)).encode())
        if kind == "table":
            for row in sorted(map(repr, c.execute(f'SELECT * FROM "{{name}}"'))):
                h.update(row.encode())
    c.close()
print(json.dumps(h.hexdigest() if objects else "empty"))  # no file, or a file with nothing in it
"""

PG_FINGERPRINT = """
import hashlib, json, psycopg
h = hashlib.sha256()
with psycopg.connect({dsn!r}) as c:
    objs = c.execute(
        "SELECT table_type, table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1, 2"
    ).fetchall()
    for kind, name in objs:
        h.update(repr((kind, name)).encode())
        cols = c.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s "
                         "ORDER BY ordinal_position", (name,)).fetchall()
        h.update(repr(cols).encode())
        if kind == "BASE TABLE":
            q = f'SELECT md5(coalesce(string_agg(t::text, chr(10) ORDER BY t::text), \\'\\')) FROM "{{name}}" t'
            h.update(c.execute(q).fetchone()[0].encode())
print(json.dumps(h.hexdigest()))
"""


def sweep(db: str, job: str, reset: str, fingerprint: str, each: int = 1) -> tuple[int, list[dict[str, Any]]]:
    """Kills `job` at each statement of its write transactions (the migrations) in turn (at
    every `each`-th: 1, 1 + each, ...), after `reset`; returns the number of kills after
    checking that each left state A or state B, and that both open and verify."""
    check = OPEN_AND_VERIFY.format(db=db)
    results = run_jobs(
        [
            {"code": "pass", "reset": reset, "check": fingerprint, "each": 1, "hook": {"at": "statement"}},  # A
            {
                "code": job,
                "hook": {"at": "write", "sig": "KILL"},
                "each": each,
                "reset": reset,
                "check": fingerprint,
                "inline": True,
            },
            {"code": "pass", "check": check},  # B (the sweep's last run went to the end), opened and verified
            {"code": "pass", "reset": reset, "check": check, "each": 1, "hook": {"at": "statement"}},  # A, opened
        ]
    )
    state_a = json.loads(results[0]["runs"][0]["check"])
    runs: list[dict[str, Any]] = results[1]["runs"]
    finished = runs[-1]
    assert finished["status"] == 0 and not finished["fired"], finished
    state_b = json.loads(finished["check"])
    assert state_a != state_b
    for r in runs[:-1]:
        assert r["status"] == -9, r
        assert json.loads(r["check"]) in (state_a, state_b), f"a kill at statement {r['n']} left a third state"
    opened = [json.loads(results[2]["check"]), json.loads(results[3]["runs"][0]["check"])]
    for o in opened:
        assert o["revision"] == migrate.HEAD and o["problems"] == [], o
    assert opened[0]["versions"] == opened[1]["versions"]
    return len(runs) - 1, opened


def _sqlite_reset(db: Path, template: Path | None) -> str:
    copy = f"shutil.copyfile({str(template)!r}, {str(db)!r})" if template else "pass"
    return (
        f"import os, shutil\nfor s in ('', '-wal', '-shm'):\n    p = {str(db)!r} + s\n"
        f"    os.path.exists(p) and os.unlink(p)\n{copy}\n"
    )


@pytest.mark.parametrize("each", [3, slow(1)])  # the fast lane kills at every third statement
def test_kill_9_at_every_statement_creating_a_sqlite_registry(tmp_path: Path, each: int) -> None:
    db = tmp_path / "r.db"
    kills, _ = sweep(
        str(db),
        f"import tokreg; tokreg.Registry({str(db)!r}, create=True)",
        _sqlite_reset(db, None),
        SQLITE_FINGERPRINT.format(db=str(db)),
        each,
    )
    assert kills * each >= 25, kills  # every CREATE TABLE, INDEX and VIEW, and Alembic's own statements


@pytest.mark.slow
def test_kill_9_at_every_statement_upgrading_a_sqlite_registry_with_versions(tmp_path: Path) -> None:
    template = tmp_path / "registry-0.1.0.db"
    conn = sqlite3.connect(template)
    conn.executescript(gzip.decompress((DATA / "registry-0.1.0.sql.gz").read_bytes()).decode("utf-8"))
    conn.close()
    expected = json.loads((DATA / "registry-0.1.0.json").read_text(encoding="utf-8"))
    db = tmp_path / "r.db"
    kills, opened = sweep(
        str(db),
        f"import tokreg; tokreg.Registry({str(db)!r})",
        _sqlite_reset(db, template),
        SQLITE_FINGERPRINT.format(db=str(db)),
    )
    assert opened[0]["versions"] == {ref: v["hash"] for ref, v in expected["versions"].items()}
    assert kills > 2 * len(expected["versions"])  # the backfill reads every version's rows


def _pg_reset(admin: str, name: str, template: str | None) -> str:
    if template is None:  # a new registry: an empty schema is enough, and quicker than a new database
        dsn = _dsn(admin.replace("/postgres?", f"/{name}?"))
        return (
            f"import psycopg\nwith psycopg.connect({dsn!r}, autocommit=True) as c:\n"
            "    c.execute('DROP SCHEMA public CASCADE')\n    c.execute('CREATE SCHEMA public')\n"
        )
    dsn = admin.replace("postgresql+psycopg://", "postgresql://")
    create = f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else "")
    return (
        f"import psycopg\nwith psycopg.connect({dsn!r}, autocommit=True) as c:\n"
        f"    c.execute('DROP DATABASE IF EXISTS {name} WITH (FORCE)')\n    c.execute({create!r})\n"
    )


def _dsn(url: str) -> str:
    u = make_url(url)
    return f"host={u.query['host']} user={u.username} dbname={u.database}"


@pytest.mark.slow
def test_kill_9_at_every_statement_creating_a_postgres_registry(pg_db: str, pg_admin: str) -> None:
    kills, _ = sweep(
        pg_db,
        f"import tokreg; tokreg.Registry({pg_db!r}, create=True)",
        _pg_reset(pg_admin, str(make_url(pg_db).database), None),
        PG_FINGERPRINT.format(dsn=_dsn(pg_db)),
    )
    assert kills >= 25, kills


@pytest.mark.slow
def test_kill_9_at_every_statement_upgrading_a_postgres_registry_with_versions(
    pg_db: str, pg_admin: str, small_corpus: Path
) -> None:
    from alembic import command

    with Registry(pg_db) as reg:
        reg.train("a", [small_corpus], BpeOptions(vocab_size=300))
        reg.train("b", [small_corpus], BpeOptions(vocab_size=320, char_level=True))
        hashes = {v.ref: v.content_hash for v in reg.versions()}
        command.downgrade(migrate.config(reg.engine), "0003")
        assert migrate.current(reg.engine) == "0003"
    template = str(make_url(pg_db).database)
    work = pg_db.replace(f"/{template}?", f"/{template}_w?")
    kills, opened = sweep(
        work,
        f"import tokreg; tokreg.Registry({work!r})",
        _pg_reset(pg_admin, f"{template}_w", template),
        PG_FINGERPRINT.format(dsn=_dsn(work)),
    )
    assert opened[0]["versions"] == hashes and kills >= 6
