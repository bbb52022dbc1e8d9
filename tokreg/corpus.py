"""Reading a training corpus: the bytes of each file, and the fingerprint that identifies it.

The fingerprint is xxh3-128 over the canonical JSON of [name, size, xxh3-128 of the bytes] per
file, in the order given, so `reproduce` can say which file changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import xxhash

from .content import PREFIX, canonical_json
from .errors import InputError
from .files import read_input


@dataclass(frozen=True)
class Corpus:
    data: list[bytes]
    files: list[dict[str, Any]]  # {"path", "name", "size", "xxh3"} per file, in the order given
    fingerprint: str

    @property
    def size(self) -> int:
        return sum(len(d) for d in self.data)


def fingerprint_files(files: Sequence[dict[str, Any]]) -> str:
    """The corpus fingerprint of per-file records {"name", "size", "xxh3"}."""
    key = [[f["name"], f["size"], f["xxh3"]] for f in files]
    return PREFIX + xxhash.xxh3_128_hexdigest(canonical_json(key).encode())


def file_record(path: Union[str, os.PathLike[str]], raw: bytes) -> dict[str, Any]:
    """What a run records of one corpus file."""
    p = Path(path)
    return {"path": str(p.resolve()), "name": p.name, "size": len(raw), "xxh3": xxhash.xxh3_128_hexdigest(raw)}


def read_corpus(
    paths: Sequence[Union[str, os.PathLike[str]]], *, require_utf8: bool = False, utf8_hint: str = ""
) -> Corpus:
    """Reads every file. Raises InputError naming the file when one is missing or unreadable,
    when all of them are empty, or (with `require_utf8`) at the first byte that is not UTF-8,
    adding `utf8_hint` (what this algorithm needs, and what to do)."""
    if not paths:
        raise InputError("no corpus files given; name at least one text file")
    data: list[bytes] = []
    files: list[dict[str, Any]] = []
    for p in paths:
        raw = read_input(p, f"name the files in it (e.g. {os.fspath(p)}/*.txt)", what="corpus file")
        if require_utf8:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(
                    f"corpus file {os.fspath(p)!r} is not UTF-8 at byte offset {e.start}; {utf8_hint}"
                ) from None
        data.append(raw)
        files.append(file_record(p, raw))
    if sum(len(d) for d in data) == 0 or all(not d.strip() for d in data):
        names = ", ".join(os.fspath(p) for p in paths)
        raise InputError(f"the corpus is empty ({names}); give files that contain text")
    return Corpus(data=data, files=files, fingerprint=fingerprint_files(files))
