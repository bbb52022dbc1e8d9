"""`tokreg.load`: the front door for a program that only encodes, kept light so that start to
ready is short.

A bare name pinned in the project's `tokreg.lock` whose pinned content is in the on-disk cache
(encoding/content_cache.py: filed under its hash, and checked against that hash as it is read) loads
from there, without opening a registry: the pin names the content by hash, and the cache holds
exactly that content, so the registry has nothing to add. This path imports neither
SQLAlchemy nor Alembic. A `name@N` (or unpinned bare name) in a SQLite registry named by `db`
or `TOKREG_DB`, its content cached, is read the lean way (store/sqlite_read.py), without them
too. Everything else (a ref that is not a bare pinned name, a pin whose
content is not cached yet, a registry named by `db` or `TOKREG_DB`, which then must hold the
pinned version) goes through `Registry.load`, which puts the content in the cache for the next
time.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from .content import check_header
from .encoding import content_cache
from .encoding.tokenizer import Tokenizer
from .versions import lockfile

PathLike = Union[str, "os.PathLike[str]"]


def load(ref: str, *, db: Optional[PathLike] = None) -> Tokenizer:
    """Loads a tokenizer by ref (`name` for the latest or the pinned version, `name@N`, or a hash
    prefix) from the registry at `db`, `TOKREG_DB`, the one the project's lockfile names for
    that tokenizer (when reachable), or the default location, in that order. A pinned name whose
    content is cached loads from the cache, without opening any registry (unless a registry is
    named, by `db` or `TOKREG_DB`: then that registry is asked, and must hold the pinned version)."""
    lock = lockfile.current()  # read once, here, for the whole call
    if db is None and not os.environ.get("TOKREG_DB"):
        pin = lockfile.pin_for(lock, ref)
        raw = content_cache.get(pin.hash) if pin is not None else None
        if pin is not None and raw is not None:
            return Tokenizer(raw, ref=pin.ref, expect_hash=pin.hash)
    named = os.fspath(db) if db is not None else os.environ.get("TOKREG_DB")
    if named and lockfile.pin_for(lock, ref) is None:  # the lean read of a SQLite file (no SQLAlchemy)
        from .store import sqlite_read

        row = sqlite_read.version_row(named, ref)
        raw = content_cache.get(row.content_hash) if row is not None else None
        if row is not None and raw is not None:
            check_header(raw, row.algorithm, row.config, row.content_hash, row.ref)
            return Tokenizer(raw, ref=row.ref, _hashed=row.content_hash)  # get() checked the hash
    # Imported here, not at the top: the registry brings SQLAlchemy and Alembic, which the
    # cached path above never needs (that is most of a fresh process's start-up time).
    from .registry import load as load_from_registry

    return load_from_registry(ref, db=db, lock=lock)
