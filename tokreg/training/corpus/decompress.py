"""Opening a corpus file as a stream of its decompressed bytes. The compression is told by the
file's first bytes, not its name (a `.txt` that is really gzip is read as text, not as
compressed bytes): gzip (1f 8b), xz (fd 37 7a 58 5a 00) and zstd (28 b5 2f fd, which needs
the `zstandard` package: `pip install 'tokreg[zstd]'`). The detection and the decompressing
streams are tokreg/files.py's, shared with the other files tokreg reads (`.tiktoken.gz`)."""

from __future__ import annotations

from typing import IO, Any, Callable

from ...errors import InputError
from ...files import compression, decompressing


def open_decompressed(path: str) -> tuple[IO[bytes], Callable[[], int], str]:
    """(stream of decompressed bytes, position read so far in the file on disk, compression)."""
    try:
        raw: Any = open(path, "rb")  # noqa: SIM115 (closed by the caller through the stream)
    except OSError as e:
        raise InputError(f"cannot read corpus file {path!r}: {e.strerror}") from None
    kind = compression(raw.peek(6)[:6])
    try:
        return decompressing(raw, kind, path, "corpus file"), raw.tell, kind
    except InputError:
        raw.close()
        raise


def read_error(path: str, e: Exception) -> InputError:
    """The one error for a file that breaks while being read or decompressed."""
    detail = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return InputError(f"cannot read corpus file {path!r}: {detail}; is it damaged or truncated?")
