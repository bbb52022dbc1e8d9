"""Where the registry lives and how it is opened.

The location is `--db` / `TOKREG_DB` (a path or a SQLAlchemy URL), else
`$XDG_DATA_HOME/tokreg/registry.db`, else `~/.local/share/tokreg/registry.db`. tokreg keeps
registries in SQLite (a path, or `sqlite:///PATH`) or PostgreSQL (`postgresql://…`); anything
else is refused in one line before a file is touched or a server is reached. What is at a
location is probe.py's question; whether it can be written, writable.py's.

SQLite registries run in WAL mode (set when tokreg creates or upgrades one) with foreign keys,
and tokreg emits BEGIN itself instead of leaving it to the sqlite3 driver, whose legacy mode
runs DDL outside any transaction: readers get `BEGIN` (one consistent snapshot per connection),
writers `BEGIN IMMEDIATE`, which takes the write lock before the first read, so a writer's
reads (the next version number) can never go stale under another writer. A writer waits up to
`BUSY_SECONDS` for another's transaction.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import NullPool

from ..errors import InputError, ReadOnlyError
from .sqlite_files import BUSY_SECONDS, default_path, read_only_media

#: Looks like a URL scheme ("postgres:", "::x"), but without the "//" of a URL: neither a path nor a URL.
_SCHEME_LIKE = re.compile(r"^(:|[A-Za-z][A-Za-z0-9+.\-]+:)")
_BACKENDS = ("sqlite", "postgresql")


@dataclass(frozen=True)
class Location:
    """A registry's location: its SQLAlchemy URL and, for SQLite, its file."""

    url: str
    path: Optional[Path]

    @property
    def shown(self) -> str:
        """What messages name: the file, or the URL with any password hidden."""
        return str(self.path) if self.path is not None else make_url(self.url).render_as_string(hide_password=True)


def locate(db: str | os.PathLike[str] | None = None) -> Location:
    """The location named by `db`, `TOKREG_DB` or the default. A string that is neither a path
    nor a URL of a supported database is an InputError; nothing is touched."""
    where = os.fspath(db) if db is not None else os.environ.get("TOKREG_DB") or str(default_path())
    if not where.strip():
        raise InputError("the registry location is empty; give a file path or a database URL (--db / TOKREG_DB)")
    if "://" not in where:
        if _SCHEME_LIKE.match(where) and not re.match(r"^[A-Za-z]:[\\/]", where):  # not a Windows drive
            raise InputError(
                f"registry location {where!r} is neither a path nor a database URL (a URL looks like "
                "postgresql://USER@HOST/DB); for a file whose name has a ':' write ./NAME"
            )
        path = Path(where).expanduser().resolve()
        return Location(url=URL.create("sqlite", database=str(path)).render_as_string(), path=path)
    try:
        url = make_url(where)
    except (ArgumentError, ValueError):  # ValueError: e.g. a port that is not a number
        raise InputError(
            f"registry location {where!r} is not a valid database URL; write e.g. postgresql://USER@HOST/DB"
        ) from None
    backend = url.get_backend_name()
    if backend not in _BACKENDS:
        raise InputError(
            f"tokreg keeps registries in SQLite or PostgreSQL, not {backend!r} ({url.render_as_string()}); "
            "give a file path or a postgresql:// URL"
        )
    if backend == "sqlite":
        if not url.database or url.database == ":memory:" or url.query.get("mode") == "memory":
            raise InputError(
                f"{where!r} is an in-memory SQLite database, which ends with the process; give a file path"
            )
        path = Path(url.database).expanduser().resolve()
        return Location(url=url.set(database=str(path)).render_as_string(hide_password=False), path=path)
    return Location(url=url.render_as_string(hide_password=False), path=None)


# -- engines -------------------------------------------------------------------------------------


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # tokreg emits BEGIN itself (see _sqlite_begin)
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")  # first: the next pragma may wait for a lock
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def use_wal(engine: Engine) -> None:
    """Puts a SQLite registry in WAL mode (readers never wait for a writer; it stays set in the
    file). Done when tokreg creates or upgrades a registry, never on merely opening a file, which
    could be another program's database."""
    if engine.dialect.name != "sqlite":
        return
    raw = engine.raw_connection()
    try:
        cur = raw.driver_connection.cursor()  # type: ignore[union-attr]
        if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            cur.execute("PRAGMA journal_mode=WAL")
        cur.close()
    finally:
        raw.close()


def _sqlite_connect_immutable(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None
    dbapi_conn.execute("PRAGMA foreign_keys=ON")


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("tokreg_write") else "BEGIN")


def unwritable_by_anyone(path: Path) -> bool:
    """Whether nobody at all can write the SQLite file at `path`: it is on read-only media, or
    root itself cannot write it (`chattr +i`). Then it can be read as immutable: no lock files,
    no -wal or -shm left beside it, and no writer whose changes such a reader could miss."""
    if not path.is_file():
        return False
    wal = Path(str(path) + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return False  # a log a writer left: only a normal open reads it
    if read_only_media(path):
        return True
    return hasattr(os, "geteuid") and os.geteuid() == 0 and not os.access(path, os.W_OK)


def create(loc: Location, *, pool: bool = True) -> Engine:
    """An engine for `loc` (nothing is connected or created yet). A SQLite file nobody can write
    is opened immutable (see `unwritable_by_anyone`)."""
    url = loc.url
    immutable = loc.path is not None and unwritable_by_anyone(loc.path)
    if immutable:
        url = f"sqlite:///file:{loc.path}?mode=ro&immutable=1&uri=true"
    kwargs: dict[str, Any] = {} if pool else {"poolclass": NullPool}
    try:
        engine = create_engine(url, **kwargs)
    except (NoSuchModuleError, ModuleNotFoundError, ImportError) as e:
        raise InputError(
            f"cannot use {loc.shown}: its database driver is missing ({e}); for PostgreSQL, "
            "pip install 'psycopg[binary]'"
        ) from None
    except ArgumentError as e:
        raise InputError(f"cannot use {loc.shown}: {e}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_connect_immutable if immutable else _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def fresh(engine: Engine) -> Engine:
    """A new engine to the same database with no pool, for asking what happened after an
    interruption that may have left `engine`'s pool half-way through returning a connection."""
    clone = create_engine(engine.url, poolclass=NullPool)
    if clone.dialect.name == "sqlite":
        event.listen(clone, "connect", _sqlite_connect)
        event.listen(clone, "begin", _sqlite_begin)
    return clone


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection in a write transaction (SQLite: BEGIN IMMEDIATE), committed on success."""
    with engine.connect().execution_options(tokreg_write=True) as conn, conn.begin():
        yield conn


def error_line(e: BaseException) -> str:
    """The database's own message, first line only (drivers add SQL and links below it)."""
    orig = getattr(e, "orig", None) or e
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__


#: SQLite's SQLITE_READONLY and PostgreSQL's insufficient_privilege / read_only_sql_transaction.
_READ_ONLY_CODES = {8}
_READ_ONLY_STATES = {"42501", "25006"}


def _is_read_only(e: DBAPIError) -> bool:
    orig = e.orig
    code = getattr(orig, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF in _READ_ONLY_CODES) or getattr(
        orig, "sqlstate", None
    ) in _READ_ONLY_STATES


@contextlib.contextmanager
def database_errors(loc: Location) -> Iterator[None]:
    """Turns a database failure into one line naming the registry (ReadOnlyError when it
    refuses writes), for errors the checks before a command could not foresee."""
    try:
        yield
    except DBAPIError as e:
        if _is_read_only(e):
            raise ReadOnlyError(f"the registry at {loc.shown} cannot be written: {error_line(e)}") from None
        raise InputError(f"the registry at {loc.shown} failed: {error_line(e)}") from None
