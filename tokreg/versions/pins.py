"""What a project's pins mean when a ref is used: a bare `name` pinned in `tokreg.lock` is the
pinned version, which must still carry the pinned hash; and a pinned name is loaded from the
registry it was pinned from when no other registry is named. `tokreg.load` and the CLI apply
pins through here; resolving a ref in the store never reads a file (store/refs.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from sqlalchemy import Connection
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..data import VersionInfo
from ..errors import IntegrityError, NotFoundError
from ..store import refs
from .lockfile import Lock, LockArg, Pin, lock_of, pin_for

__all__ = ["LockArg", "lock_of", "pin_for", "resolve", "registry_for"]


def resolve(conn: Connection, ref: str, lock: Optional[Lock]) -> tuple[VersionInfo, Optional[Pin]]:
    """The version `ref` names with the pins of `lock` applied, and the pin used (if any)."""
    pin = pin_for(lock, ref)
    if pin is None:
        return refs.resolve(conn, ref), None
    assert lock is not None
    where = f"{lock.path} pins {pin.ref} ({pin.hash})"
    versions = refs.all_versions(conn, pin.name)
    v = next((x for x in versions if x.number == pin.version), None)
    if v is None:
        have = ", ".join(str(x.number) for x in versions) or "none"
        raise NotFoundError(
            f"{where}, but this registry has no {pin.ref} (its versions of {pin.name}: {have}); "
            f"it was pinned from {pin.registry or 'an unrecorded registry'}: point TOKREG_DB there, "
            f"or re-pin with `tokreg pin {pin.name}@N`"
        )
    if v.content_hash != pin.hash:
        raise IntegrityError(
            f"{where}, but {v.ref} in this registry is {v.content_hash}; it is not the pinned "
            f"tokenizer (re-pin deliberately with `tokreg pin {v.ref}`)",
            expected=pin.hash,
            actual=v.content_hash,
        )
    # The content itself is checked against this same hash wherever it is read, so rows changed
    # behind tokreg's back are refused there, naming both hashes.
    return v, pin


def registry_for(ref: str, lock: Optional[Lock]) -> Optional[str]:
    """The registry that `lock` names for `ref`'s tokenizer (a bare `name` or `name@...` pinned
    there), when it can be reached from here: a SQLite file that exists, or another URL whose
    password was not hidden when it was written. None otherwise, and then the usual location
    applies; what is loaded is checked against the pinned hash either way."""
    p = lock.pins.get(ref.split("@", 1)[0]) if lock is not None else None
    if p is None or not p.registry or ":***@" in p.registry:
        return None
    try:
        url = make_url(p.registry)
    except ArgumentError:
        return None
    if url.get_backend_name() == "sqlite":
        return p.registry if url.database and Path(url.database).is_file() else None
    return p.registry
