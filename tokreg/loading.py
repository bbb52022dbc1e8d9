"""`tokreg.load`: the front door for a program that only encodes, kept light so that start to
ready is short.

A bare name pinned in the project's `tokreg.lock` is loaded by its hash (versions/pinned.py):
from the vendored folder beside the lockfile, the on-disk cache (encoding/content_cache.py),
or else the first registry or server holding that content, checked against the pinned hash
wherever it comes from, and labelled with the pin's `name@version`. A large byte-level
vocabulary's built encoder is cached beside its content (encoding/built_cache.py), so a later
process maps it and reads its tables in place instead of building them, and does not read the
content at all; for a lockfile `tokreg pin` wrote, that path imports neither tomllib nor any
dataclass (versions/lockfile.py), nor the version's model module until it is asked for. Local
content loads without opening any registry, importing neither SQLAlchemy nor Alembic. A `name@N` (or an
unpinned bare name) in a SQLite registry named by `db` or `TOKREG_DB`, its content cached, is
read the lean way too (store/sqlite_read.py: the version row with the stdlib's sqlite3).
Anything else goes through `Registry.load`, or, for a `tokreg serve` URL given as `db`,
through versions/remote.py.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from .content import check_header, header_line
from .encoding import content_cache
from .encoding.tokenizer import Tokenizer
from .versions import lockfile

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def load(ref: str, *, db: Optional[PathLike] = None) -> Tokenizer:
    """Loads a tokenizer by ref (`name` for the latest or the pinned version, `name@N`, or a hash
    prefix). A name pinned in the project's lockfile is the pinned content, from the vendored
    folder, the cache, `db`, `TOKREG_DB`, the pin's registry or the default registry, the first
    that holds it. Other refs come from the registry at `db`, `TOKREG_DB`, the one the lockfile
    names for that tokenizer (when reachable), or the default location, in that order. `db` may
    be a `tokreg serve` URL (http://HOST:PORT), read-only."""
    lock = lockfile.current()  # read once, here, for the whole call
    pin = lockfile.pin_for(lock, ref)
    if pin is not None:
        assert lock is not None
        # Built and cached before: the same hash is the same tokenizer, whichever source would
        # have given it, so no source is looked at (nor versions/pinned.py imported).
        tok = Tokenizer.cached(pin.hash, pin.ref)
        if tok is not None:
            return tok
        from .versions import pinned  # here: only a pin not yet built reads the vendored folder or a registry

        return pinned.load(lock, pin, db)
    where = os.fspath(db) if db is not None else os.environ.get("TOKREG_DB", "")
    if where.startswith(("http://", "https://")):
        from .versions import remote  # urllib and its http stack only for a `tokreg serve` URL

        return remote.load(where, ref)
    if where:  # the lean read of a SQLite file (no SQLAlchemy); anything else falls through
        from .store import sqlite_read

        row = sqlite_read.version_row(where, ref)
        if row is not None:  # built earlier, with the row's algorithm and config: content unread
            tok = Tokenizer.cached(row.content_hash, row.ref, header_line(row.algorithm, row.config))
            if tok is not None:
                return tok
        raw = content_cache.get(row.content_hash) if row is not None else None
        if row is not None and raw is not None:
            check_header(raw, row.algorithm, row.config, row.content_hash, row.ref)
            return Tokenizer(raw, ref=row.ref, _hashed=row.content_hash, _cache=True)  # get() checked the hash
    # Imported here, not at the top: the registry brings SQLAlchemy and Alembic, which the
    # cached path above never needs (that is most of a fresh process's start-up time).
    from .registry import load as load_from_registry

    return load_from_registry(ref, db=db, lock=lock)
