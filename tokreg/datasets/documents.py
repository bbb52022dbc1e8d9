"""The documents of a corpus, in batches, for tokenizing: the same inputs `tokreg train` reads
(training/corpus: files, folders with a glob, gz/xz/zst, standard input, JSON Lines and Parquet
with a field), cut into documents by `TokenizeOptions.document_kind` instead of being streamed
as lines.

Every document carries its position: where it ends in its input (a byte offset in the
decompressed bytes for text and JSON Lines, a row number for Parquet). A shard records the
positions it starts and ends at; a resumed run drops every document at or before the position
its last complete shard reached (`start`), so it continues exactly where that shard stopped.

Bad records (`--on-bad-record`): a JSON line that is not JSON or lacks the field, a null or
non-string value, text that is not UTF-8, an empty document, a document larger than
`max_document_bytes`. With `fail` the first one is an InputError naming the input and the
line; with `skip` it is dropped and reported as a `Bad(position, reason)` in its batch (the
run counts it in the manifest). Blank lines are never documents, and are not bad records.

Each input is hashed (xxh3-128 of its decompressed bytes; a Parquet file's bytes on disk) as
it is read, for the manifest's record of it (training/corpus/fingerprint.py's `source_record`).
"""

from __future__ import annotations

import mmap
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Optional, Union

import xxhash

from .._core import count_byte
from ..errors import InputError
from ..training.corpus import source_record
from ..training.corpus.decompress import open_decompressed, read_error
from ..training.corpus.records import parquet_values, record_text
from ..training.corpus.sources import Source
from .options import TokenizeOptions

#: Text handed to the encoder at a time (a batch never mixes inputs), and read at a time.
BATCH_BYTES = 4 << 20
CHUNK = 4 << 20
_FAIL_ADVICE = "fix or remove it, or pass --on-bad-record skip to skip and count such records"


@dataclass(frozen=True)
class Bad:
    position: int
    reason: str


@dataclass
class Batch:
    """Documents of input `source`, in order: `ends[k]` is where document k ends."""

    source: int
    texts: list[str] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    bad: list[Bad] = field(default_factory=list)
    size: int = 0  # bytes of text
    disk: int = 0  # bytes of the input read from disk so far (for progress)


@dataclass(frozen=True)
class InputDone:
    """An input read to its end: what the manifest records of it."""

    source: int
    record: dict[str, Any]


Item = Union[Batch, "Frame", InputDone]


class _Hashed:
    """A binary stream that hashes and counts every byte read from it."""

    def __init__(self, stream: IO[bytes]):
        self.stream, self.h, self.size = stream, xxhash.xxh3_128(), 0

    def read(self, n: int) -> bytes:
        b = self.stream.read(n)
        self.h.update(b)
        self.size += len(b)
        return b


class _Cutter:
    """Collects the documents of one input into batches, applying the bad-record policy and
    dropping what a resumed run already has."""

    def __init__(self, source: int, where: str, opts: TokenizeOptions, skip_to: int, disk: Callable[[], int]):
        self.source, self.where, self.opts, self.skip_to, self.disk = source, where, opts, skip_to, disk
        self.batch = Batch(source)

    def bad(self, position: int, reason: str) -> Optional[Batch]:
        if self.opts.on_bad_record == "fail":
            raise InputError(f"{reason}; {_FAIL_ADVICE}")
        if position > self.skip_to:
            self.batch.bad.append(Bad(position, reason))
        return None

    def add(self, position: int, text: str, nbytes: int) -> Optional[Batch]:
        """A document ending at `position`; a full batch to hand on, or None."""
        if position <= self.skip_to:
            return None
        b = self.batch
        b.texts.append(text)
        b.ends.append(position)
        b.size += nbytes
        return self.flush() if b.size >= BATCH_BYTES else None

    def flush(self) -> Optional[Batch]:
        b = self.batch
        if not b.texts and not b.bad:
            return None
        b.disk = self.disk()
        self.batch = Batch(self.source)
        return b


def _decode(raw: bytes, cut: _Cutter, position: int, what: str) -> Optional[str]:
    if not raw:
        cut.bad(position, f"{what} is an empty document")
        return None
    if len(raw) > cut.opts.max_document_bytes:
        cut.bad(position, f"{what} is a document of {len(raw):,} bytes, over --max-document-bytes")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        cut.bad(position, f"{what} is not UTF-8 (at byte {e.start} of the document)")
        return None


@dataclass(frozen=True)
class Frame:
    """Whole lines of input `source` (`kind` line, paragraph or record), for the core to cut into
    documents and encode in one call (encode.py; src/documents/): no Python object per document.
    `buf`: the bytes, or a read-only view of a memory map of a plain file's pages (`_Mapped`:
    not copied into this process). `start`: where `buf` begins in the input; `line`: the number
    of its first line (1-based), or 0 when the frame starts just where the previous frame of its
    input ended: the core counts each frame's lines as it cuts it, so the one who encodes the
    frames in order numbers them (`LineBook`) and the reader does not scan them a second time.
    `skip`: documents ending at or before this position are not given (a resumed run's)."""

    source: int
    buf: Any
    kind: str
    start: int
    line: int
    skip: int
    name: str
    field: str
    limit: int
    fail: bool
    disk: int


class LineBook:
    """The number of each frame's first line, for frames given with `line` 0 (see `Frame`): kept
    from the previous frame of the same input, whose lines the core counted. Frames must come in
    their input's order (every engine takes them so)."""

    def __init__(self) -> None:
        self.after: dict[int, tuple[int, int]] = {}  # input -> (where its last frame ended, the next line)

    def first(self, frame: Frame) -> int:
        if frame.line:
            return frame.line
        end, line = self.after.get(frame.source, (-1, 0))
        if end != frame.start:
            raise RuntimeError(f"frame at {frame.start} of input {frame.source} out of order (expected {end})")
        return line

    def done(self, frame: Frame, first: int, lines: int) -> None:
        self.after[frame.source] = (frame.start + len(frame.buf), first + lines)


@dataclass(frozen=True)
class _Over:
    """A unit over the limit, read through without being held: where it ends, its first line."""

    end: int
    line: int


def _frames(stream: _Hashed, sep: bytes, limit: int) -> Iterator[Union[tuple[bytes, int, int], _Over]]:
    """(buffer, its position, the number of its first line): the stream in BATCH_BYTES reads,
    each buffer cut after its last `sep` (a line break; a blank line for paragraphs) so that it
    holds whole units, the rest carried to the next. A unit that grows over `limit` bytes before
    its `sep` is read through to it and given as an `_Over`: memory stays bounded."""
    pos, line, carry = 0, 1, b""
    extra = len(sep) - 1  # a paragraph's last line break is not part of it
    while True:
        chunk = stream.read(BATCH_BYTES)
        if not chunk:
            if carry:
                yield carry, pos, line
            return
        # The last `sep` of carry + chunk is in chunk when chunk holds one (one straddling the
        # two starts earlier): the frame is then made with one copy, not a join and a slice.
        k = chunk.rfind(sep)
        if k >= 0:
            cut = k + len(sep)
            whole = carry + memoryview(chunk)[:cut]
            yield whole, pos, line
            line += count_byte(whole, 10)
            pos += len(whole)
            carry = chunk[cut:]
        else:
            buf = carry + chunk
            k = buf.rfind(sep)
            if k < 0:
                carry = buf
            else:
                cut = k + len(sep)
                whole = buf[:cut]
                yield whole, pos, line
                line += count_byte(whole, 10)
                pos += cut
                carry = buf[cut:]
        if len(carry) <= limit + extra:
            continue
        first, used, lines = line, len(carry), count_byte(carry, 10)
        tail = carry[len(carry) - extra :]
        carry = b""
        while chunk := stream.read(BATCH_BYTES):
            look = tail + chunk
            k = look.find(sep)
            if k >= 0:
                upto = k + len(sep) - len(tail)  # in chunk
                used += upto
                lines += count_byte(chunk[:upto], 10)
                carry = chunk[upto:]
                break
            used += len(chunk)
            lines += count_byte(chunk, 10)
            tail = look[len(look) - extra :]
        pos += used
        line += lines
        yield _Over(pos, first)


class _Mapped:
    """A plain file's bytes through read-only memory maps instead of `read`: what `_frames` gives
    from a stream (the same frames, cut at the same places: after the last `sep` of each
    BATCH_BYTES read, a unit over the limit read through to its `sep` as an `_Over`), each frame
    a view of a map of its own pages, with no copy of the bytes into this process and no fresh
    pages of its own to fault in. (100 MB of JSON Lines on the 2-core VM: the reader thread's
    CPU went from 0.12 s, most of it the kernel's copy into fresh buffers, the frame's copy and
    the line count, to the hash alone.) A map is unmapped when its frame is dropped, so the maps
    alive are the frames alive (the pipeline's bound). Frames after the first are given with
    `line` 0: the core counts their lines (`LineBook`); `line_at` counts here only where the
    reader itself needs a line number (a unit over the limit, a resumed run's first frame).

    Hashing and `size` as `_Hashed`: every byte once, in order, as it is first mapped."""

    def __init__(self, fd: int, total: int):
        self.fd, self.total = fd, total
        self.h, self.size = xxhash.xxh3_128(), 0
        self.known = (0, 1)  # a (position, line number) known, at or before where the reader is

    def map(self, a: int, b: int) -> tuple[mmap.mmap, int]:
        """A read-only map of at least bytes [a, b) (b > a), and where it starts in the file."""
        a0 = a - a % mmap.ALLOCATIONGRANULARITY
        return mmap.mmap(self.fd, b - a0, access=mmap.ACCESS_READ, offset=a0), a0

    def read_to(self, mm: mmap.mmap, a0: int, end: int) -> None:
        """Hashes the bytes up to `end` not hashed yet, from `mm` (a map from `a0`, which is at or
        before the first of them, through `end`)."""
        with memoryview(mm) as v:
            self.h.update(v[self.size - a0 : end - a0])
        self.size = end

    def line_at(self, pos: int) -> int:
        """The number of the line starting at `pos`, counted on from the last one known."""
        at, line = self.known
        while at < pos:
            to = min(pos, at + BATCH_BYTES)
            mm, a0 = self.map(at, to)
            with memoryview(mm) as v:
                line += count_byte(v[at - a0 : to - a0], 10)
            mm.close()
            at = to
        self.known = (pos, line)
        return line

    def frames(self, sep: bytes, limit: int) -> Iterator[Union[tuple[Any, int, int], _Over]]:
        """(view, its position, the number of its first line or 0), or an `_Over`: `_frames`'s."""
        pos, end, line = 0, 0, 1
        extra = len(sep) - 1
        while True:
            start, end = end, min(end + BATCH_BYTES, self.total)
            if start == end:
                if pos < end:
                    mm, a0 = self.map(pos, end)
                    yield memoryview(mm)[pos - a0 : end - a0], pos, line
                return
            mm, a0 = self.map(pos, end)
            self.read_to(mm, a0, end)
            k = mm.rfind(sep, pos - a0, end - a0)
            if k >= 0:
                cut = a0 + k + len(sep)
                yield memoryview(mm)[pos - a0 : cut - a0], pos, line
                pos, line = cut, 0
            del mm  # the frame's view keeps its map; the rest is unmapped now
            if end - pos <= limit + extra:
                continue
            first = self.line_at(pos)
            look = end - extra  # a `sep` may begin in the unit's last `extra` bytes
            while True:
                if end == self.total:
                    upto = end
                    break
                start, end = end, min(end + BATCH_BYTES, self.total)
                mm, a0 = self.map(look, end)
                self.read_to(mm, a0, end)
                k = mm.find(sep, look - a0, end - a0)
                mm.close()
                if k >= 0:
                    upto = a0 + k + len(sep)
                    break
                look = end - extra
            pos = upto
            line = self.line_at(pos)
            yield _Over(pos, first)


def _plain_file(raw: Any, compression: str) -> Optional[_Mapped]:
    """A `_Mapped` for an input that is a plain (not compressed), non-empty regular file, else
    None (the input is then read). The file must not shrink while it is read (as for any
    reader of memory maps, a page cut off the end of the file would end the process)."""
    if compression:
        return None
    try:
        fd = raw.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    return _Mapped(fd, st.st_size)


def _file_document(stream: _Hashed, cut: _Cutter, name: str) -> Iterator[Batch]:
    """A whole text file as one document (`--document file`), never held past the limit."""
    limit = cut.opts.max_document_bytes
    parts: list[bytes] = []
    kept = 0
    while chunk := stream.read(CHUNK):
        if kept <= limit:
            parts.append(chunk)
            kept += len(chunk)
    if kept > limit:
        cut.bad(stream.size, f"{name} is a document of {stream.size:,} bytes, over --max-document-bytes")
        return
    raw = b"".join(parts)
    text = _decode(raw, cut, stream.size, name)
    if text is not None and (b := cut.add(stream.size, text, len(raw))) is not None:
        yield b


def _framed_documents(
    stream: Union[_Hashed, _Mapped], kind: str, cut: _Cutter, name: str, fld: str, source: int
) -> Iterator[Union[Batch, Frame]]:
    opts = cut.opts
    what = {"record": "is a record", "line": "is a document", "paragraph": "(a paragraph) is a document"}[kind]
    sep = b"\n\n" if kind == "paragraph" else b"\n"
    frames: Iterator[Union[tuple[Any, int, int], _Over]] = (
        stream.frames(sep, opts.max_document_bytes)
        if isinstance(stream, _Mapped)
        else _frames(stream, sep, opts.max_document_bytes)
    )
    follows = 0  # where the last frame given ended: a frame starting there may leave its line to the LineBook
    for got in frames:
        if isinstance(got, _Over):
            cut.bad(got.end, f"{name} line {got.line} {what} over --max-document-bytes")
            if (b := cut.flush()) is not None:
                yield b
            continue
        buf, pos, line = got
        if pos + len(buf) <= cut.skip_to:
            continue
        if not line and pos != follows:
            assert isinstance(stream, _Mapped)
            line = stream.line_at(pos)
        follows = pos + len(buf)
        yield Frame(
            source, buf, kind, pos, line, cut.skip_to, name, fld, opts.max_document_bytes,
            opts.on_bad_record == "fail", cut.disk(),
        )  # fmt: skip


def judge(frame: Frame, bad: list[tuple[int, int, str, int]], line: int) -> tuple[list[Bad], list[tuple[int, str]]]:
    """The units of a frame that the core did not make documents (`Encoder.encode_documents`):
    each a `Bad` with its reason, or, for a record the core left to Python's JSON parser that it
    reads, (line index, text) to encode after all. `line`: the number of the frame's first line.
    Fails on the first with `--on-bad-record fail`."""
    out: list[Bad] = []
    texts: list[tuple[int, str]] = []
    name, fld = frame.name, frame.field
    buf: Optional[bytes] = None
    for end, k, why, size in bad:
        n = line + k
        at = f"{name} line {n}" + (" (a paragraph)" if frame.kind == "paragraph" else "")
        if why == "python":
            buf = buf if buf is not None else bytes(frame.buf)  # rare: a copy is no cost here
            raw = buf[buf.rfind(b"\n", 0, end - 1) + 1 : end].rstrip(b"\n")
            try:
                text = record_text(raw, n, name, fld)
                text.encode("utf-8")
                texts.append((k, text))
                continue
            except InputError as e:
                reason = str(e).split("; ")[0]
            except UnicodeEncodeError:
                reason = f"{at}: field {fld!r} is not UTF-8 text (it holds a lone surrogate escape)"
        elif why == "over":
            what = "a record" if frame.kind == "record" else "a document"
            reason = f"{at} is {what} of {size:,} bytes, over --max-document-bytes"
        elif why == "line_over":
            reason = f"{at} holds a line over --max-document-bytes"
        elif why == "not_utf8":
            reason = f"{at} is not UTF-8 (at byte {size} of the document)"
        else:
            reason = f"{at}: field {fld!r} is an empty document"
        if frame.fail:
            raise InputError(f"{reason}; {_FAIL_ADVICE}")
        out.append(Bad(frame.start + end, reason))
    return out, texts


def _parquet_documents(path: str, cut: _Cutter, name: str, fld: str) -> Iterator[Batch]:
    row = 0
    for values in parquet_values(path, name, fld):
        for v in values:
            row += 1
            if v is None:
                cut.bad(row, f"{name} row {row}: {fld!r} is null")
            elif not v:
                cut.bad(row, f"{name} row {row}: {fld!r} is an empty document")
            elif len(v) > cut.opts.max_document_bytes:
                cut.bad(row, f"{name} row {row} is a document over --max-document-bytes")
            elif (b := cut.add(row, v, len(v))) is not None:
                yield b


def _iterator_documents(texts: Iterable[str], cut: _Cutter) -> Iterator[Batch]:
    for n, t in enumerate(texts, 1):
        if not isinstance(t, str):
            raise InputError(f"an iterator corpus gave a {type(t).__name__}; it must give str")
        if not t:
            cut.bad(n, f"text {n} of the iterator is an empty document")
        elif (b := cut.add(n, t, len(t))) is not None:
            yield b


def documents(sources: list[Source], opts: TokenizeOptions, start: tuple[int, int] = (0, 0)) -> Iterator[Item]:
    """Batches of documents of every source in order, and an `InputDone` after each source.
    Documents at or before `start` (source, position) are read (and hashed) but not given."""
    disk_before = 0
    for i, src in enumerate(sources):
        name = f"corpus file {src.path!r}" if src.path else src.name
        kind = opts.document_kind(src.format)
        skip_to = -1 if i > start[0] else (start[1] if i == start[0] else 1 << 62)
        try:
            yield from _one(i, src, kind, name, opts, skip_to, disk_before)
        except InputError:
            raise
        except (OSError, EOFError, ValueError) as e:
            raise read_error(src.path or src.name, e) from None
        except Exception as e:  # zstandard and lzma raise their own error types for damaged data
            if type(e).__module__.split(".")[0] in ("zstandard", "lzma", "_lzma", "gzip", "zlib"):
                raise read_error(src.path or src.name, e) from None
            raise
        disk_before += src.size_on_disk


def _one(i: int, src: Source, kind: str, name: str, opts: TokenizeOptions, skip_to: int, disk0: int) -> Iterator[Item]:
    fld = src.field or "text"
    if src.texts is not None:
        cut = _Cutter(i, name, opts, skip_to, lambda: disk0)
        yield from _iterator_documents(src.texts, cut)
        if (b := cut.flush()) is not None:
            yield b
        yield InputDone(i, source_record(src, 0, "", "", True))
        return
    if src.format == "parquet":
        assert src.path is not None
        cut = _Cutter(i, name, opts, skip_to, lambda: disk0 + src.size_on_disk)
        yield from _parquet_documents(src.path, cut, name, fld)
        if (b := cut.flush()) is not None:
            yield b
        h, size = xxhash.xxh3_128(), 0
        with open(src.path, "rb") as fh:
            while b2 := fh.read(CHUNK):
                h.update(b2)
                size += len(b2)
        yield InputDone(i, source_record(src, size, h.hexdigest(), "", True))
        return
    raw: IO[bytes]
    pos: Callable[[], int]
    if src.path is None:
        raw, pos, compression = sys.stdin.buffer, (lambda: 0), ""
    else:
        raw, pos, compression = open_decompressed(src.path)
    mapped = _plain_file(raw, compression) if kind != "file" and src.path is not None else None
    stream: Union[_Hashed, _Mapped] = mapped or _Hashed(raw)
    cut = _Cutter(i, name, opts, skip_to, (lambda: disk0 + mapped.size) if mapped else (lambda: disk0 + pos()))
    try:
        if isinstance(stream, _Hashed) and kind == "file":
            yield from _file_document(stream, cut, name)
        else:
            yield from _framed_documents(stream, kind, cut, name, fld, i)
        if (b := cut.flush()) is not None:
            yield b
    finally:
        if src.path is not None:
            raw.close()
    yield InputDone(i, source_record(src, stream.size, stream.h.hexdigest(), compression, True))
