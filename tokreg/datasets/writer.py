"""`tokenize`: a corpus and a tokenizer into a dataset folder, resumable at any moment.

Three stages overlap, joined by bounded queues (`DEPTH` items each):

    reader thread   inputs -> ~4 MiB frames of whole lines (decompress, hash; documents.py;
                    a plain file's frames are views of memory maps of its pages), or
                    batches of texts (Parquet rows, whole files)
    calling thread  frames -> documents -> ids through the engine (engines.py): here, one call
                    of the core that cuts, encodes and packs a frame in 64 KiB pieces on every
                    thread (GIL released; encode.py, src/documents/frame.rs), or a Ray
                    cluster's CPUs, in order
    writer thread   ids -> shard files (each file's digest kept as it is written; the ids
                    past the page cache where the system allows: formats/direct.py), renamed
                    into place, then the manifest (formats/)

Memory is bounded, whatever the corpus size: at most 2 * DEPTH + 3 batches are alive (in the
two queues, and one in each stage), each about 4 MiB of text (more only when one document is
larger, up to --max-document-bytes) with its ids at 2-4 bytes per id (in a buffer reused from
frame to frame: encode.Buffers, one per frame in flight) and the encoder's own copy, plus 8
bytes per document of the shard being written (its index) and the 8 MiB staging buffer of its
direct writes (formats/direct.py). With 4 MiB batches that is about 11 x 4 MiB x 3, some
140 MiB, plus the tokenizer; `memory_bound` gives the worst case, every batch holding a
document of the largest size allowed; a Ray engine adds its window of batches in flight
(engines.py). Measured (docs/benchmarks.md): 109-127 MB on 100 MB and 126 MB on 1 GB of JSON
Lines of kernel sources in one shard.

Shards: a shard is closed after the document with which it reaches the shard size, so the
shard boundaries, and therefore every byte written, depend only on the documents and the
options: never on the thread count, the batch size or the engine. A resumed run (resume.py) re-reads the
inputs (hashing them again), drops the documents its complete shards hold, and goes on.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .. import package_version
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..training.corpus.sources import Input, Source, expand
from . import manifest, resume
from .documents import BATCH_BYTES, Bad, Batch, Frame, InputDone, documents
from .encode import Encoded, Encoder
from .engines import Engine, engine_for
from .formats import ShardWriter, layout
from .formats.direct import STAGE
from .options import TokenizeOptions, dtype_for, shard_limit

DEPTH = 4
# phase, done, total, detail -> None (see progress.py)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Summary:
    """What a run did: the folder, its manifest, and this run's own figures."""

    folder: str
    manifest: dict[str, Any]
    resumed: bool
    already_complete: bool
    seconds: float
    text_bytes: int  # bytes of document text encoded by this run
    tokens_written: int  # ids written by this run


def memory_bound(opts: TokenizeOptions) -> int:
    """Bytes the pipeline's buffers can hold at once (not counting the tokenizer itself): the
    batches, and the open shard's staging buffer for direct writes (formats/direct.py)."""
    batch = BATCH_BYTES + opts.max_document_bytes
    return (2 * DEPTH + 3) * batch * 3 + STAGE


def part_of(sources: list[Source], shard_of: Optional[tuple[int, int]]) -> list[Source]:
    """Part i of n: the i-th of n consecutive runs of the inputs (in the documented order; the
    parts as even as whole inputs allow), so the parts joined in order keep the inputs' order."""
    if shard_of is None:
        return sources
    i, n = shard_of
    k = len(sources)
    mine = sources[i * k // n : (i + 1) * k // n]
    if not mine:
        raise InputError(f"--shard-of {i}/{n}: there are only {len(sources)} inputs, none is part {i}")
    return mine


class _Shards:
    """The writer thread's state: the open shard, and the manifest it updates."""

    def __init__(self, folder: str, doc: dict[str, Any], opts: TokenizeOptions, start: tuple[int, int]):
        self.folder, self.doc, self.opts = folder, doc, opts
        self.cls, _ = layout(opts.format)
        self.np_dtype = doc["dtype"]
        itemsize = 2 if self.np_dtype == "uint16" else 4
        self.limit = shard_limit(opts, itemsize)
        self.start = start
        self.open: Optional[ShardWriter] = None
        self.bad: list[Bad] = []
        self.bad_count = 0
        self.inputs: list[dict[str, Any]] = []
        self.written = 0
        self.prefix = "shard-" if opts.shard_of is None else f"part{opts.shard_of[0]:05d}-shard-"

    def _shard(self) -> ShardWriter:
        if self.open is None:
            stem = f"{self.prefix}{len(self.doc['shards']):05d}"
            self.open = self.cls(self.folder, stem, self.np_dtype)
        return self.open

    def add(self, source: int, ends: list[int], ids: Any, lengths: Any, bad: list[Bad]) -> None:
        np = self._shard().np
        pending = list(bad)
        cum = np.cumsum(lengths)
        done_docs, done_ids = 0, 0
        while done_docs < len(ends):
            sh = self._shard()
            room = self.limit - sh.tokens
            k = int(np.searchsorted(cum, done_ids + room, side="left"))  # the document reaching the limit
            last = min(k, len(ends) - 1)
            upto = int(cum[last])
            sh.write(ids[done_ids:upto], lengths[done_docs : last + 1])
            end = int(ends[last])
            mine = [b for b in pending if b.position <= end]
            pending = [b for b in pending if b.position > end]
            self.bad.extend(mine)
            self.bad_count += len(mine)
            self.written += upto - done_ids
            done_docs, done_ids = last + 1, upto
            if k < len(ends):
                self.close((source, end))
        self.bad.extend(pending)
        self.bad_count += len(pending)

    def close(self, end: tuple[int, int]) -> None:
        sh = self.open
        assert sh is not None
        files = sh.finish()
        self.open = None
        entry = {
            "name": sh.stem,
            "files": files,
            "tokens": sh.tokens,
            "documents": len(sh.lengths),
            "skipped": self.bad_count,
            "skipped_examples": [b.reason for b in self.bad[: manifest.EXAMPLES]],
            "start": list(self.start),
            "end": list(end),
        }
        self.bad, self.bad_count = [], 0
        self.start = end
        self.doc["shards"].append(entry)
        manifest.write(self.folder, self.doc)

    def finish(self, last_end: tuple[int, int]) -> None:
        if self.open is not None and len(self.open.lengths):
            self.close(last_end)
        elif self.open is not None:
            self.open.abandon()
            os.remove(self.open.temp(self.open.suffixes[0]))
            self.open = None


def _fresh(tok: Tokenizer, ref: str, opts: TokenizeOptions, dtype: str, sources: Sequence[Source]) -> dict[str, Any]:
    return {
        "manifest": manifest.LABEL,
        "state": "running",
        "tokenizer": {"ref": ref, "hash": tok.hash},
        "options": opts.recorded(),
        "dtype": dtype,
        "id_bound": id_bound(tok),
        "planned": [[s.name, s.size_on_disk] for s in sources],
        "document_kinds": {f: opts.document_kind(f) for f in sorted({s.format for s in sources})},
        "inputs": [],
        "shards": [],
        "tokreg_version": package_version.__version__,
    }


def id_bound(tok: Tokenizer) -> int:
    """One more than the largest id the tokenizer can give (specials included)."""
    return max([tok._enc.id_bound, *(i + 1 for i in tok.special_tokens.values())])


def tokenize(
    tok: Tokenizer,
    inputs: Sequence[Input],
    folder: str,
    opts: Optional[TokenizeOptions] = None,
    *,
    ref: Optional[str] = None,
    threads: int = 0,
    progress: Optional[Callable[..., None]] = None,
    engine: str = "local",
    address: Optional[str] = None,
) -> Summary:
    """Encodes `inputs` with `tok` into shards in `folder` (see the module docstring); the
    same call again after an interruption continues where it stopped. A write that fails (a
    full disk, a folder that cannot be written) is one InputError; the folder stays resumable."""
    try:
        return _tokenize(
            tok, inputs, folder, opts, ref=ref, threads=threads, progress=progress, engine=engine, address=address
        )
    except OSError as e:  # the inputs' read errors are InputErrors already: this is the folder's
        where = getattr(e, "filename", None) or folder
        raise InputError(
            f"cannot write the dataset at {where}: {e.strerror or e}; fix that (free space, permissions) "
            "and run the same command again: it resumes after the last complete shard"
        ) from None


def _tokenize(
    tok: Tokenizer,
    inputs: Sequence[Input],
    folder: str,
    opts: Optional[TokenizeOptions],
    *,
    ref: Optional[str],
    threads: int,
    progress: Optional[Callable[..., None]],
    engine: str,
    address: Optional[str],
) -> Summary:
    t0 = time.monotonic()
    opts = opts or TokenizeOptions()
    folder = os.path.abspath(os.fspath(folder))
    sources = part_of(expand(inputs, glob=opts.glob, field=opts.field), opts.shard_of)
    for s in sources:
        opts.document_kind(s.format)  # refuse a mismatch before writing
    whole = opts.shard_of is None  # a part of a split run may hold no document; a whole run may not
    if whole and all(s.path is not None and s.size_on_disk == 0 for s in sources):
        raise InputError(f"nothing to tokenize: {_names(sources)} empty; give inputs that hold text")
    existed = os.path.isdir(folder)
    dtype = dtype_for(id_bound(tok), opts.format)
    encoder = Encoder.of(tok, opts, dtype, threads)
    # The engine connects first: a cluster that cannot be reached leaves the folder as it was.
    eng = engine_for(engine, encoder, address)
    try:
        state = resume.prepare(folder, _fresh(tok, ref or tok.ref, opts, dtype, sources))
        if state.complete:
            return Summary(folder, state.doc, True, True, time.monotonic() - t0, 0, 0)
        doc = state.doc
        shards = _Shards(folder, doc, opts, state.start)
        stats = _run(sources, opts, state.start, encoder, eng, shards, progress)
    finally:
        eng.close()
    shards.finish(stats["last_end"])
    if whole and not doc["shards"]:
        _discard(folder, existed)
        skipped = shards.bad_count
        why = (
            f"all {skipped} records were skipped as bad (first: {shards.bad[0].reason})"
            if skipped
            else f"no document in {'it' if len(sources) == 1 else 'them'} (only blank lines or empty records)"
        )
        raise InputError(
            f"nothing to tokenize in {_names(sources, verb=False)}: {why}; give inputs that hold text "
            f"(no dataset was kept at {folder})"
        )
    doc["inputs"] = shards.inputs
    doc["totals"] = {
        "shards": len(doc["shards"]),
        "tokens": sum(s["tokens"] for s in doc["shards"]),
        "documents": sum(s["documents"] for s in doc["shards"]),
        "skipped": sum(s["skipped"] for s in doc["shards"]) + shards.bad_count,
    }
    doc["skipped_examples"] = [b.reason for b in shards.bad[: manifest.EXAMPLES]]
    doc["state"] = "complete"
    doc["dataset_hash"] = manifest.dataset_hash(doc)
    manifest.write(folder, doc)
    return Summary(folder, doc, state.resumed, False, time.monotonic() - t0, stats["text"], shards.written)


def _names(sources: Sequence[Source], verb: bool = True) -> str:
    """The inputs as a message names them: the first three, and how many more."""
    shown = ", ".join(repr(s.name) for s in sources[:3])
    more = f" and {len(sources) - 3} more" if len(sources) > 3 else ""
    if not verb:
        return shown + more
    return shown + more + (" is" if len(sources) == 1 else " are all")


def _discard(folder: str, existed: bool) -> None:
    """Removes what a run that made no shard left in `folder`: its manifest (no shard names a
    document, so nothing else of a dataset is there) and the folder itself when this run made it."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(folder, manifest.NAME))
    if not existed and not os.listdir(folder):
        os.rmdir(folder)


_END = object()


@dataclass(frozen=True)
class _Ready:
    ids: Encoded


def _run(
    sources: list[Source],
    opts: TokenizeOptions,
    start: tuple[int, int],
    encoder: Encoder,
    engine: Engine,
    shards: _Shards,
    progress: Optional[Callable[..., None]],
) -> dict[str, Any]:
    """The three stages; the first error of any stage is raised here, the others stopped."""
    to_encode: queue.Queue[Any] = queue.Queue(maxsize=DEPTH)
    to_write: queue.Queue[Any] = queue.Queue(maxsize=DEPTH)
    stop = threading.Event()
    disk_total = sum(s.size_on_disk for s in sources)
    stats: dict[str, Any] = {"text": 0, "docs": 0, "last_end": start, "error": None}

    def put(q: queue.Queue[Any], item: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for item in documents(sources, opts, start):
                if not put(to_encode, item):
                    return
            put(to_encode, _END)
        except BaseException as e:
            put(to_encode, e)

    def write() -> None:
        try:
            while not stop.is_set():
                try:
                    item = to_write.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _END:
                    return
                if isinstance(item, InputDone):
                    shards.inputs.append(item.record)
                    continue
                batch, enc = item
                shards.add(batch.source, enc.ends, enc.ids, enc.lengths, enc.bad)
                stats["text"] += enc.text
                stats["docs"] += len(enc.lengths)
                if len(enc.ends) or enc.bad:
                    last = max([*(int(e) for e in enc.ends[-1:]), *(b.position for b in enc.bad[-1:])])
                    stats["last_end"] = (batch.source, last)
                ids_buffer = enc.buffer
                del item, enc  # the last views of the ids: their buffer can take another frame's
                encoder.buffers.give(ids_buffer)
                if progress is not None:
                    progress("tokenize", batch.disk, disk_total, documents=stats["docs"], tokens=shards.written)
        except BaseException as e:
            stats["error"] = e
            stop.set()

    reader = threading.Thread(target=read, name="tokreg-dataset-reader", daemon=True)
    writer = threading.Thread(target=write, name="tokreg-dataset-writer", daemon=True)
    reader.start()
    writer.start()
    # Every item read, in order, with the engine's handle of its ids (None for an InputDone, the
    # ids themselves for a batch of bad records only): results are taken oldest first, so the
    # writer sees the batches in the order they were read, whatever the engine.
    pending: deque[tuple[Any, Any]] = deque()

    def hand_on(keep: int) -> bool:
        while len(pending) > keep:
            item, handle = pending.popleft()
            if handle is None:
                out = item
            elif isinstance(handle, _Ready):
                out = (item, handle.ids)
            else:
                out = (item, engine.result(handle))
            if not put(to_write, out):
                return False
        return True

    try:
        while True:
            item = to_encode.get()
            if isinstance(item, BaseException):
                raise item
            if stats["error"] is not None:
                raise stats["error"]
            if item is _END:
                break
            if isinstance(item, Frame) or (isinstance(item, Batch) and item.texts):
                pending.append((item, engine.submit(item)))
            elif isinstance(item, Batch):  # bad records only
                pending.append((item, _Ready(encoder.encode(item))))
            else:
                pending.append((item, None))
            if not hand_on(engine.window - 1):
                break
        if hand_on(0):
            put(to_write, _END)
        writer.join()
        if stats["error"] is not None:
            raise stats["error"]
    finally:
        stop.set()
        reader.join(timeout=5)
        writer.join(timeout=5)
    return stats
