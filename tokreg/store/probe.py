"""What is at a registry's location, found without creating anything: a registry (and its schema
revision), nothing yet (no file, an empty file or database), or something that is not a
registry (not a SQLite file, another program's tables), which is an InputError. And the tidying
after reading a registry this process cannot write, whose -wal and -shm files SQLite makes even
to read.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from ..errors import InputError, NotFoundError
from .engine import Location, error_line

#: The first bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The tables a registry has, whatever its revision (the others came later).
_CORE_TABLES = {"versions", "tokens", "merges", "training_runs"}


@dataclass(frozen=True)
class Found:
    """What `probe` found: `revision` is the schema revision of a registry, None when there is
    no registry yet (`missing`: no file or an empty database)."""

    exists: bool
    revision: Optional[str]


def _check_sqlite_file(loc: Location) -> bool:
    """Whether the SQLite file exists with content; raises InputError when the path is not a
    SQLite database at all."""
    assert loc.path is not None
    p = loc.path
    if p.is_dir():
        raise InputError(f"registry location {p} is a folder; give a file path such as {p / 'registry.db'}")
    if not p.exists():
        if p.parent.exists() and not p.parent.is_dir():
            raise InputError(f"registry location {p}: {p.parent} is a file, not a folder")
        return False
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as e:
        raise InputError(f"cannot read the registry file {p}: {e.strerror}") from None
    if not head:
        return False  # an empty file is an empty database: nothing there yet
    if head != _SQLITE_MAGIC:
        raise InputError(
            f"{p} is not a SQLite database (it does not start with SQLite's header); give the path of a "
            "tokreg registry, or a new path to create one there"
        )
    return True


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


def side_files(loc: Location) -> Optional[list[Path]]:
    """For a SQLite registry this process cannot write: its -wal and -shm files that do not exist
    yet (SQLite makes them even to read, and cannot remove them after a read-only session);
    `tidy` removes them again. None when there is nothing to tidy."""
    if loc.path is None or not loc.path.is_file() or os.access(loc.path, os.W_OK):
        return None
    return [q for q in (Path(str(loc.path) + "-wal"), Path(str(loc.path) + "-shm")) if not q.exists()]


def tidy(engine: Engine, made: Optional[list[Path]]) -> None:
    """Closes `engine`'s connections and removes the side files a read-only session made, so
    reading (or failing to write to) a read-only registry leaves its folder as it was."""
    engine.dispose()
    if not made or any(q.name.endswith("-wal") and q.exists() and q.stat().st_size for q in made):
        return
    for q in made:
        with contextlib.suppress(OSError):
            q.unlink()
