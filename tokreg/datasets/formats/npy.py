"""The `.npy` layout (dolma-like): `PREFIX.npy`, a one-dimensional array of the ids, and
`PREFIX.docs.npy`, uint64 document boundaries (documents + 1 entries), both read by
`numpy.load(path, mmap_mode="r")`. The ids file is written as documents come, so its header
(format 1.0) is reserved at a fixed 128 bytes and filled in with the final shape at the end.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from . import ShardWriter, numpy

HEADER = 128


def header(descr: str, count: int) -> bytes:
    """A .npy 1.0 header of exactly HEADER bytes for a 1-d little-endian array."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({count},), }}"
    body = text.encode("latin1").ljust(HEADER - 10 - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


class NpyShard(ShardWriter):
    suffixes = (".npy", ".docs.npy")
    header_size = HEADER

    def write_header(self) -> None:
        self.fh.seek(0)
        self.fh.write(header(self.np.dtype(self.dtype).newbyteorder("<").str, self.tokens))
        self.fh.seek(0, os.SEEK_END)

    def write_index(self, suffix: str, path: str) -> None:
        offsets = self.offsets()
        self.put(suffix, path, header("<u8", len(offsets)), offsets)


def read(folder: str, stem: str, dtype: str) -> tuple[Any, Any]:
    np = numpy()
    ids = np.load(os.path.join(folder, stem + ".npy"), mmap_mode="r")
    docs = np.load(os.path.join(folder, stem + ".docs.npy"))
    return ids, docs
