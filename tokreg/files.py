"""Files the user names: reading them with the one-line errors the CLI shows, and writing
them whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Union

from .errors import InputError

PathLike = Union[str, "os.PathLike[str]"]


def read_input(path: PathLike, hint: str = "give the file", what: str = "file") -> bytes:
    """The bytes of `path`; a missing file, a folder or an unreadable file is an `InputError`
    naming the path (as `what`: "file", "corpus file", "--text file") and, for a folder, `hint`
    (what to give instead)."""
    where = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(f"{what} {where!r} does not exist; check the path") from None
    except IsADirectoryError:
        raise InputError(f"{what} {where!r} is a folder; {hint}") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {where!r}: {e.strerror}") from None


def read_text(path: PathLike, what: str = "file") -> str:
    """The UTF-8 text of `path`, with the same errors as `read_input`, plus one naming the
    first byte that is not UTF-8. `what` says which file it is ("--text file")."""
    raw = read_input(path, what=what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} {os.fspath(path)!r} is not UTF-8 at byte {e.start}; convert it to UTF-8") from None


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux), since
    setting it to read it races with other threads creating files."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: PathLike, raw: bytes) -> None:
    """Writes `raw` to `path` whole or not at all: a temporary file in the same folder, then a
    rename, so a reader never sees half a file and a crash leaves the old one. The file gets the
    mode any program's new file gets (0666 less the umask), or keeps the mode of the file it
    replaces: exports, lockfiles and counts files are made to be shared."""
    where = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(where))
    try:
        mode = os.stat(where).st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-" + os.path.basename(where) + "-")
    except OSError as e:
        raise InputError(f"cannot write {where!r}: {e.strerror}") from None
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600, for its own temporary files
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, where)
    except OSError as e:
        _unlink(tmp)
        raise InputError(f"cannot write {where!r}: {e.strerror}") from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
