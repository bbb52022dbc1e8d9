"""`manifest.json`: what a dataset folder holds and how it was made, written atomically (a
temporary file flushed to disk, then renamed over the old one), so a reader or a resumed run
sees the last complete state or the one before, never half of one.

    {
      "manifest": "tokreg-dataset/1",
      "state": "running" | "complete",
      "tokenizer": {"ref": "gpt-mini@1", "hash": "xxh3-128:…"},
      "options": {…every TokenizeOptions field…},
      "dtype": "uint16", "id_bound": 8000,
      "planned": [[name, size on disk], …],     # the inputs as found when the run started
      "document_kinds": {"text": "line", …},   # per input format, what a document is (resolved)
      "inputs": [{name, path, size, xxh3, format, field, compression, whole}, …],   # once read
      "shards": [{"name": "shard-00000", "files": {"shard-00000.bin": {"bytes", "xxh3"}, …},
                  "tokens", "documents", "skipped", "skipped_examples",
                  "start": [input, position], "end": [input, position]}, …],
      "totals": {"tokens", "documents", "skipped", "shards"},
      "skipped_examples": [...],              # bad records after the last shard's documents
      "tokreg_version": "0.1.0",
      "dataset_hash": "xxh3-128:…"            # once complete
    }

Positions are where a document ends in its input: a byte offset in the decompressed bytes,
or a Parquet row number (documents.py). A shard covers (start, end].

The dataset hash is xxh3-128 over the canonical JSON of the tokenizer's hash, the format, the
dtype and, per shard in order, each file's name and xxh3-128: two datasets with the same hash
hold the same ids made by the same tokenizer, whatever machine or thread count made them.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import xxhash

from ..content import PREFIX, canonical_json
from ..errors import InputError

NAME = "manifest.json"
LABEL = "tokreg-dataset/1"
#: Bad records kept as examples per shard (every one is counted).
EXAMPLES = 5


def path(folder: str) -> str:
    return os.path.join(folder, NAME)


def read(folder: str) -> Optional[dict[str, Any]]:
    """The manifest of `folder`, or None when there is none. InputError if it is not ours."""
    try:
        with open(path(folder), "rb") as fh:
            doc = json.loads(fh.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise InputError(
            f"{path(folder)} cannot be read as a dataset manifest ({e}); is it a tokreg dataset?"
        ) from None
    if not isinstance(doc, dict) or doc.get("manifest") != LABEL:
        raise InputError(f"{path(folder)} is not a tokreg dataset manifest ({LABEL}); give a tokreg dataset folder")
    return doc


def write(folder: str, doc: dict[str, Any]) -> None:
    """Replaces the manifest atomically and durably."""
    tmp = os.path.join(folder, f".tmp-{NAME}")
    data = json.dumps(doc, indent=1, ensure_ascii=False).encode()
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path(folder))
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename itself is still atomic
    finally:
        os.close(fd)


def dataset_hash(doc: dict[str, Any]) -> str:
    shards = [[s["name"], [[f, s["files"][f]["xxh3"]] for f in sorted(s["files"])]] for s in doc["shards"]]
    key = {
        "tokenizer": doc["tokenizer"]["hash"],
        "format": doc["options"]["format"],
        "dtype": doc["dtype"],
        "shards": shards,
    }
    return PREFIX + xxhash.xxh3_128_hexdigest(canonical_json(key).encode())


def file_digest(file: str) -> dict[str, Any]:
    """{"bytes", "xxh3"} of a file on disk (a shard's, as recorded and as verified)."""
    h = xxhash.xxh3_128()
    n = 0
    with open(file, "rb") as fh:
        while b := fh.read(8 << 20):
            h.update(b)
            n += len(b)
    return {"bytes": n, "xxh3": h.hexdigest()}
