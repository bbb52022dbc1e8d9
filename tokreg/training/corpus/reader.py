"""The reading loop: every source, in order, in chunks, into a counter's `feed` (one
`end_input` per source), while a second thread reads, decompresses and hashes the next chunk.

`sample_bytes` stops reading after the line (JSON Lines, Parquet: the batch of records) during
which that many bytes of text were reached; the run records it, and the records say which
source was read only in part.
"""

from __future__ import annotations

import codecs
import queue
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Callable, Optional, Protocol

import xxhash

from ...errors import InputError
from .decompress import open_decompressed, read_error
from .fingerprint import fingerprint, source_record
from .records import jsonl_chunks, parquet_chunks
from .sources import Source

#: Bytes read at a time: the counter splits each chunk among its threads. Up to three chunks are
#: alive at once (the reading thread's, one queued, the counter's; `QUEUED`): at 16 MB and five
#: alive they were 80 MB, most of counting's peak on a large corpus (100 MB of kernel source: 131
#: -> 75 MB at 4 MB, the same CPU time and the same counts).
CHUNK = 4 << 20
#: Chunks read ahead of the counter. Reading a chunk (from the page cache) and hashing it take
#: about a millisecond, counting it tens: one queued keeps the counter fed, and each more held
#: 4 MB at counting's peak (kernel.txt 20 MB, `tokreg train`: three queued peaked at 45 MB).
QUEUED = 1
# phase, done, total -> None
Progress = Callable[[str, int, int], None]


class Feed(Protocol):
    def feed(self, data: bytes) -> None: ...
    def end_input(self) -> None: ...


@dataclass
class ReadResult:
    records: list[dict[str, Any]]
    fingerprint: str
    text_bytes: int  # bytes of text fed to the counter
    sampled: bool  # whether --sample-bytes stopped reading early

    @property
    def reproducible(self) -> bool:
        return all(r["path"] is not None for r in self.records)


def _stream_chunks(stream: IO[bytes]) -> Iterator[tuple[bytes, bytes]]:
    while True:
        b = stream.read(CHUNK)
        if not b:
            return
        yield b, b


def _iterator_chunks(texts: Any) -> Iterator[tuple[bytes, bytes]]:
    out: list[str] = []
    size = 0
    for t in texts:
        if not isinstance(t, str):
            raise InputError(f"an iterator corpus gave a {type(t).__name__}; it must give str")
        t = t if t.endswith("\n") else t + "\n"
        out.append(t)
        size += len(t)
        if size >= CHUNK // 4:
            b = "".join(out).encode("utf-8", "surrogatepass")
            yield b, b
            out, size = [], 0
    if out:
        b = "".join(out).encode("utf-8", "surrogatepass")
        yield b, b


def _file_chunks(src: Source, where: str, state: dict[str, Any]) -> Iterator[tuple[bytes, bytes]]:
    assert src.path is not None
    if src.format == "parquet":
        with open(src.path, "rb") as fh:
            yield from ((b, b"") for b in iter(lambda: fh.read(CHUNK), b""))
        state["pos"] = lambda: src.size_on_disk
        yield from ((b"", t) for t in parquet_chunks(src.path, where, src.field or "text"))
        return
    stream, pos, kind = open_decompressed(src.path)
    state["pos"], state["compression"] = pos, kind
    with stream:
        if src.format == "jsonl":
            sink: list[bytes] = []
            for text in jsonl_chunks(stream, where, src.field or "text", sink):
                raw = b"".join(sink)
                sink.clear()
                yield raw, text
            if sink:
                yield b"".join(sink), b""
        else:
            yield from _stream_chunks(stream)


def _chunks(src: Source, state: dict[str, Any]) -> Iterator[tuple[bytes, bytes]]:
    """(raw bytes for the fingerprint, text bytes for the counter) of one source."""
    where = f"corpus file {src.path!r}" if src.path else src.name
    try:
        if src.texts is not None:
            yield from _iterator_chunks(src.texts)
        elif src.path is None:
            yield from _stream_chunks(sys.stdin.buffer)
        else:
            yield from _file_chunks(src, where, state)
    except InputError:
        raise
    except (OSError, EOFError, ValueError, UnicodeError) as e:
        raise read_error(src.path or src.name, e) from None
    except Exception as e:  # zstandard and lzma raise their own error types for damaged data
        if type(e).__module__.split(".")[0] in ("zstandard", "lzma", "_lzma", "gzip", "zlib"):
            raise read_error(src.path or src.name, e) from None
        raise


_END = object()


def read_into(
    counter: Feed,
    sources: Sequence[Source],
    *,
    progress: Optional[Progress] = None,
    sample_bytes: int = 0,
    require_utf8: bool = False,
    utf8_hint: str = "",
) -> ReadResult:
    """Feeds every source to `counter`; returns what the run records of them. Raises
    InputError naming the source that cannot be read, is not UTF-8 (with `require_utf8`,
    adding `utf8_hint`), or when the whole corpus is empty."""
    q: queue.Queue[Any] = queue.Queue(maxsize=QUEUED)
    stop = threading.Event()
    disk_total = sum(s.size_on_disk for s in sources)
    states: list[dict[str, Any]] = [{"pos": lambda: 0, "compression": ""} for _ in sources]

    def produce() -> None:
        try:
            for i, src in enumerate(sources):
                h = xxhash.xxh3_128()
                size = 0
                dec = codecs.getincrementaldecoder("utf-8")() if require_utf8 else None
                for raw, text in _chunks(src, states[i]):
                    if stop.is_set():
                        return
                    if dec is not None and text:
                        try:
                            dec.decode(text)
                        except UnicodeDecodeError as e:
                            where = f"corpus file {src.path!r}" if src.path else src.name
                            raise InputError(
                                f"{where} is not UTF-8 at byte offset {size + e.start}; {utf8_hint}"
                            ) from None
                    pos = int(states[i]["pos"]())  # read here: the file is open only in this thread
                    q.put((i, raw, text, size, h.copy(), pos))  # the hash before this chunk, for a sample cut
                    h.update(raw)
                    size += len(raw)
                q.put((i, None, None, size, h, 0))
            q.put(_END)
        except BaseException as e:
            q.put(e)

    t = threading.Thread(target=produce, name="tokreg-reader", daemon=True)
    t.start()
    records: list[dict[str, Any]] = []
    fed = 0
    seen_text = False
    sampled = False
    disk_done = 0
    try:
        while True:
            item = q.get()
            if item is _END:
                break
            if isinstance(item, BaseException):
                raise item
            i, raw, text, size, h, pos = item  # size and h: of this source before this chunk (at its end: all)
            src = sources[i]
            if raw is None:
                counter.end_input()
                records.append(source_record(src, size, h.hexdigest(), states[i]["compression"], True))
                disk_done += src.size_on_disk
                continue
            whole = True
            if sample_bytes and fed + len(text) >= sample_bytes:
                cut = text.find(b"\n", max(0, sample_bytes - fed - 1))
                text = text if cut < 0 else text[: cut + 1]
                whole = False
            if not seen_text and text and not text.isspace():
                seen_text = True
            counter.feed(text)
            fed += len(text)
            if progress is not None:
                progress("read", disk_done + pos, disk_total)
            if not whole:
                counter.end_input()
                # The record covers the bytes read: for text exactly those counted; for record
                # formats the raw bytes of the records up to this batch.
                part = raw[: len(text)] if src.format == "text" else raw
                h.update(part)
                records.append(source_record(src, size + len(part), h.hexdigest(), states[i]["compression"], False))
                sampled = True
                break
    finally:
        stop.set()
        while t.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                t.join(0.05)
    if not seen_text:
        names = ", ".join(s.path or s.name for s in sources[:5])
        raise InputError(f"the corpus is empty ({names}); give files that contain text")
    return ReadResult(records=records, fingerprint=fingerprint(records), text_bytes=fed, sampled=sampled)


def prefix_digest(path: str, size: Optional[int]) -> tuple[int, str]:
    """(bytes read, xxh3-128) of a file's decompressed bytes: the first `size` of them, or all."""
    h = xxhash.xxh3_128()
    n = 0
    try:
        stream, _, _ = open_decompressed(path)
        with stream:
            while size is None or n < size:
                b = stream.read(CHUNK if size is None else min(CHUNK, size - n))
                if not b:
                    break
                h.update(b)
                n += len(b)
    except InputError:
        raise
    except Exception as e:
        raise read_error(path, e) from None
    return n, h.hexdigest()
