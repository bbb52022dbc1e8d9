"""Read-only SQL over the registry, for `tokreg sql`.

SQLite: the statement runs under an authorizer that allows reading only (SELECT, reads of
tables and views, functions, recursive CTEs, and introspection pragmas); anything that would
write, ATTACH, or change a setting is refused by SQLite itself before it runs. PostgreSQL: the
statement runs in a READ ONLY transaction that is rolled back.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from ..errors import InputError, ReadOnlyError

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
_HINT = "tokreg sql is read-only; change the registry with tokreg's commands (train, import, tag, rm)"


def _authorizer(action: int, arg1: Any, arg2: Any, _db: Any, _trigger: Any) -> int:
    if action in _ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def run_query(engine: Engine, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of a read-only query."""
    if not query.strip():
        raise InputError('empty SQL statement; give a SELECT, e.g. "SELECT * FROM versions"')
    if engine.dialect.name == "sqlite":
        return _sqlite(engine, query)
    return _generic(engine, query)


def _sqlite(engine: Engine, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    raw = engine.raw_connection()
    try:
        dbapi: sqlite3.Connection = raw.driver_connection  # type: ignore[assignment]
        dbapi.set_authorizer(_authorizer)
        try:
            cur = dbapi.execute(query)
            rows = cur.fetchall()
            cols = [d[0] for d in cur.description or []]
        except sqlite3.DatabaseError as e:
            if "not authorized" in str(e):
                raise ReadOnlyError(
                    f"refused: {_first_word(query)} would change the registry or its settings; {_HINT}"
                ) from None
            raise InputError(f"SQL error: {e}") from None
        except sqlite3.Warning as e:  # e.g. more than one statement
            raise InputError(f"SQL error: {e}; give one statement") from None
        except sqlite3.ProgrammingError as e:
            raise InputError(f"SQL error: {e}") from None
        finally:
            dbapi.set_authorizer(None)
            dbapi.rollback()
        return cols, rows
    finally:
        raw.close()


def _generic(engine: Engine, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        conn.execute(text("SET TRANSACTION READ ONLY"))
        try:
            res = conn.exec_driver_sql(query)
            cols = list(res.keys()) if res.returns_rows else []
            rows = [tuple(r) for r in res] if res.returns_rows else []
        except DBAPIError as e:
            msg = str(e.orig).splitlines()[0]
            if "read-only" in msg or "read only" in msg:
                raise ReadOnlyError(f"refused: {_first_word(query)} would change the registry; {_HINT}") from None
            raise InputError(f"SQL error: {msg}") from None
        finally:
            conn.rollback()
        return cols, rows


def _first_word(query: str) -> str:
    words = query.strip().split()
    return words[0].upper() if words else "the statement"
