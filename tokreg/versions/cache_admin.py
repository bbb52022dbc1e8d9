"""`tokreg cache list|verify|prune`: the local cache of compiled content made visible
(encoding/content_cache.py owns the content files, one per content hash, checked on every read;
encoding/built_cache.py the built encoders beside them, `<hash>.encoder`, checked likewise).

`list` gives each file's hash, what it holds, size and age; `verify` re-hashes every content
file and re-reads every built encoder (a bad one, or one an older core wrote, is removed, as a
load would skip it); `prune` deletes the files cached before a given age, or all of them,
and the temporary files an interrupted write left. Deleting the cache is always safe: content
is fetched again from the vendored folder, a registry or `tokreg sync`.
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..content import PREFIX
from ..encoding import built_cache, content_cache
from ..errors import InputError

_NAME = re.compile(r"^([0-9a-f]{32})\.(content|encoder)$")


@dataclass(frozen=True)
class Entry:
    """One file of the cache: its hash (None for a file that is not tokreg's), what it holds
    ("content", "encoder": a built encoder, or "" for other files), size in bytes, modification
    time (seconds since the epoch) and, after `verify`, its state."""

    path: Path
    hash: Optional[str]
    size: int
    mtime: float
    state: str = ""
    what: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "hash": self.hash,
            "what": self.what,
            "file": str(self.path),
            "bytes": self.size,
            "mtime": self.mtime,
            "state": self.state,
        }


def entries() -> list[Entry]:
    """Every file in the cache folder, by hash (other files last, by name)."""
    folder = content_cache.cache_dir()
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise InputError(f"cannot read the cache folder {str(folder)!r}: {e.strerror}") from None
    out = []
    for name in names:
        p = folder / name
        try:
            st = os.lstat(p)
        except OSError:
            continue
        m = _NAME.match(name)
        size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        out.append(Entry(p, PREFIX + m.group(1) if m else None, size, st.st_mtime, what=m.group(2) if m else ""))
    return sorted(out, key=lambda e: (e.hash is None, e.hash or e.path.name, e.what))


def verify() -> list[Entry]:
    """Every cached content re-hashed and built encoder re-read: intact, removed (did not hash
    or read right), kept (could not be removed) or "not a file"; files that are not tokreg's
    are listed as "other"."""
    out = []
    for e in entries():
        check = built_cache.check if e.what == "encoder" else content_cache.check
        state = check(e.hash) if e.hash is not None else "other"
        out.append(Entry(e.path, e.hash, e.size, e.mtime, state, e.what))
    return out


def prune(older_than: Optional[float] = None, *, now: Optional[float] = None) -> list[Entry]:
    """Deletes the cached files older than `older_than` seconds (every file when None) and any
    leftover temporary file; returns what was deleted."""
    now = time.time() if now is None else now
    gone = []
    for e in entries():
        leftover = e.hash is None and e.path.name.startswith(".tmp-")
        if e.hash is None and not leftover:
            continue  # not ours: left alone
        if older_than is not None and now - e.mtime < older_than and not leftover:
            continue
        try:
            e.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise InputError(f"cannot delete {str(e.path)!r}: {err.strerror}") from None
        gone.append(Entry(e.path, e.hash, e.size, e.mtime, "removed", e.what))
    return gone


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration(text: str) -> float:
    """Seconds in "90s", "45m", "12h", "30d", "2w" (a bare number is days)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not m:
        raise InputError(f"--older-than {text!r} is not a duration; write e.g. 30d, 12h, 45m, 90s")
    return float(m.group(1)) * _UNITS[m.group(2) or "d"]
