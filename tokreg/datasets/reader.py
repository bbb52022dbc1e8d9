"""`open_dataset`: a dataset folder as memory-mapped numpy arrays, for a training loop.

    ds = tokreg.open_dataset("data/web", tokenizer="gpt-mini")   # a ref (pins apply), a hash, a Tokenizer
    ds.shards[0].tokens          # the ids of shard 0 (a read-only memmap, the dataset's dtype)
    ds.shards[0].offsets         # uint64: document k of that shard is tokens[offsets[k]:offsets[k+1]]
    ds.document(12345)           # one document's ids, counting across shards

The tokenizer the caller expects is required: a dataset made by another one is refused, in
one line naming both hashes, before any array is opened (`tokenizer=None` opts out in so
many words). Each file's size is checked against the manifest; `tokreg dataset verify`
checks their hashes. Datasets pinned in a project's tokreg.lock are applied in front of this
(versions/dataset_pins.py), as tokenizer pins are applied by `load`.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from ..content import PREFIX
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError, IntegrityError
from . import manifest
from .formats import layout

Expected = Union[str, Tokenizer, None]


@dataclass(frozen=True)
class Shard:
    name: str
    tokens: Any
    offsets: Any

    @property
    def documents(self) -> int:
        return len(self.offsets) - 1


class Dataset:
    """A complete dataset folder: its manifest, and its shards as arrays."""

    def __init__(self, folder: str, doc: dict[str, Any]):
        self.folder = folder
        self.manifest = doc
        self.hash: str = doc["dataset_hash"]
        self.tokenizer_hash: str = doc["tokenizer"]["hash"]
        self.tokenizer_ref: str = doc["tokenizer"]["ref"]
        self.dtype: str = doc["dtype"]
        _, read = layout(doc["options"]["format"])
        self.shards: list[Shard] = []
        for s in doc["shards"]:
            for f, info in s["files"].items():
                size = _size(os.path.join(folder, f))
                if size != info["bytes"]:
                    raise IntegrityError(
                        f"{os.path.join(folder, f)} has {size} bytes, its manifest says {info['bytes']}: it changed "
                        "after it was written; run tokreg dataset verify"
                    )
            tokens, offsets = read(folder, s["name"], self.dtype)
            self.shards.append(Shard(s["name"], tokens, offsets))
        self._firsts: list[int] = []
        n = 0
        for sh in self.shards:
            self._firsts.append(n)
            n += sh.documents
        self._documents = n

    def __len__(self) -> int:
        """The number of documents."""
        return self._documents

    @property
    def tokens(self) -> int:
        return int(self.manifest["totals"]["tokens"])

    def document(self, k: int) -> Any:
        """The ids of document `k` (0-based, across shards), a view of the memory map."""
        if not 0 <= k < self._documents:
            raise IndexError(f"document {k} out of range for {self._documents} documents")
        i = bisect.bisect_right(self._firsts, k) - 1
        sh = self.shards[i]
        j = k - self._firsts[i]
        return sh.tokens[int(sh.offsets[j]) : int(sh.offsets[j + 1])]

    def __repr__(self) -> str:
        return f"<Dataset {self.folder} {self.hash[:22]}… by {self.tokenizer_ref} {self.tokens:,} tokens>"


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        raise IntegrityError(f"{path} is missing; the dataset is damaged: run tokreg dataset verify") from None


Resolve = Callable[[str], str]


def expected_hash(tokenizer: Expected, resolve: Optional[Resolve] = None) -> Optional[tuple[str, str]]:
    """(what the caller named, the hash it expects): a Tokenizer's own hash, a full or prefix
    content hash as given, or the hash `resolve` gives for a ref (`tokreg.open_dataset` passes
    `tokreg.load`'s, so a pin in tokreg.lock counts)."""
    if tokenizer is None:
        return None
    if isinstance(tokenizer, Tokenizer):
        return tokenizer.ref, tokenizer.hash
    if not isinstance(tokenizer, str):
        raise InputError(f"tokenizer must be a ref, a content hash or a Tokenizer, not {type(tokenizer).__name__}")
    if tokenizer.startswith(PREFIX):
        return tokenizer, tokenizer
    if resolve is None:
        raise InputError(f"tokenizer {tokenizer!r} is a ref; give its content hash or a Tokenizer here")
    return tokenizer, resolve(tokenizer)


def check_tokenizer(doc: dict[str, Any], folder: str, tokenizer: Expected, resolve: Optional[Resolve] = None) -> None:
    want = expected_hash(tokenizer, resolve)
    if want is None:
        return
    named, h = want
    made = doc["tokenizer"]
    if not made["hash"].startswith(h):
        raise InputError(
            f"dataset {folder} was made by tokenizer {made['ref']} ({made['hash']}), not by "
            f"{named if named == h else f'{named} ({h})'}; "
            "tokenize the corpus again with it, or expect the tokenizer that made it"
        )


def complete_manifest(folder: str) -> dict[str, Any]:
    doc = manifest.read(folder)
    if doc is None:
        raise InputError(f"{folder!r} holds no {manifest.NAME}; give a folder written by tokreg tokenize")
    if doc["state"] != "complete":
        raise InputError(
            f"dataset {folder} is not complete (its run was interrupted or is still going); "
            "run the same tokreg tokenize command again to finish it"
        )
    return doc


def open_dataset(
    folder: Union[str, os.PathLike[str]],
    *,
    tokenizer: Expected,
    resolve: Optional[Resolve] = None,
    check: Optional[Callable[[str, dict[str, Any]], None]] = None,
) -> Dataset:
    """Opens a complete dataset folder made by the tokenizer `tokenizer` names (see the module
    docstring); InputError when another tokenizer made it. `check(folder, manifest)`, when
    given, may refuse the manifest first (a dataset pin does)."""
    where = os.fspath(folder)
    doc = complete_manifest(where)
    if check is not None:
        check(where, doc)
    check_tokenizer(doc, where, tokenizer, resolve)
    return Dataset(where, doc)
