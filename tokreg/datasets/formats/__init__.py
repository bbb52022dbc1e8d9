"""The shard layouts a dataset can be written in, one module each, behind one interface: a
`ShardWriter` takes the ids of whole documents (already in the dataset's dtype, little-endian)
and at `finish` writes its index; `read` gives (ids, document offsets) of a written shard as
numpy arrays over memory maps. Every file is written under a temporary name in the dataset's
folder and renamed only once it is complete and flushed to disk (writer.py decides when).

Each file's digest (its size and xxh3-128, as the manifest records it) is computed from the
bytes as they are written, not by reading the file back: a shard of 1 GB of text is some
300 MB of ids, which a second read would cost again. The one exception is a layout whose ids
file starts with a header filled in at the end (`.npy`: the header holds the final count, and
xxh3 cannot take bytes out of order): that file is read back once for its digest.

- megatron.py: `.bin` + `.idx`, Megatron-Core's indexed dataset (one sequence per document);
- flat.py: `.bin`, the bare id stream nanoGPT and llm.c-style loaders memory-map, + `.docs`;
- npy.py: `.npy` ids + `.docs.npy` boundaries (dolma-like).
"""

from __future__ import annotations

import os
from array import array
from typing import Any, Callable

import xxhash

from ...errors import InputError
from ..manifest import file_digest
from .direct import IdsFile

#: Files of a shard being written start with this, and are removed when a run resumes.
TEMP_PREFIX = ".tmp-"
#: Bytes of ids after which the writer asks the kernel to start writing them to disk (see
#: `ShardWriter.write`).
WRITE_AHEAD = 32 << 20


def numpy() -> Any:
    """The numpy module, or one line saying how to get it (the datasets wing needs it)."""
    try:
        import numpy as np  # here, not at the top: numpy is the datasets extra's, not tokreg's
    except ImportError:
        raise InputError("token datasets need numpy: pip install 'tokreg[datasets]' (or pip install numpy)") from None
    return np


def fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ShardWriter:
    """The ids file of one shard, written as documents come, plus the document lengths its
    index needs (8 bytes per document: bounded by the shard's size). `suffixes`: the files
    of a shard, the ids file first."""

    suffixes: tuple[str, ...] = ()
    header_size = 0

    def __init__(self, folder: str, stem: str, dtype: str):
        self.folder, self.stem, self.dtype = folder, stem, dtype
        self.np = numpy()
        self.itemsize = self.np.dtype(dtype).itemsize
        self.lengths = array("q")
        self.tokens = 0
        # A layout with a header writes it last (a seek back) and reads its file back for the
        # digest: it goes through the page cache; the others past it where possible (direct.py).
        path = self.temp(self.suffixes[0])
        self.fh: Any = open(path, "wb") if self.header_size else IdsFile(path)  # noqa: SIM115 (closed in finish)
        self.fh.write(b"\0" * self.header_size)
        self.hash = xxhash.xxh3_128()  # of the ids file as written (its header aside)
        self.started = 0  # bytes of the ids file whose writing to disk has been started
        #: file name -> {"bytes", "xxh3"}, as manifest.file_digest gives it
        self.digests: dict[str, dict[str, Any]] = {}

    def temp(self, suffix: str) -> str:
        return os.path.join(self.folder, f"{TEMP_PREFIX}{self.stem}{suffix}")

    def final(self, suffix: str) -> str:
        return os.path.join(self.folder, f"{self.stem}{suffix}")

    def write(self, ids: Any, lengths: Any) -> None:
        """`ids`: a little-endian numpy array of the dtype; `lengths`: ids per document."""
        data = memoryview(ids).cast("B")
        self.fh.write(data)
        self.hash.update(data)
        self.lengths.frombytes(self.np.ascontiguousarray(lengths, dtype=self.np.int64).tobytes())
        self.tokens += len(ids)
        self._write_ahead()

    def _write_ahead(self) -> None:
        """Starts the disk write of the ids written since the last call, every WRITE_AHEAD bytes,
        without waiting for it (Linux starts the writeback of dirty pages on POSIX_FADV_DONTNEED):
        the fsync in `finish` then has only the last part left to wait for, instead of the whole
        shard at the end of the run, when nothing else overlaps it."""
        end = self.header_size + self.tokens * self.itemsize
        if end - self.started < WRITE_AHEAD or getattr(self.fh, "direct", False) or not hasattr(os, "posix_fadvise"):
            return
        self.fh.flush()
        os.posix_fadvise(self.fh.fileno(), self.started, end - self.started, os.POSIX_FADV_DONTNEED)
        self.started = end

    def finish(self) -> dict[str, dict[str, Any]]:
        """Writes the index, flushes everything to disk and renames the files to their final
        names (the ids file last); returns each file's digest by its name."""
        self.write_header()
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        ids = f"{self.stem}{self.suffixes[0]}"
        if self.header_size:  # its header was written last (see the module docstring)
            self.digests[ids] = file_digest(self.temp(self.suffixes[0]))
        else:
            self.digests[ids] = {"bytes": self.tokens * self.itemsize, "xxh3": self.hash.hexdigest()}
        for suffix in self.suffixes[1:]:
            self.write_index(suffix, self.temp(suffix))
            fsync_file(self.temp(suffix))
        for suffix in (*self.suffixes[1:], self.suffixes[0]):
            os.replace(self.temp(suffix), self.final(suffix))
        return {f"{self.stem}{s}": self.digests[f"{self.stem}{s}"] for s in self.suffixes}

    def abandon(self) -> None:
        self.fh.close()

    def write_header(self) -> None:
        """Layouts whose ids file starts with a header write it here (its size is reserved)."""

    def write_index(self, suffix: str, path: str) -> None:
        """Writes the index file `suffix` at `path` (through `put`)."""
        raise NotImplementedError

    def put(self, suffix: str, path: str, *parts: Any) -> None:
        """Writes `parts` (bytes-like) one after another as the file at `path`, keeping its digest."""
        h, size = xxhash.xxh3_128(), 0
        with open(path, "wb") as fh:
            for part in parts:
                data = memoryview(part).cast("B")
                fh.write(data)
                h.update(data)
                size += len(data)
        self.digests[f"{self.stem}{suffix}"] = {"bytes": size, "xxh3": h.hexdigest()}

    def offsets(self) -> Any:
        """uint64 little-endian: where each document starts, and the total (documents + 1)."""
        np = self.np
        out = np.zeros(len(self.lengths) + 1, dtype="<u8")
        np.cumsum(np.frombuffer(self.lengths, dtype=np.int64), out=out[1:])
        return out


Reader = Callable[[str, str, str], tuple[Any, Any]]


def layout(fmt: str) -> tuple[type[ShardWriter], Reader]:
    """The writer class and reader of a format named in options.FORMATS."""
    from . import flat, megatron, npy  # here: the layouts import this module's ShardWriter

    return {
        "megatron": (megatron.MegatronShard, megatron.read),
        "bin": (flat.FlatShard, flat.read),
        "npy": (npy.NpyShard, npy.read),
    }[fmt]
