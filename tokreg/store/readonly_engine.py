"""Opening a registry for reading only (`tokreg serve`).

`open_read_only` never creates, migrates or writes: SQLite is opened through a `mode=ro` URI
with `query_only` on, so the file cannot be changed through this engine whatever runs on it;
PostgreSQL sessions start with `default_transaction_read_only`, so every transaction is READ
ONLY. A registry whose schema is not at this tokreg's head is refused with the command that
upgrades it, since upgrading is a write.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from ..errors import InputError, NotFoundError
from .migrate import HEAD, current


def _sqlite(path: str) -> Engine:
    if not Path(path).is_file():
        raise NotFoundError(
            f"no registry at {path}; give an existing one with --db PATH_OR_URL (serving never creates one)"
        )
    uri = "file:" + quote(str(Path(path).resolve())) + "?mode=ro"

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        return conn

    # The URL names the file (so SQLAlchemy pools it as a file, across threads); `creator` opens it.
    return create_engine("sqlite:///" + path, creator=connect)


def _postgresql(url: str) -> Engine:
    return create_engine(url, connect_args={"options": "-c default_transaction_read_only=on"})


def open_read_only(url: str) -> Engine:
    """An engine on the registry at `url` that cannot write; refuses a registry that is missing,
    is not a tokreg registry, or needs a schema upgrade."""
    try:
        parsed = make_url(url)
    except ArgumentError as e:
        raise InputError(f"registry location {url!r} is not a path or a database URL: {e}") from None
    shown = parsed.render_as_string(hide_password=True)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise InputError("an in-memory SQLite database has no registry to read; give --db PATH")
        engine = _sqlite(parsed.database)
    elif backend == "postgresql":
        try:
            engine = _postgresql(url)
        except Exception as e:  # a missing driver, a bad option...
            raise InputError(f"cannot open the registry at {shown}: {e}") from None
    else:
        raise InputError(
            f"cannot open {shown} read-only: tokreg opens SQLite and PostgreSQL registries read-only, not {backend}"
        )
    try:
        revision = current(engine)
    except DBAPIError as e:
        engine.dispose()
        raise InputError(f"cannot read the registry at {shown}: {str(e.orig).splitlines()[0]}") from None
    if revision != HEAD:
        engine.dispose()
        if revision is None:
            raise InputError(f"{shown} is not a tokreg registry (no schema revision found)")
        if revision.isdigit() and HEAD.isdigit() and int(revision) > int(HEAD):
            raise InputError(
                f"the registry at {shown} has schema revision {revision}, newer than this tokreg's; upgrade tokreg"
            )
        raise InputError(
            f"the registry at {shown} has schema revision {revision}, this tokreg reads {HEAD}; run "
            f"`tokreg db upgrade --db {shown}` first (read-only, tokreg never upgrades it)"
        )
    return engine
