"""Where a SQLite registry lives by default and what its files allow, answered without
SQLAlchemy: engine.py opens registries with these, and the lean read and write (sqlite_read.py,
sqlite_write.py) use them without importing the store."""

from __future__ import annotations

import os
from pathlib import Path

#: How long a SQLite writer waits for another writer's transaction before giving up.
BUSY_SECONDS = 300


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tokreg" / "registry.db"


def existing_ancestor(p: Path) -> Path:
    """`p`, or its nearest folder that exists."""
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def read_only_media(path: Path) -> bool:
    """Whether the file system that holds (or would hold) `path` is mounted read-only."""
    folder = existing_ancestor(path.parent)
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        return False
