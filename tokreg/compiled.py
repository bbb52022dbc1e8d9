"""A cache of compiled tokenizers, keyed by content hash, so that loading a 200k-token
vocabulary does not re-read 400k rows each time.

What is cached is the canonical content (hashing.py): the very bytes the content hash is
computed over. A cached file is used only if its xxh3-128 equals the hash it is filed under,
so a stale or damaged cache can never change what a version encodes to; it is rebuilt from the
rows instead. Location: `TOKREG_CACHE`, else `$XDG_CACHE_HOME/tokreg/compiled`, else
`~/.cache/tokreg/compiled`. Deleting it is always safe.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Optional

from .hashing import PREFIX, digest


def cache_dir() -> Path:
    if os.environ.get("TOKREG_CACHE"):
        return Path(os.environ["TOKREG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tokreg" / "compiled"


def _path(content_hash: str) -> Optional[Path]:
    if not content_hash.startswith(PREFIX):
        return None
    return cache_dir() / (content_hash[len(PREFIX) :] + ".content")


def get(content_hash: str) -> Optional[bytes]:
    """The cached content for `content_hash`, verified; None when absent or not matching."""
    p = _path(content_hash)
    if p is None:
        return None
    try:
        data = p.read_bytes()
    except OSError:
        return None
    if digest(data)[0] != content_hash:
        with contextlib.suppress(OSError):
            p.unlink()
        return None
    return data


def put(content_hash: str, content: bytes) -> None:
    """Stores content under its hash; a cache that cannot be written is simply skipped."""
    p = _path(content_hash)
    if p is None:
        return
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
        os.replace(tmp, p)
    except OSError:
        pass
