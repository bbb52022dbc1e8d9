"""Files the user names: reading them with the one-line errors the CLI shows, compressed or
not (told by their first bytes, not their names), and writing them whole or not at all."""

from __future__ import annotations

import contextlib
import io
import os
from typing import IO, Any, Optional, Union

from .errors import InputError

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


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


#: The first bytes of the compressions tokreg reads: gzip, xz, and zstd (which needs the
#: `zstandard` package: `pip install 'tokreg[zstd]'`).
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


def decompressing(raw: IO[bytes], kind: str, where: str, what: str = "file") -> IO[bytes]:
    """A stream of the decompressed bytes of `raw`, compressed as `kind` (`compression`'s
    answer; "" gives `raw` itself). A zstd file without the `zstandard` package is an InputError
    naming `what` `where` and the extra to install."""
    # The compressors are imported where used: loading a tokenizer imports this module but
    # never decompresses (a fresh process pays for every import).
    if kind == "gzip":
        import gzip  # here: see the comment above

        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        import lzma  # here: see the comment above

        return lzma.LZMAFile(raw, "rb")
    if kind == "zstd":
        return io.BufferedReader(_ZstdFrames(_zstandard(where, what), raw), 1 << 20)
    return raw


def decompressed(raw: bytes, where: str, what: str = "file", limit: int = 1 << 30) -> bytes:
    """`raw` itself, or its decompressed bytes when it is gzip, xz or zstd (by its first bytes).
    A damaged or truncated file, or one that decompresses to more than `limit` bytes, is a
    one-line InputError naming `what` `where`."""
    kind = compression(raw[:6])
    if not kind:
        return raw
    import lzma  # here, as in `decompressing`: a load never decompresses
    import zlib

    damaged: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, lzma.LZMAError)
    try:
        if kind == "zstd":
            damaged += (_zstandard(where, what).ZstdError,)
        with decompressing(io.BytesIO(raw), kind, where, what) as stream:
            out = stream.read(limit + 1)
    except damaged as e:
        detail = " ".join(str(e).split()) or type(e).__name__
        raise InputError(f"{what} {where!r} is {kind}-compressed but damaged or truncated ({detail})") from None
    if len(out) > limit:
        raise InputError(f"{what} {where!r} decompresses to more than {limit:,} bytes; is it the file you meant?")
    return out


def _zstandard(where: str, what: str) -> Any:
    """The `zstandard` module, or the InputError that names the extra to install."""
    try:
        import zstandard  # an optional extra: imported only for zstd files
    except ImportError:
        raise InputError(
            f"{what} {where!r} is zstd-compressed; install the zstd extra: pip install 'tokreg[zstd]'"
        ) from None
    return zstandard


class _ZstdFrames(io.RawIOBase):
    """The decompressed bytes of every zstd frame of `raw`, read as a stream; a frame that the
    file cuts short is an EOFError. (zstandard's own stream reader returns what it has of a cut
    frame without a word, so a truncated corpus would train on part of itself.) Input is fed a
    KiB at a time, so a small file cannot make a huge output in one step."""

    def __init__(self, zstd: Any, raw: IO[bytes]) -> None:
        self._zstd, self._raw = zstd, raw
        self._frame: Any = None  # the frame being decompressed, None between frames
        self._pending = b""  # compressed bytes read but not yet fed
        self._out = b""  # decompressed bytes not yet returned

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._out:
            if not self._feed():
                return 0
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _feed(self) -> bool:
        """Decompresses the next KiB; False at the end of the last whole frame."""
        if not self._pending:
            self._pending = self._raw.read(1024)
            if not self._pending:
                if self._frame is not None:
                    raise EOFError("the last zstd frame is cut short")
                return False
        if self._frame is None:
            self._frame = self._zstd.ZstdDecompressor().decompressobj()
        chunk, self._pending = self._pending, b""
        self._out = self._frame.decompress(chunk)
        if self._frame.eof:
            self._pending, self._frame = self._frame.unused_data, None
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()


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


def write_atomic(path: PathLike, raw: bytes, *, mode: Optional[int] = None) -> None:
    """Writes `raw` to `path` whole or not at all: a temporary file in the same folder, then a
    rename, so a reader never sees half a file and a crash leaves the old one. The file gets the
    mode any program's new file gets (0666 less the umask), or keeps the mode of the file it
    replaces: exports, lockfiles and counts files are made to be shared. With `mode`, it gets
    that mode less the umask (the built-encoder cache's are read-only: 0o444)."""
    where = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(where))
    if mode is not None:
        mode &= ~_umask()
    else:
        try:
            mode = os.stat(where).st_mode & 0o777
        except OSError:
            mode = 0o666 & ~_umask()
    import tempfile  # on a write only

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
