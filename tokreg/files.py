"""Reading an input file that the user named, with the one-line errors the CLI shows."""

from __future__ import annotations

import os

from .errors import InputError


def read_input(path: str | os.PathLike[str], hint: str = "give the file") -> bytes:
    """The bytes of `path`; a missing file, a folder or an unreadable file is an `InputError`
    naming the path and, for a folder, `hint` (what to give instead)."""
    where = str(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(f"file {where!r} does not exist; check the path") from None
    except IsADirectoryError:
        raise InputError(f"{where!r} is a folder; {hint}") from None
    except OSError as e:
        raise InputError(f"cannot read {where!r}: {e.strerror}") from None
