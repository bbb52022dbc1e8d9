"""The flat layout for nanoGPT/llm.c-style loaders: `PREFIX.bin` is the ids and nothing else,
little-endian in the dataset's dtype, so `np.memmap(path, dtype=np.uint16, mode="r")` (nanoGPT's
train.py) reads it as it is. No header: nanoGPT's loader would read one as ids, and the dtype,
the counts and the tokenizer are in the manifest beside it. `PREFIX.docs` holds the document
boundaries: uint64 little-endian, documents + 1 entries, document k is ids[docs[k]:docs[k+1]].
"""

from __future__ import annotations

import os
from typing import Any

from . import ShardWriter, numpy
from .megatron import _ids


class FlatShard(ShardWriter):
    suffixes = (".bin", ".docs")

    def write_index(self, suffix: str, path: str) -> None:
        self.put(suffix, path, self.offsets())


def read(folder: str, stem: str, dtype: str) -> tuple[Any, Any]:
    np = numpy()
    docs = np.fromfile(os.path.join(folder, stem + ".docs"), dtype="<u8")
    return _ids(np, os.path.join(folder, stem + ".bin"), dtype), docs
