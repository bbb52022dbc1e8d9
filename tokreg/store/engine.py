"""Where the registry lives and how it is opened.

The location is `--db` / `TOKREG_DB` (a path or any SQLAlchemy URL), else
`$XDG_DATA_HOME/tokreg/registry.db`, else `~/.local/share/tokreg/registry.db`. Opening brings
the schema to the newest migration; SQLite gets WAL mode and foreign keys.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from ..errors import InputError
from .migrate import upgrade


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tokreg" / "registry.db"


def resolve_url(db: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL of the registry named by `db`, `TOKREG_DB` or the default."""
    where = str(db) if db is not None else os.environ.get("TOKREG_DB") or str(default_path())
    if "://" in where:
        return where
    return "sqlite:///" + str(Path(where).expanduser().resolve())


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.close()


def create(url: str) -> Engine:
    """An engine for `url`, with the SQLite settings applied; creates the file's folder."""
    try:
        parsed = make_url(url)
    except ArgumentError as e:
        raise InputError(f"registry location {url!r} is not a path or a database URL: {e}") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        folder = Path(parsed.database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the registry folder {folder}: {e.strerror}") from None
    try:
        engine = create_engine(url)
    except Exception as e:  # a missing driver, a bad option...
        raise InputError(f"cannot open the registry at {url}: {e}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def open_registry(db: str | os.PathLike[str] | None = None) -> Engine:
    """Opens (and creates or upgrades) the registry; returns its engine."""
    url = resolve_url(db)
    engine = create(url)
    try:
        upgrade(engine)
    except OperationalError as e:
        raise InputError(f"cannot open the registry at {url}: {e.orig}") from None
    return engine


def has_table(engine: Engine, name: str) -> bool:
    return inspect(engine).has_table(name)


def ping(engine: Engine) -> None:
    with engine.connect() as c:
        c.execute(text("SELECT 1"))
