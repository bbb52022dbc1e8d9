"""Alembic, driven from code: the migrations ship inside the package (`tokreg.migrations`),
so an installed tokreg can create and upgrade a registry with no alembic.ini around.

Creating or upgrading is all-or-nothing: every migration from the registry's revision to the
head runs in ONE transaction (DDL included: PostgreSQL's DDL is transactional, and on SQLite
tokreg emits BEGIN itself, see engine.py, so the driver never runs DDL outside it), under the
database's write lock (SQLite `BEGIN IMMEDIATE`) or an advisory lock (PostgreSQL). So a crash
at any statement leaves the registry at its old revision, as if nothing had run, and processes
that open a new registry at the same moment take turns: the first creates it, the others find
it made.

Opening a registry that is already at the newest revision (the usual case) reads the
`alembic_version` row with plain SQL and compares it with `HEAD`; Alembic itself is imported
only when there is something to upgrade. That keeps ~12 MB and ~80 ms of imports out of every
`tokreg` command and every process that loads a tokenizer. A test checks that `HEAD` is the
head of the shipped migration scripts.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from sqlalchemy import Connection, Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

from .revisions import HEAD, KNOWN

__all__ = ["HEAD", "KNOWN", "LOCK_KEY", "config", "current", "head", "lock", "revision_of", "upgrade"]
#: PostgreSQL advisory lock key held while migrating (any constant; this one spells "tokreg").
LOCK_KEY = 0x746F6B726567


def config(engine: Engine | None = None) -> Config:
    from alembic.config import Config  # Alembic only when there is a migration to run (see above)

    migrations = importlib.import_module("tokreg.migrations")  # shipped inside the package
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(str(migrations.__file__)).parent))
    cfg.attributes["engine"] = engine
    return cfg


def head() -> str | None:
    """The head revision of the shipped migration scripts, as Alembic sees it."""
    from alembic.script import ScriptDirectory  # deferred: see above

    return ScriptDirectory.from_config(config()).get_current_head()


def revision_of(conn: Connection) -> str | None:
    """The schema revision seen on `conn`, or None for a database without one."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return rows[0] if len(rows) == 1 else None


def current(engine: Engine) -> str | None:
    """The registry's schema revision, or None for an empty database."""
    with engine.connect() as conn:
        return revision_of(conn)


def lock(conn: Connection) -> None:
    """Takes the migration lock for the rest of `conn`'s transaction. On SQLite the transaction
    already holds the write lock (BEGIN IMMEDIATE); PostgreSQL takes an advisory lock."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": LOCK_KEY})


def upgrade(engine: Engine, revision: str = "head") -> Optional[str]:
    """Brings the schema to `revision`; does nothing (cheaply, without Alembic) when it is
    already at the head. Returns the revision it started from as seen under the lock (None: this
    call created the registry), or HEAD when there was nothing to do."""
    if revision == "head" and current(engine) == HEAD:
        return HEAD
    from alembic import command  # deferred: see above

    cfg = config(engine)
    command.upgrade(cfg, revision)
    start: Optional[str] = cfg.attributes.get("started_from")
    return start
