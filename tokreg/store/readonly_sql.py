"""Read-only SQL over the registry, for `tokreg sql` (and the `/sql` page of `tokreg serve`,
through `Registry.sql`): one statement, which may read tokreg's tables and views with the
functions of an allow-list (sql_allow.py) and nothing else, stopped by a time limit or Ctrl-C,
its rows streamed a batch at a time. docs/sql.md is the user's account of what is allowed.

On every database: a second statement after a `;` is refused before anything runs (sql_text.py
reads the text; the parser, the driver or the server refuses it again). The connection is thrown
away after each query, so nothing a statement sets can outlive it.

SQLite: the statement runs under an authorizer, which SQLite asks about every table read and
every function call before the statement runs: it allows reads of tokreg's tables and views (and
of `sqlite_schema`, the JSON table functions and the descriptive pragmas), the functions of
`SQLITE_FUNCTIONS`, and nothing else; the connection is also `query_only`. A progress handler
stops the statement when it has used `timeout` seconds of database time (the time spent printing
rows does not count) or at Ctrl-C, within about a millisecond; a single value is limited to
`MAX_VALUE_BYTES`.

PostgreSQL: the statement is parsed by PostgreSQL's own parser and checked node by node against
the allow-list (pg_check.py) before it is sent; it then runs with the extended protocol (one
statement, never more) in a READ ONLY transaction that is rolled back, with `statement_timeout`,
`lock_timeout` and `idle_in_transaction_session_timeout` set, and `search_path` set to pg_catalog
and the registry's schema. When the URL's role is a member of a role that can only read
tokreg's tables (made by `tokreg db grant-read`), the transaction switches to it
(`SET LOCAL ROLE`), so the server's privileges guard what the allow-list lets through.
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
from . import pg_check, sql_text
from .schema import Base
from .sql_allow import (
    PG_CATALOG_RELATIONS,
    SQLITE_CATALOG_TABLES,
    SQLITE_FUNCTIONS,
    SQLITE_PRAGMAS,
)

#: Seconds of database time a query may take, unless the caller says otherwise.
DEFAULT_TIMEOUT = 60.0
#: The largest single value (string or blob) a SQLite query may make.
MAX_VALUE_BYTES = 256 << 20
#: Rows fetched from the database at a time.
BATCH = 1000
#: tokreg's views (made by the migrations).
VIEWS = (
    "vocab",
    "merges_view",
    "evaluations_view",
    "audit_view",
    "datasets_view",
    "shards",
    "parity_view",
    "parity_merges_view",
)
#: Everything of tokreg's a statement may read: its tables and views.
RELATIONS: frozenset[str] = frozenset(Base.metadata.tables) | {"alembic_version"} | frozenset(VIEWS)

_HINT = pg_check.HINT


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


#: SQLite's names for what its authorizer is asked about, for refusals.
_ACTIONS = {
    getattr(sqlite3, f"SQLITE_{name}"): name.replace("_", " ")
    for name in (
        *("CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER"),
        *("CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE"),
        *("DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER"),
        *("DROP_VIEW", "INSERT", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE"),
        *("CREATE_VTABLE", "DROP_VTABLE", "TRANSACTION", "SAVEPOINT"),
    )
    if hasattr(sqlite3, f"SQLITE_{name}")
}
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
#: First words of SQLite statements that are queries (a refusal then names only what it used).
_SQLITE_QUERIES = {"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}
#: What a SQLite statement may read: tokreg's tables and views, and the catalog tables allowed.
SQLITE_TABLES: frozenset[str] = RELATIONS | SQLITE_CATALOG_TABLES


class _Authorizer:
    """SQLite's authorizer for one query: allows what sql_allow.py lists and remembers the first
    thing it refused, so that the error can name it (SQLite's own message does not)."""

    def __init__(self) -> None:
        self.refused: Optional[str] = None

    def __call__(self, action: int, arg1: Any, arg2: Any, db: Any, _inner: Any) -> int:
        if action in (sqlite3.SQLITE_SELECT, _RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            if str(arg2).lower() in SQLITE_FUNCTIONS:
                return sqlite3.SQLITE_OK
            return self._deny(f"the function {arg2}() is not on the allow-list of functions without side effects")
        if action == sqlite3.SQLITE_READ:
            # An empty column: a table (or CTE) named but none of its columns read, as in count(*).
            if arg2 == "" or (str(arg1).lower() in SQLITE_TABLES and db in (None, "main")):
                return sqlite3.SQLITE_OK
            where = f"{db}.{arg1}" if db not in (None, "main") else str(arg1)
            return self._deny(
                f"reading {where} (only tokreg's tables and views, sqlite_schema, json_each/json_tree and the "
                "descriptive pragmas may be read)"
            )
        if action == sqlite3.SQLITE_PRAGMA:
            if str(arg1).lower() in SQLITE_PRAGMAS:
                return sqlite3.SQLITE_OK
            return self._deny(f"PRAGMA {arg1} is not one of the pragmas that only describe the database")
        what = _ACTIONS.get(action, f"action {action}")
        return self._deny(f"{what}{f' {arg1}' if arg1 else ''} would change the registry or its settings")

    def _deny(self, why: str) -> int:
        if self.refused is None:
            self.refused = why
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


def _sqlite_error(e: Exception, query: str, guard: _Authorizer, clock: _Clock) -> BaseException:
    msg = (str(e).splitlines() or [type(e).__name__])[0]
    if isinstance(e, sqlite3.OperationalError) and msg == "interrupted":
        if clock.expired:
            return QueryTimeout(clock.limit or 0.0, "of database time ")
        return KeyboardInterrupt()
    if guard.refused is not None:
        word = sql_text.first_keyword(query, False)
        # SQLite names the first thing it was asked about (DROP TABLE: a DELETE from sqlite_schema).
        what = guard.refused if word in _SQLITE_QUERIES else f"{word or 'the statement'} ({guard.refused})"
        return ReadOnlyError(f"refused: {what}; {_HINT}")
    if "not authorized" in msg or "prohibited" in msg or "readonly" in msg:
        return ReadOnlyError(f"refused: {msg}; {_HINT}")
    if isinstance(e, sqlite3.Warning) or "one statement at a time" in msg:
        return InputError(f"SQL error: {msg}; give one statement")
    if isinstance(e, sqlite3.DataError) or "too big" in msg:
        return InputError(f"SQL error: {msg} (a single value may hold at most {MAX_VALUE_BYTES >> 20} MB)")
    return InputError(f"SQL error: {msg}")


def _warm_table_functions(dbapi: sqlite3.Connection) -> None:
    """Declares SQLite's table functions (json_each, json_tree, every pragma_*) in this connection
    before the authorizer is set, with EXPLAIN, which prepares a statement and never runs it.
    The first use of one makes SQLite declare it, which the authorizer would be asked about as an
    UPDATE of sqlite_schema (nothing is written): that is why `pragma_table_info(...)` used to be
    refused. Once declared, the authorizer sees a use as what it is: a read, and the pragma."""
    pragmas = [p for (p,) in dbapi.execute("PRAGMA pragma_list").fetchall()]
    for name in ["json_each", "json_tree", "jsonb_each", "jsonb_tree", *(f"pragma_{p}" for p in pragmas)]:
        with contextlib.suppress(sqlite3.Error):  # not a table function, or not in this SQLite
            dbapi.execute(f"EXPLAIN SELECT 1 FROM {name}").fetchall()


@contextlib.contextmanager
def _sqlite(engine: Engine, query: str, timeout: Optional[float]) -> Iterator[Rows]:
    raw = engine.raw_connection()
    dbapi: sqlite3.Connection = raw.driver_connection  # type: ignore[assignment]
    clock = _Clock(timeout)
    guard = _Authorizer()
    try:
        dbapi.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        # A second guard: SQLite refuses any write on this connection whatever the authorizer says.
        dbapi.execute("PRAGMA query_only = ON")
        _warm_table_functions(dbapi)
        dbapi.set_authorizer(guard)
        dbapi.set_progress_handler(clock, 1000)
        try:
            clock.start()
            cur = dbapi.execute(query)
            first = cur.fetchmany(BATCH)
            clock.stop()
        except (sqlite3.Error, sqlite3.Warning) as e:
            raise _sqlite_error(e, query, guard, clock) from None
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
                    raise _sqlite_error(e, query, guard, clock) from None

        yield Rows(columns, batches())
    finally:
        # This connection had an authorizer, a progress handler and a length limit: it is
        # closed rather than handed to the next user of the pool.
        raw.invalidate()


# -- PostgreSQL ------------------------------------------------------------------------------------


#: PostgreSQL's predefined roles that reach outside the database; a reader role must hold none.
_SERVER_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_read_all_settings",
    "pg_read_all_stats",
    "pg_monitor",
    "pg_checkpoint",
)
#: What a PostgreSQL query needs to know before it is checked and run, read in one round trip:
#: the registry's schema, the column names a statement may write as `x.name`, a role the session
#: may switch to that can read tokreg's relations and do nothing else (the first by name) or
#: NULL, and the names of the functions and operators defined in the registry's schema.
_PG_CONTEXT = r"""
SELECT current_schema()::text,
  ARRAY(SELECT DISTINCT a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE a.attnum > 0 AND NOT a.attisdropped
          AND ((n.nspname = current_schema() AND c.relname = ANY(%(rels)s))
               OR (n.nspname = 'information_schema' AND c.relname = ANY(%(cats)s)))),
  (SELECT r.rolname::text FROM pg_roles r
   WHERE r.rolname <> current_user AND r.rolname NOT LIKE 'pg\_%%'
     AND NOT (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls)
     AND pg_has_role(current_user, r.oid, 'MEMBER')
     AND has_schema_privilege(r.oid, current_schema(), 'USAGE')
     AND NOT has_schema_privilege(r.oid, current_schema(), 'CREATE')
     AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())::oid
                     AND c.relname = ANY(%(rels)s) AND NOT has_table_privilege(r.oid, c.oid, 'SELECT'))
     AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())::oid
                     AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                     AND (pg_has_role(r.oid, c.relowner, 'USAGE')
                          OR has_table_privilege(r.oid, c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')))
     AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())::oid
                     AND c.relkind = 'S' AND has_sequence_privilege(r.oid, c.oid, 'USAGE,UPDATE'))
     AND NOT EXISTS (SELECT 1 FROM pg_roles s WHERE s.rolname = ANY(%(server)s)
                     AND pg_has_role(r.oid, s.oid, 'MEMBER'))
   ORDER BY r.rolname LIMIT 1),
  ARRAY(SELECT proname::text FROM pg_proc WHERE pronamespace = to_regnamespace(current_schema())::oid
        UNION SELECT oprname::text FROM pg_operator WHERE oprnamespace = to_regnamespace(current_schema())::oid)
"""


def _check_postgres(query: str, scope: pg_check.Scope) -> None:
    """The allow-list check (pg_check.py); tests switch it off to see what the server refuses alone."""
    pg_check.check(query, scope)


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
    from psycopg import sql as pgsql  # (the same driver's SQL composition)

    pg_check.parse(query)  # a syntax error, or no pglast, is said before connecting
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
            context = setup.execute(
                _PG_CONTEXT,
                {
                    "rels": sorted(RELATIONS),
                    "cats": sorted(name for _, name in PG_CATALOG_RELATIONS),
                    "server": list(_SERVER_ROLES),
                },
            ).fetchone()
            assert context is not None
            schema, columns, reader, shadowed = context
            _check_postgres(query, pg_check.Scope.of(RELATIONS, columns, schema or "public", shadowed))
            # Names resolve in pg_catalog first (so a bare function name is the built-in one the
            # allow-list means), then in the registry's schema; temporary objects last.
            path = pgsql.SQL("SET LOCAL search_path = pg_catalog, {}, pg_temp")
            setup.execute(path.format(pgsql.Identifier(schema or "public")))
            if reader is not None:
                setup.execute(pgsql.SQL("SET LOCAL ROLE {}").format(pgsql.Identifier(reader)))
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
