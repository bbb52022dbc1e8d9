"""Opening a registry for reading only (`tokreg serve`), and bounding one query's time and rows.

`open_read_only` never creates, migrates or writes: SQLite is opened through a `mode=ro` URI
with `query_only` on, so the file cannot be changed through this engine whatever runs on it;
PostgreSQL sessions start with `default_transaction_read_only`, so every transaction is READ
ONLY. A registry whose schema is not at this tokreg's head is refused with the command that
upgrades it, since upgrading is a write.

`query_limits` bounds the statements run inside it on this thread (the SQL page runs
`Registry.sql` inside it): SQLite gets a progress handler that interrupts a statement past its
deadline, and a cursor whose `fetchall` stops one row past the cap, so a runaway result is never
held in memory; PostgreSQL gets `SET LOCAL statement_timeout` in the query's transaction (its
driver receives a result whole, so the row cap there is applied after the fetch).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from ..errors import InputError, NotFoundError
from .migrate import HEAD, current

#: Statements between two looks at the clock (SQLite's progress handler).
_PROGRESS_STEPS = 20_000


@dataclass
class Limits:
    """The bounds of the statements run inside `query_limits`, and what happened to them."""

    seconds: float
    rows: int
    deadline: float = 0.0
    stopped: bool = False  # SQLite's progress handler stopped a statement at the deadline
    truncated: bool = False  # a result had more than `rows` rows; the first `rows` were kept

    @property
    def timed_out(self) -> bool:
        """Whether a statement ran into the deadline (an error raised past it is that, on
        PostgreSQL too, whose statement_timeout error is only a message)."""
        return self.stopped or time.monotonic() >= self.deadline


_active = threading.local()


def _limits() -> Optional[Limits]:
    return getattr(_active, "limits", None)


@contextmanager
def query_limits(seconds: float, rows: int) -> Iterator[Limits]:
    """Bounds the read-only engine's statements run on this thread inside the block."""
    lim = Limits(seconds=seconds, rows=rows, deadline=time.monotonic() + seconds)
    _active.limits = lim
    try:
        yield lim
    finally:
        _active.limits = None


class _LimitedCursor(sqlite3.Cursor):
    def fetchall(self) -> list[Any]:
        lim = _limits()
        if lim is None:
            return super().fetchall()
        rows = self.fetchmany(lim.rows + 1)
        if len(rows) > lim.rows:
            lim.truncated = True
            del rows[lim.rows :]
        return rows


class _LimitedConnection(sqlite3.Connection):
    # Every cursor this connection makes is a _LimitedCursor, which is a plain cursor outside
    # `query_limits`. `execute` is overridden too: sqlite3's own does not go through `cursor()`.
    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or _LimitedCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)


def _past_deadline() -> int:
    lim = _limits()
    if lim is not None and time.monotonic() > lim.deadline:
        lim.stopped = True
        return 1  # non-zero: SQLite interrupts the statement
    return 0


def _sqlite(path: str) -> Engine:
    if not Path(path).is_file():
        raise NotFoundError(
            f"no registry at {path}; give an existing one with --db PATH_OR_URL (serving never creates one)"
        )
    uri = "file:" + quote(str(Path(path).resolve())) + "?mode=ro"

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, factory=_LimitedConnection, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.set_progress_handler(_past_deadline, _PROGRESS_STEPS)
        return conn

    # The URL names the file (so SQLAlchemy pools it as a file, across threads); `creator` opens it.
    return create_engine("sqlite:///" + path, creator=connect)


def _postgresql(url: str) -> Engine:
    engine = create_engine(url, connect_args={"options": "-c default_transaction_read_only=on"})

    @event.listens_for(engine, "checkout")
    def _timeout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        lim = _limits()
        if lim is not None:
            # LOCAL: it ends with the query's transaction, which the read-only query path rolls back.
            cur = dbapi_conn.cursor()
            cur.execute(f"SET LOCAL statement_timeout = {max(1, int(lim.seconds * 1000))}")
            cur.close()

    return engine


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
