"""`verify`: proves a dataset folder still holds what its manifest says, and that its ids are
what the tokenizer gives.

1. every file is hashed again and compared with the manifest (bytes and xxh3-128), and the
   dataset hash is computed again from them;
2. every shard is read through its layout: its documents and ids add up to the manifest's;
3. when the inputs are still where the manifest says (same sizes), a sample of documents is
   read from them again and encoded with the tokenizer (loaded by its content hash): the first
   `sample` documents of each shard must give exactly the shard's ids.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..training.corpus.sources import expand
from . import manifest
from .documents import Batch, Frame, documents
from .encode import Encoder
from .formats import layout, numpy
from .options import TokenizeOptions
from .reader import complete_manifest


@dataclass
class Report:
    folder: str
    dataset_hash: str
    files: int = 0
    problems: list[str] = field(default_factory=list)
    reencoded: int = 0  # documents read from the inputs and encoded again
    inputs_missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def options_of(doc: dict[str, Any]) -> TokenizeOptions:
    o = dict(doc["options"])
    o["shard_of"] = None if o.get("shard_of") is None else tuple(o["shard_of"])
    return TokenizeOptions(**o)


def verify(folder: str, *, sample: int = 20, load: Optional[Callable[[str], Tokenizer]] = None) -> Report:
    """Checks `folder` (see the module docstring); `load(hash)` gives the tokenizer that made it,
    for re-encoding the sample (none: the sample is not re-encoded)."""
    doc = complete_manifest(folder)
    rep = Report(folder, doc["dataset_hash"])
    for s in doc["shards"]:
        for f, info in s["files"].items():
            rep.files += 1
            p = os.path.join(folder, f)
            if not os.path.exists(p):
                rep.problems.append(f"{f} is missing")
                continue
            got = manifest.file_digest(p)
            if got != info:
                rep.problems.append(f"{f} has {got['bytes']} bytes, xxh3 {got['xxh3']}; the manifest says {info}")
    if manifest.dataset_hash(doc) != doc["dataset_hash"]:
        rep.problems.append("the manifest's dataset hash does not match its shards")
    if rep.problems:
        return rep
    _, read = layout(doc["options"]["format"])
    arrays = []
    for s in doc["shards"]:
        ids, offsets = read(folder, s["name"], doc["dtype"])
        if len(offsets) - 1 != s["documents"] or int(offsets[-1]) != s["tokens"] or len(ids) != s["tokens"]:
            rep.problems.append(
                f"{s['name']} reads as {len(offsets) - 1} documents and {len(ids)} ids, not as recorded"
            )
        arrays.append((ids, offsets))
    if rep.problems or sample <= 0:
        return rep
    paths = [i["path"] for i in doc["inputs"]]
    for i in doc["inputs"]:
        if i["path"] is None or not os.path.exists(i["path"]) or os.path.getsize(i["path"]) != _planned(doc, i):
            rep.inputs_missing.append(i["name"])
    if rep.inputs_missing or not paths or load is None:
        return rep
    _reencode(doc, arrays, paths, sample, rep, load(doc["tokenizer"]["hash"]))
    return rep


def _planned(doc: dict[str, Any], record: dict[str, Any]) -> int:
    return next((int(size) for name, size in doc["planned"] if name == record["name"]), -1)


def _reencode(
    doc: dict[str, Any], arrays: list[Any], paths: list[str], sample: int, rep: Report, tok: Tokenizer
) -> None:
    opts = options_of(doc)
    if tok.hash != doc["tokenizer"]["hash"]:
        raise InputError(f"verify needs tokenizer {doc['tokenizer']['hash']}, was given {tok.hash}")
    encoder = Encoder.of(tok, opts, doc["dtype"], 0)
    sources = expand(paths, field=opts.field)
    np = numpy()
    for s, (ids, offsets) in zip(doc["shards"], arrays):
        parts, lengths = [], []
        want = min(sample, s["documents"])
        n = 0
        for item in documents(sources, opts, (int(s["start"][0]), int(s["start"][1]))):
            if isinstance(item, (Batch, Frame)):
                enc = encoder.encode(item)
                parts.append(enc.ids)
                lengths.append(enc.lengths)
                n += len(enc.lengths)
            if n >= want:
                break
        k = min(n, want)
        got = np.concatenate(parts)[: int(np.concatenate(lengths)[:k].sum())] if parts else np.zeros(0)
        stored = ids[: int(offsets[k])]
        rep.reencoded += k
        if k < want or len(got) != len(stored) or (got != stored).any():
            rep.problems.append(f"{s['name']}: its first {want} documents do not encode to its ids again")
