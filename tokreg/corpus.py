"""Reading a training corpus: the bytes of each file, and the fingerprint that identifies it.

The fingerprint covers each file's name, size and xxh3-128 of its bytes, so `reproduce` can
say which file changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

from .errors import InputError
from .hashing import fingerprint_files


@dataclass(frozen=True)
class Corpus:
    data: list[bytes]
    files: list[dict[str, Any]]  # {"path", "name", "size", "xxh3"} per file, in the order given
    fingerprint: str

    @property
    def size(self) -> int:
        return sum(len(d) for d in self.data)


def read_corpus(paths: Sequence[str | os.PathLike[str]], *, require_utf8: bool = False) -> Corpus:
    """Reads every file. Raises InputError naming the file when one is missing or unreadable,
    when all of them are empty, or (with `require_utf8`) at the first byte that is not UTF-8."""
    if not paths:
        raise InputError("no corpus files given; name at least one text file")
    data: list[bytes] = []
    files: list[dict[str, Any]] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise InputError(f"corpus file {str(p)!r} does not exist; check the path")
        if path.is_dir():
            raise InputError(f"corpus path {str(p)!r} is a folder; name the files in it (e.g. {p}/*.txt)")
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise InputError(f"cannot read corpus file {str(p)!r}: {e.strerror}") from None
        if require_utf8:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(
                    f"corpus file {str(p)!r} is not UTF-8 at byte offset {e.start}; character-level BPE "
                    "needs UTF-8 text (convert the file, or drop --char-level to train byte-level)"
                ) from None
        data.append(raw)
        files.append(
            {
                "path": str(path.resolve()),
                "name": path.name,
                "size": len(raw),
                "xxh3": xxhash.xxh3_128_hexdigest(raw),
            }
        )
    if sum(len(d) for d in data) == 0 or all(not d.strip() for d in data):
        names = ", ".join(str(p) for p in paths)
        raise InputError(f"the corpus is empty ({names}); give files that contain text")
    return Corpus(data=data, files=files, fingerprint=fingerprint_files(files))
