"""What the inputs of a run are: each becomes one or more `Source`s, in a documented order.

- a file: itself;
- a folder: every file under it, recursively, whose name matches `glob` (all files without
  one; a glob holding `/` is matched against the path below the folder), in the order of
  their paths below the folder, compared as UTF-8 bytes; hidden files and folders (a name
  starting with `.`) are skipped;
- `-`: standard input (read once; a run on it cannot be reproduced);
- an iterable of strings (Python only): each string is one text, given a final newline when
  it has none (so that two texts never join into one line); cannot be reproduced.

A source's `name` is what the run records: a file's own name, `FOLDER/PATH` for a file found
in a folder (FOLDER is the folder's own name), `<stdin>` or `<iterator>`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any, Optional, Union

from ...errors import InputError

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import
Input = Union[PathLike, Iterable[str]]

#: Record formats by file-name ending (after any compression suffix).
RECORD_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
COMPRESSION_SUFFIXES = (".gz", ".xz", ".zst")


@dataclass
class Source:
    name: str
    path: Optional[str] = None  # absolute; None for standard input and iterators
    format: str = "text"  # text | jsonl | parquet
    field: Optional[str] = None  # jsonl / parquet: the field whose text is read
    texts: Optional[Iterable[str]] = dc_field(default=None, repr=False)  # an iterator source's strings
    size_on_disk: int = 0  # for progress: bytes to read from disk (0: unknown)

    @property
    def reproducible(self) -> bool:
        return self.path is not None


def file_format(path: str) -> str:
    name = path.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return next((fmt for end, fmt in RECORD_FORMATS.items() if name.endswith(end)), "text")


def _file(path: Path, name: str, field: str) -> Source:
    fmt = file_format(str(path))
    try:
        size = path.stat().st_size
    except OSError as e:
        raise InputError(f"cannot read corpus file {str(path)!r}: {e.strerror}") from None
    return Source(
        name=name,
        path=str(path.resolve()),
        format=fmt,
        field=field if fmt != "text" else None,
        size_on_disk=size,
    )


def _matches(rel: str, glob: Optional[str]) -> bool:
    if glob is None:
        return True
    return fnmatch.fnmatchcase(rel if "/" in glob else rel.rsplit("/", 1)[-1], glob)


def _folder(folder: Path, glob: Optional[str], field: str) -> list[Source]:
    found: list[tuple[bytes, Path, str]] = []
    for root, dirs, files in os.walk(folder, onerror=None):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if f.startswith("."):
                continue
            p = Path(root) / f
            rel = p.relative_to(folder).as_posix()
            if _matches(rel, glob):
                found.append((rel.encode("utf-8", "surrogateescape"), p, rel))
    if not found:
        what = f" matching --glob {glob!r}" if glob else ""
        raise InputError(f"corpus folder {str(folder)!r} holds no files{what}; check the folder or the --glob pattern")
    found.sort(key=lambda t: t[0])
    base = folder.resolve().name or str(folder)
    return [_file(p, f"{base}/{rel}", field) for _, p, rel in found]


def expand(inputs: Sequence[Input], *, glob: Optional[str] = None, field: Optional[str] = None) -> list[Source]:
    """The sources of `inputs`, in order. Raises InputError naming an input that is missing,
    a folder with no matching file, or a second `-`."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    if not inputs:
        raise InputError("no corpus given; name at least one file or folder (or - for standard input)")
    out: list[Source] = []
    stdin_seen = False
    for item in inputs:
        if isinstance(item, bytes):
            raise InputError("a corpus input is bytes; give a path, '-', or an iterable of str")
        if isinstance(item, (str, os.PathLike)):
            where = os.fspath(item)
            if where == "-":
                if stdin_seen:
                    raise InputError("standard input (-) is given twice; it can be read only once")
                stdin_seen = True
                out.append(Source(name="<stdin>"))
                continue
            p = Path(where)
            if p.is_dir():
                out.extend(_folder(p, glob, field or "text"))
            elif p.exists():
                out.append(_file(p, p.name, field or "text"))
            else:
                raise InputError(f"corpus file {where!r} does not exist; check the path")
        else:
            out.append(Source(name="<iterator>", texts=_check_iterable(item)))
    return out


def _check_iterable(item: Any) -> Iterable[str]:
    if not hasattr(item, "__iter__"):
        raise InputError(f"a corpus input must be a path, '-' or an iterable of str, not {type(item).__name__}")
    return item  # type: ignore[no-any-return]
