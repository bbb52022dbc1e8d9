"""An on-disk cache of canonical content (content.py), keyed by content hash, so that loading a
200k-token vocabulary does not read and re-serialize 400k rows each time.

A cached file is used only if its xxh3-128 equals the hash it is filed under, so a stale,
damaged or tampered cache can never change what a version encodes to; it is deleted and
rebuilt from the rows instead. Only regular files of plausible size are opened: a FIFO, a
device or a symlink in the cache folder is ignored, never read. Location: `TOKREG_CACHE`, else
`$XDG_CACHE_HOME/tokreg/compiled`, else `~/.cache/tokreg/compiled`. Deleting it is always safe.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..content import PREFIX, content_hash
from ..errors import InputError

#: No tokenizer's content comes near this (o200k_base's is 7 MB); a bigger file is not ours.
MAX_BYTES = 256 << 20


def cache_dir() -> Path:
    if os.environ.get("TOKREG_CACHE"):
        return Path(os.environ["TOKREG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tokreg" / "compiled"


def _path(hash_label: str) -> Optional[Path]:
    digest = hash_label[len(PREFIX) :]
    if not hash_label.startswith(PREFIX) or len(digest) != 32 or not all(c in "0123456789abcdef" for c in digest):
        return None
    return cache_dir() / (digest + ".content")


def path_of(hash_label: str) -> Optional[Path]:
    """Where the content of `hash_label` is cached (None for a label that cannot be a hash)."""
    return _path(hash_label)


def size_of(hash_label: str) -> Optional[int]:
    """The size of the cached content file of `hash_label` when it is a regular file (not read,
    not followed through a symlink), else None."""
    p = _path(hash_label)
    try:
        st = os.lstat(p) if p is not None else None
    except OSError:
        return None
    return st.st_size if st is not None and stat.S_ISREG(st.st_mode) else None


@contextlib.contextmanager
def open_regular(p: Path) -> Iterator[Optional[int]]:
    """A descriptor of the regular file of plausible size at `p`, opened without following a
    symlink and without blocking on a FIFO (closed on leaving); None for anything else."""
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        yield None
        return
    try:
        st = os.fstat(fd)
        yield fd if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_BYTES else None
    finally:
        os.close(fd)


def _read(p: Path) -> Optional[bytes]:
    """The bytes of a regular file of plausible size at `p` (see `open_regular`); None for
    anything else."""
    with open_regular(p) as fd:
        if fd is None:
            return None
        try:
            with os.fdopen(fd, "rb", closefd=False) as fh:
                return fh.read(MAX_BYTES + 1)
        except OSError:
            return None


def read_regular(p: Path) -> Optional[bytes]:
    """`_read` for other content-addressed folders (the vendored one): the bytes of a regular
    file of plausible size, never through a symlink nor blocking on a FIFO; None otherwise."""
    return _read(p)


def get(hash_label: str) -> Optional[bytes]:
    """The cached content for `hash_label`, verified; None when absent, unusable or not matching
    (a file that does not match is removed, so the caller's `put` replaces it)."""
    p = _path(hash_label)
    data = None if p is None else _read(p)
    if p is None or data is None:
        return None
    if content_hash(data) != hash_label:
        _remove(p)
        return None
    return data


#: What `check` found for a version's cached copy.
ABSENT, INTACT, REMOVED, NOT_A_FILE, KEPT = "absent", "intact", "removed", "not a file", "kept"


def check(hash_label: str) -> str:
    """What the cache holds for `hash_label`: ABSENT (nothing, or a label that cannot be a hash),
    INTACT, REMOVED (a regular file that did not hash right, now deleted), KEPT (one that did
    not hash right and could not be deleted), or NOT_A_FILE (a directory, FIFO, symlink… that
    loads skip and that is left alone)."""
    p = _path(hash_label)
    if p is None or not os.path.lexists(p):
        return ABSENT
    try:
        st = os.lstat(p)
    except OSError:
        return ABSENT
    if not stat.S_ISREG(st.st_mode):
        return NOT_A_FILE
    data = _read(p)
    if data is not None and content_hash(data) == hash_label:
        return INTACT
    _remove(p)
    return KEPT if os.path.lexists(p) else REMOVED


def _remove(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.unlink()


def put(hash_label: str, content: bytes) -> None:
    """Stores content under its hash; a cache that cannot be written is simply skipped."""
    p = _path(hash_label)
    if p is not None:
        write_quietly(p, content)


def write_quietly(p: Path, data: bytes, *, mode: Optional[int] = None) -> None:
    """Writes a cache file whole or not at all (a temporary file, then a rename: a reader never
    sees half of it, and one that has the old file open or mapped keeps the old file); a folder
    that cannot be written is simply skipped. `mode`: as `files.write_atomic`'s."""
    from ..files import write_atomic  # on a write only: it brings tempfile and the compressors

    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(p, data, mode=mode)
    except (OSError, InputError):
        pass
