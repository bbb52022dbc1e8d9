"""The lean read behind `tokreg.load(NAME@N, db=FILE)`: one version's row from a SQLite registry
through the standard library's sqlite3, for a process that only wants an encoder.

Opening a registry through `Registry` costs a fresh process about 0.2 s of imports (SQLAlchemy)
before anything is read; this reads the two rows it needs (the schema revision and the version)
on a read-only connection instead. It answers only what it can answer exactly as the registry
would, and says None for everything else, which then goes the usual way (`Registry.load`):
a ref other than `name@N` or a bare unpinned name, a location that is not an existing SQLite
file, a schema other than the newest (the registry would upgrade it first), a database error of
any kind (the registry names it properly), or content not in the on-disk cache (the registry
reads it and fills the cache). What it returns is checked as `Registry.load` checks it: the
cached content against the row's hash, the row's algorithm and config against the hashed ones.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, NamedTuple, Optional
from urllib.parse import quote

from .names import NAME_RE
from .revisions import HEAD


class Row(NamedTuple):
    """What `Registry.load` needs of a version's row."""

    ref: str
    algorithm: str
    config: dict[str, Any]
    content_hash: str


def file_of(db: str) -> Optional[str]:
    """The SQLite file `db` names when it is a plain path to an existing regular file."""
    if "://" in db or ":" in db.split(os.sep, 1)[0] or not db.strip():
        return None
    path = os.path.realpath(os.path.expanduser(db))
    return path if os.path.isfile(path) else None


def version_row(db: str, ref: str) -> Optional[Row]:
    """The row of `ref` (`name@N`, or a bare name meaning its latest version) in the SQLite
    registry file `db`, read-only, or None when this lean read cannot answer exactly."""
    name, at, number = ref.strip().partition("@")
    if not NAME_RE.match(name) or (at and not (number.isdigit() and number.isascii())):
        return None
    path = file_of(db)
    if path is None:
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        revisions = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        if revisions != [(HEAD,)]:
            return None
        cols = "name, number, algorithm, config, content_hash FROM versions WHERE name = ?"
        if at:
            found = conn.execute(f"SELECT {cols} AND number = ?", (name, int(number))).fetchone()
        else:
            found = conn.execute(f"SELECT {cols} ORDER BY number DESC LIMIT 1", (name,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if found is None:
        return None  # the registry says what exists
    row_name, row_number, algorithm, config, content_hash = found
    try:
        parsed = json.loads(config)
    except (TypeError, ValueError):
        return None
    if not isinstance(parsed, dict) or not isinstance(algorithm, str) or not isinstance(content_hash, str):
        return None
    return Row(f"{row_name}@{row_number}", algorithm, parsed, content_hash)
