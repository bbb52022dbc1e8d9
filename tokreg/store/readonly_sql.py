"""Read-only SQL over the registry, for `tokreg sql`: one statement, which may read and nothing
else, stopped by a time limit or Ctrl-C, its rows streamed a batch at a time.

On every database: a second statement after a `;` is refused before anything runs (sql_text.py
reads the text; the driver or server refuses it again). The connection is thrown away after
each query, so nothing a statement sets can outlive it.

SQLite: the statement runs under an authorizer that allows reading only (SELECT, reads of
tables and views, functions, recursive CTEs, and introspection pragmas); anything that would
write, ATTACH, or change a setting is refused by SQLite itself before it runs. A progress
handler stops the statement when it has used `timeout` seconds of database time (the time spent
printing rows does not count) or at Ctrl-C, within about a millisecond; a single value is
limited to `MAX_VALUE_BYTES`.

PostgreSQL: only a query may be sent (SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN), with the
extended protocol, which runs one statement and nothing else; it runs in a READ ONLY transaction
that is rolled back, with `statement_timeout`, `lock_timeout` and
`idle_in_transaction_session_timeout` set for it, and calls of server administration functions
(files, other sessions, settings, large objects, advisory locks, …) are refused. The strongest
setup adds the database's own guarantee: connect `tokreg sql` as a role that has only SELECT on
tokreg's tables and views (`Registry.grant_read`, README "Read-only SQL").
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from collections.abc import Iterator
from typing import Any, Optional

from sqlalchemy import Connection, Engine, inspect, text

from ..errors import InputError, NotFoundError, ReadOnlyError
from . import sql_text
from .schema import Base

#: Seconds of database time a query may take, unless the caller says otherwise.
DEFAULT_TIMEOUT = 60.0
#: The largest single value (string or blob) a SQLite query may make.
MAX_VALUE_BYTES = 256 << 20
#: Rows fetched from the database at a time.
BATCH = 1000

_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_READ_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "database_list",
    "collation_list",
    "function_list",
    "compile_options",
}
#: What a PostgreSQL statement may start with: queries, whose writes a READ ONLY transaction refuses.
_PG_QUERIES = {"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN"}
#: PostgreSQL functions that act outside the query's own read-only transaction: files on the
#: server, other sessions, the server's settings, large objects, locks held past the statement,
#: statistics, replication, running SQL given as text. A role with SELECT only cannot use most of
#: them anyway; this list stops them when `tokreg sql` is given a more powerful role.
_PG_FORBIDDEN_PREFIXES = (
    "lo_",
    "pg_read_",
    "pg_ls_",
    "pg_stat_reset",
    "pg_file_",
    "pg_advisory_",
    "pg_try_advisory_",
    "pg_replication_",
    "pg_logical_",
    "pg_create_",
    "pg_drop_",
    "pg_backup_",
    "dblink",
    "query_to_xml",
    "cursor_to_xml",
)
_PG_FORBIDDEN = {
    "set_config",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_switch_wal",
    "pg_promote",
    "pg_stat_file",
    "pg_notify",
    "pg_log_backend_memory_contexts",
    "pg_import_system_collations",
    "pg_wal_replay_pause",
    "pg_wal_replay_resume",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "txid_current",
    "pg_current_xact_id",
    "nextval",
    "setval",
}
_HINT = "tokreg sql is read-only; change the registry with tokreg's commands (train, import, tag, rm)"


class Rows:
    """An open query: its column names (as the database gives them, duplicates kept) and its
    rows, one iterator over them, fetched `BATCH` at a time as it is read."""

    def __init__(self, columns: list[str], batches: Iterator[list[tuple[Any, ...]]]):
        self.columns = columns
        self._rows = (row for batch in batches for row in batch)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self

    def __next__(self) -> tuple[Any, ...]:
        return next(self._rows)


def _check_text(query: str, postgres: bool) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InputError('empty SQL statement; give a SELECT, e.g. "SELECT * FROM versions"')
    parts = sql_text.statements(query, postgres)
    if not parts:
        raise InputError('the SQL holds only comments; give a SELECT, e.g. "SELECT * FROM versions"')
    if len(parts) > 1:
        raise InputError(
            f"give one statement per call: found {len(parts)} (the second starts {parts[1][:30]!r}); nothing was run"
        )


@contextlib.contextmanager
def query_rows(engine: Engine, query: str, *, timeout: Optional[float] = DEFAULT_TIMEOUT) -> Iterator[Rows]:
    """Runs one read-only statement; yields its `Rows`. `timeout` (seconds, None for no limit)
    stops it with an InputError; Ctrl-C stops it at once (KeyboardInterrupt)."""
    if timeout is not None and not timeout > 0:
        raise InputError(f"the SQL time limit must be a positive number of seconds, not {timeout!r}")
    postgres = engine.dialect.name == "postgresql"
    _check_text(query, postgres)
    runner = _postgres if postgres else _sqlite
    with runner(engine, query, timeout) as rows:
        yield rows


# -- SQLite ----------------------------------------------------------------------------------------


def _authorizer(action: int, arg1: Any, arg2: Any, _db: Any, _trigger: Any) -> int:
    if action in _ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class QueryTimeout(InputError):
    """A query stopped by its time limit (`seconds`)."""

    def __init__(self, seconds: float, what: str = ""):
        super().__init__(
            f"the query was stopped after {seconds:g} s {what}(its time limit); narrow it (WHERE, LIMIT), or give a "
            "longer --timeout"
        )
        self.seconds = seconds


class _Clock:
    """Database time used by a SQLite query, counted only while SQLite works (between `start`
    and `stop`); as a progress handler it stops the query past the limit."""

    def __init__(self, limit: Optional[float]):
        self.limit = limit
        self.used = 0.0
        self.since: Optional[float] = None
        self.expired = False

    def start(self) -> None:
        self.since = time.monotonic()

    def stop(self) -> None:
        if self.since is not None:
            self.used += time.monotonic() - self.since
            self.since = None

    def __call__(self) -> int:
        # Ctrl-C raises KeyboardInterrupt in here (Python runs signal handlers between
        # bytecodes, and this is the Python code that runs while SQLite works); sqlite3 then
        # stops the query as "interrupted" and drops the exception, which the caller restores.
        if self.limit is not None and self.since is not None and self.used + time.monotonic() - self.since > self.limit:
            self.expired = True
            return 1
        return 0


def _sqlite_error(e: Exception, query: str, clock: _Clock) -> BaseException:
    msg = str(e)
    if isinstance(e, sqlite3.OperationalError) and msg == "interrupted":
        if clock.expired:
            return QueryTimeout(clock.limit or 0.0, "of database time ")
        return KeyboardInterrupt()
    if "not authorized" in msg:
        return ReadOnlyError(
            f"refused: {sql_text.first_keyword(query, False) or 'the statement'} would change the registry or its "
            f"settings; {_HINT}"
        )
    if isinstance(e, sqlite3.Warning) or "one statement at a time" in msg:
        return InputError(f"SQL error: {msg}; give one statement")
    if isinstance(e, sqlite3.DataError) or "too big" in msg:
        return InputError(f"SQL error: {msg} (a single value may hold at most {MAX_VALUE_BYTES >> 20} MB)")
    return InputError(f"SQL error: {msg}")


@contextlib.contextmanager
def _sqlite(engine: Engine, query: str, timeout: Optional[float]) -> Iterator[Rows]:
    raw = engine.raw_connection()
    dbapi: sqlite3.Connection = raw.driver_connection  # type: ignore[assignment]
    clock = _Clock(timeout)
    try:
        dbapi.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        dbapi.set_authorizer(_authorizer)
        dbapi.set_progress_handler(clock, 1000)
        try:
            clock.start()
            cur = dbapi.execute(query)
            first = cur.fetchmany(BATCH)
            clock.stop()
        except (sqlite3.Error, sqlite3.Warning) as e:
            raise _sqlite_error(e, query, clock) from None
        columns = [d[0] for d in cur.description or []]

        def batches() -> Iterator[list[tuple[Any, ...]]]:
            batch = first
            while batch:
                yield batch
                try:
                    clock.start()
                    batch = cur.fetchmany(BATCH)
                    clock.stop()
                except (sqlite3.Error, sqlite3.Warning) as e:
                    raise _sqlite_error(e, query, clock) from None

        yield Rows(columns, batches())
    finally:
        # This connection had an authorizer, a progress handler and a length limit: it is
        # closed rather than handed to the next user of the pool.
        raw.invalidate()


# -- PostgreSQL ------------------------------------------------------------------------------------


def _check_postgres(query: str) -> None:
    word = sql_text.first_keyword(query)
    if word not in _PG_QUERIES:
        shown = word or "a statement that does not start with a keyword"
        raise ReadOnlyError(
            f"refused: {shown} is not a query; tokreg sql runs one SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN. "
            f"{_HINT}"
        )
    if sql_text.has_escaped_names(query):
        raise ReadOnlyError('refused: names spelled U&"..." cannot be checked; write them plainly')
    bad = sorted(
        f for f in sql_text.called_functions(query) if f in _PG_FORBIDDEN or f.startswith(_PG_FORBIDDEN_PREFIXES)
    )
    if bad:
        raise ReadOnlyError(
            f"refused: {bad[0]}() acts outside a read-only query (on the server, its files or other sessions); {_HINT}"
        )


def _pg_error(e: Exception, timeout: Optional[float]) -> BaseException:
    import psycopg  # the PostgreSQL driver, present whenever a PostgreSQL registry is open

    msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
    state = getattr(e, "sqlstate", None)
    if isinstance(e, psycopg.errors.QueryCanceled) and state == "57014":
        if "statement timeout" in msg and timeout is not None:
            return QueryTimeout(timeout)
        return KeyboardInterrupt()
    if isinstance(e, psycopg.errors.LockNotAvailable):
        return InputError(f"the query waited too long for a lock another session holds ({msg}); try again later")
    if state in ("25006", "42501") or "read-only" in msg or "read only" in msg:
        return ReadOnlyError(f"refused: {msg}; {_HINT}")
    if state == "42601" and "multiple commands" in msg:
        return InputError("give one statement per call; nothing was run")
    return InputError(f"SQL error: {msg}")


@contextlib.contextmanager
def _postgres(engine: Engine, query: str, timeout: Optional[float]) -> Iterator[Rows]:
    import psycopg  # the PostgreSQL driver, present whenever a PostgreSQL registry is open

    _check_postgres(query)
    raw = engine.raw_connection()
    conn: psycopg.Connection[Any] = raw.driver_connection  # type: ignore[assignment]
    ms = 0 if timeout is None else max(1, int(timeout * 1000))
    try:
        conn.rollback()
        conn.autocommit = True
        with conn.cursor() as setup:
            setup.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            # The server then reads quotes exactly as sql_text does, whatever the database's default.
            setup.execute("SET LOCAL standard_conforming_strings = on")
            setup.execute(f"SET LOCAL statement_timeout = {ms}")
            # A lock another session holds (a migration's) is waited for briefly, and less long
            # than the statement's own limit, so the message names the real cause.
            setup.execute(f"SET LOCAL lock_timeout = {min(ms * 4 // 5, 10_000) if ms else 10_000}")
            setup.execute(f"SET LOCAL idle_in_transaction_session_timeout = {max(ms, 60_000) if ms else 0}")
        cur = conn.cursor()
        # stream() sends the statement with the extended protocol (one statement, never more)
        # and fetches rows one at a time, so memory stays bounded whatever the result's size.
        stream = cur.stream(query)
        try:
            first = next(stream, None)
        except psycopg.Error as e:
            raise _pg_error(e, timeout) from None
        columns = [d.name for d in cur.description or []]

        def batches() -> Iterator[list[tuple[Any, ...]]]:
            if first is None:
                return
            batch: list[tuple[Any, ...]] = [tuple(first)]
            try:
                for row in stream:
                    batch.append(tuple(row))
                    if len(batch) >= BATCH:
                        yield batch
                        batch = []
            except psycopg.Error as e:
                raise _pg_error(e, timeout) from None
            if batch:
                yield batch

        yield Rows(columns, batches())
    finally:
        # Never hand this session to anyone else: whatever the statement set dies with it.
        raw.invalidate()


# -- a role for reading ------------------------------------------------------------------------------

_ROLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$-]{0,62}$")
VIEWS = ("vocab", "merges_view")


def grant_read(conn: Connection, role: str) -> list[str]:
    """PostgreSQL: grants `role` (which must exist) SELECT on tokreg's tables and views, and
    USAGE on their schema, nothing else; returns what was granted. Run again after an upgrade
    that adds tables."""
    if conn.dialect.name != "postgresql":
        raise InputError(
            "read-only roles are a PostgreSQL feature; a SQLite registry is protected by its file permissions"
        )
    if not _ROLE.match(role):
        raise InputError(f"role name {role!r} is not a plain PostgreSQL name")
    if not conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).scalar():
        raise NotFoundError(
            f"there is no PostgreSQL role {role!r}; create it first, e.g. CREATE ROLE {role} LOGIN PASSWORD '…'"
        )
    quote = conn.dialect.identifier_preparer.quote
    insp = inspect(conn)
    names = sorted((set(Base.metadata.tables) | {"alembic_version"}) & set(insp.get_table_names()))
    names += [v for v in VIEWS if v in insp.get_view_names()]
    schema = conn.execute(text("SELECT current_schema()")).scalar()
    conn.execute(text(f"GRANT USAGE ON SCHEMA {quote(str(schema))} TO {quote(role)}"))
    for name in names:
        conn.execute(text(f"GRANT SELECT ON {quote(name)} TO {quote(role)}"))
    return names
