"""Megatron-Core's indexed dataset (megatron/core/datasets/indexed_dataset.py), as read by its
`IndexedDataset(path_prefix)`: `PREFIX.bin` holds the ids of every sequence one after another;
`PREFIX.idx` is, little-endian:

    9 bytes   b"MMIDIDX\\x00\\x00"
    u64       version, 1
    u8        dtype code (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16)
    u64       S, the number of sequences
    u64       D, the number of entries of the document index (documents + 1)
    S x i32   the length of each sequence, in ids
    S x i64   the byte offset of each sequence in the .bin
    D x i64   document index: document k is sequences [idx[k], idx[k+1])

tokreg writes one sequence per document (as Megatron's preprocess_data.py does without sentence
splitting), so the document index is 0, 1, ..., S. There is no unsigned 32-bit code: ids of a
version with more than 65,536 are written as int32 (options.py).
"""

from __future__ import annotations

import os
import struct
from typing import Any

from . import ShardWriter, numpy

MAGIC = b"MMIDIDX\x00\x00"
CODES = {"uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float64": 6, "float32": 7, "uint16": 8}


class MegatronShard(ShardWriter):
    suffixes = (".bin", ".idx")

    def write_index(self, suffix: str, path: str) -> None:
        np = self.np
        n = len(self.lengths)
        lengths = np.frombuffer(self.lengths, dtype=np.int64)
        if n and int(lengths.max()) >= 1 << 31:
            raise OverflowError("a document of 2**31 ids or more does not fit Megatron's int32 lengths")
        pointers = np.zeros(n, dtype="<i8")
        if n:
            np.cumsum(lengths[:-1] * self.itemsize, out=pointers[1:])
        self.put(
            suffix,
            path,
            MAGIC + struct.pack("<QBQQ", 1, CODES[self.dtype], n, n + 1),
            lengths.astype("<i4"),
            pointers,
            np.arange(n + 1, dtype="<i8"),
        )


def read(folder: str, stem: str, dtype: str) -> tuple[Any, Any]:
    """(ids, document offsets) of a shard: the ids memory-mapped; offsets from the .idx."""
    np = numpy()
    idx = np.memmap(os.path.join(folder, stem + ".idx"), mode="r", dtype=np.uint8)
    head = len(MAGIC) + struct.calcsize("<QBQQ")
    if bytes(idx[: len(MAGIC)]) != MAGIC:
        raise ValueError(f"{stem}.idx is not a Megatron index")
    _, code, n, _ = struct.unpack("<QBQQ", bytes(idx[len(MAGIC) : head]))
    if code != CODES[dtype]:
        raise ValueError(f"{stem}.idx has dtype code {code}, the manifest says {dtype}")
    lengths = np.frombuffer(idx, dtype="<i4", count=n, offset=head)
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    return _ids(np, os.path.join(folder, stem + ".bin"), dtype), offsets


def _ids(np: Any, path: str, dtype: str) -> Any:
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, mode="r", dtype=np.dtype(dtype).newbyteorder("<"))
