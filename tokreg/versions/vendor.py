"""The vendored folder: pinned content committed beside the lockfile, so that a clone of a
project loads its pinned tokenizers with no registry, no network and no cache.

    project/
      tokreg.lock
      tokreg.vendor/
        9f2c41….content.xz      # the canonical content (content.py) of one pinned hash, xz

One file per content hash, named by the hash's hex digest: content-addressed, so two pins of
the same content share a file and a file never changes once written. It holds the canonical
content compressed with xz (the standard library's lzma: no extra package to read it), and is
used only if it decompresses to content with the hash it is named by; anything else (a damaged
file, a symlink, a FIFO, a file of implausible size) is reported as such and never loaded.
Files are written whole or not at all with the mode any new file gets (0666 less the umask):
they are made to be committed and shared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

from .. import content
from ..encoding import content_cache
from ..errors import InputError, IntegrityError
from ..files import write_atomic

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import
FOLDER = "tokreg.vendor"
SUFFIX = ".content.xz"


def folder(project: PathLike) -> Path:
    """The vendored folder of the project whose lockfile is in `project`."""
    return Path(project) / FOLDER


def path_of(project: PathLike, hash_label: str) -> Path:
    cached = content_cache.path_of(hash_label)  # the cache's name for it: <digest>.content
    if cached is None:
        raise InputError(f"{hash_label!r} is not a content hash (xxh3-128:<32 hex digits>); re-pin it")
    return folder(project) / (cached.name + ".xz")


def put(project: PathLike, hash_label: str, raw: bytes) -> Path:
    """Stores `raw` content (which must hash to `hash_label`) in the vendored folder; returns the file."""
    content.check(raw, hash_label, f"the content to vendor for {hash_label}")
    p = path_of(project, hash_label)
    try:
        p.parent.mkdir(exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make the vendored folder {str(p.parent)!r}: {e.strerror}") from None
    try:
        intact = get(project, hash_label) is not None
    except IntegrityError:  # a damaged file is replaced
        intact = False
    if not intact:  # content-addressed: an intact file is never rewritten
        import lzma  # here: most loads read no vendored file

        write_atomic(p, lzma.compress(raw, preset=6))
    return p


def get(project: PathLike, hash_label: str) -> bytes | None:
    """The vendored content for `hash_label`, checked; None when there is no such file. A file
    that is there but is not that content raises IntegrityError naming it."""
    p = path_of(project, hash_label)
    if not os.path.lexists(p):
        return None
    raw = content_cache.read_regular(p)
    if raw is None:
        raise IntegrityError(f"vendored file {str(p)!r} is not a regular file of plausible size; delete it")
    import lzma  # here: most loads read no vendored file

    try:
        data = lzma.decompress(raw)
    except (lzma.LZMAError, EOFError):
        raise IntegrityError(
            f"vendored file {str(p)!r} is damaged (not xz); delete it and run `tokreg pin NAME --vendor`"
        ) from None
    content.check(
        data, hash_label, f"vendored file {str(p)!r}", claimed_by="its name says", hint="delete it and re-vendor it"
    )
    return data
