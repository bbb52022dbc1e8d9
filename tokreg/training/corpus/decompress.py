"""Opening a corpus file as a stream of its decompressed bytes. The compression is told by the
file's first bytes, not its name (a `.txt` that is really gzip is read as text, not as
compressed bytes): gzip (1f 8b), xz (fd 37 7a 58 5a 00) and zstd (28 b5 2f fd, which needs
the `zstandard` package: `pip install 'tokreg[zstd]'`)."""

from __future__ import annotations

import gzip
import lzma
from typing import IO, Any, Callable

from ...errors import InputError

GZIP, XZ, ZSTD = b"\x1f\x8b", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"


def compression(head: bytes) -> str:
    """ "gzip", "xz", "zstd" or "" (plain) from a file's first bytes."""
    if head.startswith(GZIP):
        return "gzip"
    if head.startswith(XZ):
        return "xz"
    if head.startswith(ZSTD):
        return "zstd"
    return ""


def open_decompressed(path: str) -> tuple[IO[bytes], Callable[[], int], str]:
    """(stream of decompressed bytes, position read so far in the file on disk, compression)."""
    try:
        raw: Any = open(path, "rb")  # noqa: SIM115 (closed by the caller through the stream)
    except OSError as e:
        raise InputError(f"cannot read corpus file {path!r}: {e.strerror}") from None
    kind = compression(raw.peek(6)[:6])
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw.tell, kind  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw, "rb"), raw.tell, kind
    if kind == "zstd":
        try:
            import zstandard  # an optional extra: imported only for .zst files
        except ImportError:
            raw.close()
            raise InputError(
                f"corpus file {path!r} is zstd-compressed; install the zstd extra: pip install 'tokreg[zstd]'"
            ) from None
        return zstandard.ZstdDecompressor().stream_reader(raw, read_size=1 << 20, closefd=True), raw.tell, kind
    return raw, raw.tell, kind


def read_error(path: str, e: Exception) -> InputError:
    """The one error for a file that breaks while being read or decompressed."""
    detail = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return InputError(f"cannot read corpus file {path!r}: {detail}; is it damaged or truncated?")
