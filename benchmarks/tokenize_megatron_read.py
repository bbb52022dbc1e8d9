"""Megatron-Core's own reader on tokreg's Megatron layout (`just bench tokenize`): run by a Python
that has megatron-core (and torch), not by tokreg's; `python -P tokenize_megatron_read.py DIR` (-P: this
folder's tokenize.py must not stand for the standard library's).
Opens every shard of DIR with `megatron.core.datasets.indexed_dataset.IndexedDataset`, reads
every document, and prints one JSON line: the documents, the ids, the xxh3-128 of every
document's ids in order as little-endian uint32 (compared with tokreg's flat output by the
parent), and whether every document ends with <|endoftext|> (cl100k_base's id 100257) and holds
it nowhere else, which pins the document boundaries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import xxhash
from megatron.core import __version__ as megatron_version
from megatron.core.datasets.indexed_dataset import IndexedDataset

EOD = 100257


def main() -> None:
    folder = Path(sys.argv[1])
    doc = json.loads((folder / "manifest.json").read_text())
    h = xxhash.xxh3_128()
    documents = tokens = 0
    ends = True
    for shard in doc["shards"]:
        ds = IndexedDataset(str(folder / shard["name"]))
        for k in range(len(ds)):
            ids = np.asarray(ds[k])
            h.update(ids.astype("<u4").tobytes())
            ends = ends and len(ids) > 0 and int(ids[-1]) == EOD and int((ids == EOD).sum()) == 1
            tokens += len(ids)
        documents += len(ds)
    print(
        json.dumps(
            {
                "version": megatron_version,
                "documents": documents,
                "tokens": tokens,
                "digest": h.hexdigest(),
                "eod_at_ends": ends,
            }
        )
    )


if __name__ == "__main__":
    main()
