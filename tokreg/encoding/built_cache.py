"""An on-disk cache of *built* encoders, beside the cached content (content_cache.py) and keyed
by the same content hash, so that a fresh process loading o200k_base maps its ready tables in
a few milliseconds instead of building them for tens (hashing 200k tokens, indexing their byte
pairs) and does not even read its content.

A file `<digest>.encoder` holds what the core's `Encoder.freeze` wrote (src/encode/frozen.rs):
the tables, a checksum over them, the content's header line (algorithm and config), and a tag
naming the content (its hash and size) and the build of the core that wrote it (the core
file's size and modification time: a rebuilt or reinstalled core writes its own). `get` hands
back an encoder only when `Encoder.thaw` finds all of that intact and the tag equal to this
content and this very core; anything else (truncated, damaged, another content's, an older
core's or format's) is ignored and built again from content, never used. Only algorithms whose
build is slow freeze (byte-level BPE), and only vocabularies of `MIN_TOKENS` or more: a small
one builds faster than it reads.

In place. The file is mapped read-only and the encoder reads its tables from the mapping (no
copy: o200k's 17 MB are the page cache's, shared by every process that loads it), which it
keeps open for as long as it lives. The checksum is verified each time the file is mapped,
before anything is read from it. The rule that keeps this safe: a cache file is never changed
in place. Files are written whole beside and renamed over (a temporary file, then a rename), so
processes loading at the same time never read half a file, and a process that has the old
file mapped keeps reading the old, intact bytes (the mapping holds the old file, not its
name); the last writer wins, with identical bytes. The files are written read-only (0444), so
that a plain `cp` over one fails instead of writing into it. Something that still writes into
a mapped file in place (`truncate`, root's `cp`, a disk editor) breaks the processes that
have it mapped, as it would a shared library they loaded: they may read tables that changed
after the checksum (wrong ids, or an error) or be stopped by SIGBUS where it was cut short.
Delete a file, or replace it by a rename, instead; like the content beside it, deleting the
cache is always safe, also while processes use it.

The content file beside it. A built encoder stands on its own (the checksum and the tag), so
encoding never depends on the content file, and a load that only encodes does not read it:
`Tokenizer.cached` takes the built encoder when the content file beside it is a regular file
of the size the tag names. So a content file cut short, emptied or replaced by another size is
noticed at load (the content is read from its sources, checked, and cached again); one damaged
in place at the same size is found where the content is first read (`Tokenizer.content`, for
exports, live HF objects and `verify`; and `tokreg cache verify`): it is hashed there, removed
and refused in one line. Location: content_cache.cache_dir().
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


def _tag(hash_label: str, content_size: int) -> bytes:
    return f"{hash_label}\n{content_size}\n{_core_build()}".encode()


def path_of(hash_label: str) -> Optional[Path]:
    """Where the built encoder of `hash_label` is cached (None for a label that cannot be a hash)."""
    p = content_cache.path_of(hash_label)
    return None if p is None else p.with_suffix(".encoder")


def get(hash_label: str, content_size: int) -> Optional[tuple[_core.Encoder, str]]:
    """(encoder, content header line) built earlier for `hash_label` (whose content is
    `content_size` bytes) by this core, or None. The file is mapped, not read, and the encoder
    reads its tables in place from the mapping, which it keeps open for as long as it lives
    (see "In place" above)."""
    p = path_of(hash_label)
    if p is None:
        return None
    with content_cache.open_regular(p) as fd:
        if fd is None:
            return None
        import mmap  # a C module: nothing to load but itself

        try:
            # MAP_POPULATE: the checksum reads every page at once, so they are mapped in one call
            # rather than fault by fault (the mapping outlives the descriptor, closed on leaving).
            flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
            mapped = mmap.mmap(fd, 0, flags=flags, prot=mmap.PROT_READ)
        except (OSError, ValueError):  # an empty file cannot be mapped
            return None
    thawed = _core.Encoder.thaw(mapped, _tag(hash_label, content_size))
    if thawed is None:
        mapped.close()  # not kept: nothing reads from it
        return None
    enc, header = thawed
    return enc, header.decode()


def put(
    hash_label: str, enc: _core.Encoder, header_line: str, content_size: int, *, only_if_absent: bool = False
) -> None:
    """Caches `enc`, built from the content of `hash_label` (`content_size` bytes, whose header
    line is `header_line`), when it is large enough and its algorithm freezes (with
    `only_if_absent`, when no file is there yet); a cache that cannot be written is skipped."""
    p = path_of(hash_label)
    if p is None or enc.id_bound < MIN_TOKENS or (only_if_absent and os.path.lexists(p)):
        return
    data = enc.freeze(_tag(hash_label, content_size), header_line.encode())
    if data is not None:
        content_cache.write_quietly(p, data, mode=0o444)  # read-only: see "In place" above


#: What `check` found.
ABSENT, INTACT, REMOVED = content_cache.ABSENT, content_cache.INTACT, content_cache.REMOVED


def check(hash_label: str) -> str:
    """ABSENT, INTACT (it thaws for this core and the content cached beside it), REMOVED (it did
    not, and was deleted: a damaged file, one an older core wrote, or one whose content is not
    cached beside it, which no load would use), KEPT (could not be deleted) or NOT_A_FILE (left
    alone)."""
    p = path_of(hash_label)
    if p is None or not os.path.lexists(p):
        return ABSENT
    if not p.is_file() or p.is_symlink():
        return content_cache.NOT_A_FILE
    size = content_cache.size_of(hash_label)
    if size is not None and get(hash_label, size) is not None:
        return INTACT
    try:
        p.unlink()
    except OSError:
        return content_cache.KEPT
    return REMOVED
