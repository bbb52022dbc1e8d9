"""`merge`: the parts written by `tokreg tokenize --shard-of I/N` (N independent jobs, each
with its own folder) joined into one dataset folder with one manifest.

Every part must be complete, made by the same tokenizer with the same options (but `shard_of`),
and the N parts 0..N-1 must all be there, once each. The merged folder holds the parts' shards
in part order, renumbered (`shard-00000`, ...), hard-linked when the file system allows (else
copied) under temporary names and renamed; the manifest is written last, so an interrupted
merge leaves a folder without a manifest, which the same command clears and redoes. Its
manifest lists every part's inputs (input numbers shifted accordingly) and the parts' own
dataset hashes (`merged_from`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any, Optional

from ..errors import InputError
from . import manifest
from .formats import TEMP_PREFIX
from .reader import complete_manifest


def _check(parts: list[tuple[str, dict[str, Any]]]) -> int:
    first_dir, first = parts[0]
    n: Optional[int] = None
    seen: dict[int, str] = {}
    for folder, doc in parts:
        of = doc["options"].get("shard_of")
        if of is None:
            raise InputError(f"dataset {folder} was not written with --shard-of; only the parts of one run merge")
        i, total = int(of[0]), int(of[1])
        if n is not None and total != n:
            raise InputError(f"dataset {folder} is part {i}/{total}, the others are parts of {n}")
        n = total
        if i in seen:
            raise InputError(f"datasets {seen[i]} and {folder} are both part {i}/{total}; give each part once")
        seen[i] = folder
        if doc["tokenizer"]["hash"] != first["tokenizer"]["hash"]:
            raise InputError(
                f"dataset {folder} was made by {doc['tokenizer']['hash']}, {first_dir} by "
                f"{first['tokenizer']['hash']}; parts of one dataset share their tokenizer"
            )
        mine = {k: v for k, v in doc["options"].items() if k != "shard_of"}
        theirs = {k: v for k, v in first["options"].items() if k != "shard_of"}
        if mine != theirs or doc["dtype"] != first["dtype"]:
            diff = sorted(k for k in mine if mine[k] != theirs.get(k))
            raise InputError(f"dataset {folder} was made with other options than {first_dir} ({', '.join(diff)})")
    assert n is not None
    missing = [str(i) for i in range(n) if i not in seen]
    if missing:
        raise InputError(f"parts {', '.join(missing)} of {n} are missing; give every part's folder")
    return n


def _place(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
    manifest_fsync(dst)


def manifest_fsync(path: str) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def merge(part_folders: Sequence[str], out: str) -> dict[str, Any]:
    """Joins the parts into `out` (new or empty, or left by an interrupted merge); its manifest."""
    parts = [(f, complete_manifest(f)) for f in part_folders]
    if not parts:
        raise InputError("give the folders of the parts to merge")
    _check(parts)
    parts.sort(key=lambda p: p[1]["options"]["shard_of"][0])
    os.makedirs(out, exist_ok=True)
    if manifest.read(out) is not None:
        raise InputError(f"{out!r} already holds a dataset; give a new or empty folder")
    for name in os.listdir(out):
        if not name.startswith((TEMP_PREFIX, "shard-")):
            raise InputError(f"{out!r} is not empty (it has {name}); give a new or empty folder")
        os.remove(os.path.join(out, name))
    first = parts[0][1]
    shards: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    planned: list[Any] = []
    for folder, doc in parts:
        base = len(inputs)
        for s in doc["shards"]:
            stem = f"shard-{len(shards):05d}"
            files = {}
            for f, info in s["files"].items():
                new = stem + f[len(s["name"]) :]
                tmp = os.path.join(out, TEMP_PREFIX + new)
                _place(os.path.join(folder, f), tmp)
                os.replace(tmp, os.path.join(out, new))
                files[new] = info
            shards.append(
                {
                    **s,
                    "name": stem,
                    "files": files,
                    "start": [s["start"][0] + base, s["start"][1]],
                    "end": [s["end"][0] + base, s["end"][1]],
                }
            )
        inputs += doc["inputs"]
        planned += doc["planned"]
    doc = {
        **first,
        "options": {**first["options"], "shard_of": None},
        "planned": planned,
        **_kinds(parts),
        "inputs": inputs,
        "shards": shards,
        "merged_from": [p[1]["dataset_hash"] for p in parts],
        "totals": {k: sum(p[1]["totals"][k] for p in parts) for k in ("shards", "tokens", "documents", "skipped")},
        "skipped_examples": [e for p in parts for e in p[1].get("skipped_examples", [])][: manifest.EXAMPLES],
        "state": "complete",
    }
    doc["dataset_hash"] = manifest.dataset_hash(doc)
    manifest.write(out, doc)
    return doc


def _kinds(parts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The parts' resolved document kinds together (none when a part predates them)."""
    kinds: dict[str, str] = {}
    for _, doc in parts:
        if doc.get("document_kinds") is None:
            return {"document_kinds": None}
        kinds.update(doc["document_kinds"])
    return {"document_kinds": dict(sorted(kinds.items()))}
