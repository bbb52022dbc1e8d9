"""What is at a registry's location, found without creating anything: a registry (and its schema
revision), nothing yet (no file, an empty file or database), or something that is not a
registry (not a SQLite file, another program's tables), which is an InputError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from ..errors import InputError, NotFoundError
from .engine import Location, error_line

#: The tables a registry has, whatever its revision (the others came later).
_CORE_TABLES = {"versions", "tokens", "merges", "training_runs"}


@dataclass(frozen=True)
class Found:
    """What `probe` found: `revision` is the schema revision of a registry, None when there is
    no registry yet (`missing`: no file or an empty database)."""

    exists: bool
    revision: Optional[str]


def _check_sqlite_file(loc: Location) -> bool:
    """Whether the SQLite file exists with content; raises InputError for a path that cannot
    hold one (a folder, a file where a folder should be).

    The file itself is never opened here, only looked at: closing any descriptor of a database
    file drops every POSIX lock this process holds on it, including those of SQLite connections
    open elsewhere in the process (another Registry), and a process whose locks vanished lets
    another one reset the write-ahead log under it: lost commits, a "malformed" database. SQLite
    opens the file (and says when it is not a database)."""
    assert loc.path is not None
    p = loc.path
    if p.is_dir():
        raise InputError(f"registry location {p} is a folder; give a file path such as {p / 'registry.db'}")
    if not p.exists():
        if p.parent.exists() and not p.parent.is_dir():
            raise InputError(f"registry location {p}: {p.parent} is a file, not a folder")
        return False
    return p.stat().st_size > 0  # an empty file is an empty database: nothing there yet


#: SQLite's SQLITE_NOTADB: the file is not a database.
_NOT_A_DATABASE = 26


def probe(engine: Engine, loc: Location) -> Found:
    """What is at `loc`: a registry (and its revision), or nothing yet. Never creates anything;
    raises InputError for a location that holds something else or cannot be reached."""
    if loc.path is not None and not _check_sqlite_file(loc):
        return Found(exists=False, revision=None)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            revision = None
            if "alembic_version" in tables:
                rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
                revision = rows[0] if len(rows) == 1 else None
    except DBAPIError as e:
        if getattr(e.orig, "sqlite_errorcode", None) == _NOT_A_DATABASE:
            raise InputError(
                f"{loc.path} is not a SQLite database; give the path of a tokreg registry, or a new path to create "
                "one there"
            ) from None
        raise InputError(f"cannot open the registry at {loc.shown}: {error_line(e)}") from None
    if not tables and revision is None:
        return Found(exists=False, revision=None)
    if revision is None or not tables >= _CORE_TABLES:
        if loc.path is not None:
            shown = ", ".join(sorted(tables)[:6]) + (", …" if len(tables) > 6 else "")
            raise InputError(
                f"{loc.path} is a SQLite database of another program (tables: {shown}), not a tokreg registry; "
                "give another path"
            )
        clash = sorted(tables & (_CORE_TABLES | {"alembic_version"}))
        if clash:
            raise InputError(
                f"the database at {loc.shown} has tables named like tokreg's ({', '.join(clash)}) that are not a "
                "tokreg registry; use another database (or schema) for the registry"
            )
        return Found(exists=False, revision=None)
    return Found(exists=True, revision=revision)


def no_registry(loc: Location) -> NotFoundError:
    """The error for a read where no registry is."""
    return NotFoundError(
        f"there is no registry at {loc.shown}; create one by training or importing a tokenizer "
        "(`tokreg train NAME FILE... --vocab-size N`, `tokreg import ...`), or point --db / TOKREG_DB at one"
    )
