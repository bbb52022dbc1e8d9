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

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Optional, Union

import xxhash

from ..errors import InputError
from ..training.corpus import source_record
from ..training.corpus.decompress import open_decompressed, read_error
from ..training.corpus.records import parquet_values, record_text
from ..training.corpus.sources import Source
from .options import TokenizeOptions

#: Text handed to the encoder at a time (a batch never mixes inputs).
BATCH_BYTES = 4 << 20
CHUNK = 4 << 20


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


Item = Union[Batch, InputDone]


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
            raise InputError(f"{reason}; fix or remove it, or pass --on-bad-record skip to skip and count such records")
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


def _lines(stream: _Hashed, limit: int) -> Iterator[tuple[int, bytes, bool, int]]:
    """(line number, line without its break, whether it was over `limit` bytes, the position
    just after it) of a stream, read in CHUNK-sized pieces (one read and one hash update per
    piece, not per line); an over-long line is read through, never held whole, and given as b""."""
    n = 0
    pos = 0  # where the next piece starts in the stream
    carry: list[bytes] = []  # the start of a line that the pieces so far have not ended
    kept = 0  # bytes in carry
    over = False  # the line being carried is already over the limit (its bytes dropped)
    while chunk := stream.read(CHUNK):
        parts = chunk.split(b"\n")
        for k in range(len(parts) - 1):
            part = parts[k]
            pos += len(part) + 1
            n += 1
            if k == 0 and (carry or over):
                if over or kept + len(part) > limit:
                    yield n, b"", True, pos
                else:
                    yield n, b"".join(carry) + part, False, pos
                carry, kept, over = [], 0, False
            elif len(part) > limit:
                yield n, b"", True, pos
            else:
                yield n, part, False, pos
        last = parts[-1]
        pos += len(last)
        if len(parts) > 1:
            carry, kept, over = [], 0, False
        if last and not over:
            carry.append(last)
            kept += len(last)
            if kept > limit:
                carry, kept, over = [], 0, True
    if carry or over:
        yield n + 1, (b"" if over else b"".join(carry)), over, pos


def _text_documents(stream: _Hashed, kind: str, cut: _Cutter, name: str) -> Iterator[Batch]:
    limit = cut.opts.max_document_bytes
    if kind == "file":
        parts: list[bytes] = []
        kept = 0
        while chunk := stream.read(CHUNK):
            if kept <= limit:
                parts.append(chunk)
                kept += len(chunk)
        raw = b"".join(parts)
        text = _decode(raw, cut, stream.size, f"{name}") if kept <= limit else None
        if kept > limit:
            cut.bad(stream.size, f"{name} is a document of {stream.size:,} bytes, over --max-document-bytes")
        if text is not None and (b := cut.add(stream.size, text, len(raw))) is not None:
            yield b
        return
    para: list[bytes] = []
    para_start, para_over = 0, False
    for n, line, over, pos in _lines(stream, limit):
        if kind == "line":
            if over:
                cut.bad(pos, f"{name} line {n} is a document over --max-document-bytes")
            elif (
                line
                and (text := _decode(line, cut, pos, f"{name} line {n}")) is not None
                and (b := cut.add(pos, text, len(line))) is not None
            ):
                yield b
            continue
        if line or over:  # paragraph: blank lines separate documents
            if not para:
                para_start, para_over = n, False
            para.append(line)
            para_over = para_over or over
            continue
        yield from _paragraph(para, para_start, para_over, pos, cut, name)
        para = []
    yield from _paragraph(para, para_start, para_over, stream.size, cut, name)


def _paragraph(para: list[bytes], first: int, over: bool, pos: int, cut: _Cutter, name: str) -> Iterator[Batch]:
    if not para:
        return
    if over:
        cut.bad(pos, f"{name} line {first} (a paragraph) holds a line over --max-document-bytes")
        return
    raw = b"\n".join(para)
    text = _decode(raw, cut, pos, f"{name} line {first} (a paragraph)")
    if text is not None and (b := cut.add(pos, text, len(raw))) is not None:
        yield b


def _jsonl_documents(stream: _Hashed, cut: _Cutter, name: str, fld: str) -> Iterator[Batch]:
    for n, line, over, pos in _lines(stream, cut.opts.max_document_bytes):
        if over:
            cut.bad(pos, f"{name} line {n} is a record over --max-document-bytes")
            continue
        if not line.strip():
            continue
        try:
            text = record_text(line, n, name, fld)
        except InputError as e:
            cut.bad(pos, str(e).split("; ")[0])
            continue
        if not text:
            cut.bad(pos, f"{name} line {n}: field {fld!r} is an empty document")
        elif (b := cut.add(pos, text, len(text))) is not None:
            yield b


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
    stream = _Hashed(raw)
    cut = _Cutter(i, name, opts, skip_to, lambda: disk0 + pos())
    try:
        if src.format == "jsonl":
            yield from _jsonl_documents(stream, cut, name, fld)
        else:
            yield from _text_documents(stream, kind, cut, name)
        if (b := cut.flush()) is not None:
            yield b
    finally:
        if src.path is not None:
            raw.close()
    yield InputDone(i, source_record(src, stream.size, stream.h.hexdigest(), compression, True))
