"""An on-disk cache of *built* encoders, beside the cached content (content_cache.py) and keyed
by the same content hash, so that a fresh process loading o200k_base reads its ready tables in
a few milliseconds instead of building them for tens (hashing 200k tokens, indexing their byte
pairs) and does not even read its content.

A file `<digest>.encoder` holds what the core's `Encoder.freeze` wrote (src/encode/frozen.rs):
the tables, a checksum over them, the content's header line (algorithm and config), and a tag
naming the content hash and the build of the core that wrote it. `get` hands back an encoder
only when `Encoder.thaw` finds all of that intact and the tag equal to this hash and this very
core (its file's size and modification time: a rebuilt or reinstalled core writes its own);
anything else (truncated, damaged, another content's, an older core's) is ignored and built
again from content, never used. Only algorithms whose build is slow freeze (byte-level BPE),
and only vocabularies of `MIN_TOKENS` or more: a small one builds faster than it reads.

Files are written whole or not at all (a temporary file, then a rename), so processes loading
at the same time never read half a file; the last writer wins, with identical bytes. Like the
content beside it, deleting the cache is always safe. Location: content_cache.cache_dir().
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from .. import _core
from . import content_cache

#: Vocabularies smaller than this build in a few milliseconds: not worth a file.
MIN_TOKENS = 32_768

_fingerprint: Optional[str] = None


def _core_build() -> str:
    """The build of the core loaded in this process: its file's size and modification time."""
    global _fingerprint
    if _fingerprint is None:
        try:
            st = os.stat(_core.__file__)
            _fingerprint = f"{st.st_size}:{st.st_mtime_ns}"
        except (OSError, AttributeError, TypeError):
            _fingerprint = "unknown"
    return _fingerprint


def _tag(hash_label: str) -> bytes:
    return f"{hash_label}\n{_core_build()}".encode()


def path_of(hash_label: str) -> Optional[Path]:
    """Where the built encoder of `hash_label` is cached (None for a label that cannot be a hash)."""
    p = content_cache.path_of(hash_label)
    return None if p is None else p.with_suffix(".encoder")


def get(hash_label: str) -> Optional[tuple[_core.Encoder, str]]:
    """(encoder, content header line) built earlier for `hash_label` by this core, or None.
    The file is mapped, not read: the core copies the tables straight out of the page cache
    (a read would first fill a fresh buffer as large as the file, page fault by page fault)."""
    p = path_of(hash_label)
    if p is None:
        return None
    with content_cache.open_regular(p) as fd:
        if fd is None:
            return None
        import mmap  # a C module: nothing to load but itself

        try:
            flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
            with mmap.mmap(fd, 0, flags=flags, prot=mmap.PROT_READ) as mapped:
                thawed = _core.Encoder.thaw(mapped, _tag(hash_label))
        except (OSError, ValueError):  # an empty file cannot be mapped
            return None
    if thawed is None:
        return None
    enc, header = thawed
    return enc, header.decode()


def put(hash_label: str, enc: _core.Encoder, header_line: str, *, only_if_absent: bool = False) -> None:
    """Caches `enc`, built from the content of `hash_label` (whose header line is
    `header_line`), when it is large enough and its algorithm freezes (with `only_if_absent`,
    when no file is there yet); a cache that cannot be written is skipped."""
    p = path_of(hash_label)
    if p is None or enc.id_bound < MIN_TOKENS or (only_if_absent and os.path.lexists(p)):
        return
    data = enc.freeze(_tag(hash_label), header_line.encode())
    if data is not None:
        content_cache.write_quietly(p, data)


#: What `check` found.
ABSENT, INTACT, REMOVED = content_cache.ABSENT, content_cache.INTACT, content_cache.REMOVED


def check(hash_label: str) -> str:
    """ABSENT, INTACT (it thaws for this core), REMOVED (it did not, and was deleted: a damaged
    file, or one an older core wrote), KEPT (could not be deleted) or NOT_A_FILE (left alone)."""
    p = path_of(hash_label)
    if p is None or not os.path.lexists(p):
        return ABSENT
    if not p.is_file() or p.is_symlink():
        return content_cache.NOT_A_FILE
    if get(hash_label) is not None:
        return INTACT
    try:
        p.unlink()
    except OSError:
        return content_cache.KEPT
    return REMOVED
