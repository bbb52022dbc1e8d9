"""Starting or resuming a run in a folder. A run's identity is the tokenizer's hash, every
option, the dtype and the inputs as found (names and sizes on disk); the manifest records it
before the first shard is written. The same command run again finds the same identity and
continues after the last shard the manifest lists: a shard's files are renamed into place
before the manifest names them, so a shard the manifest does not name (half-written under its
temporary name, or renamed just before a crash) is removed and written again, with the same
bytes. A folder holding another identity, or files that are not a dataset's, is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from . import manifest
from .formats import TEMP_PREFIX

IDENTITY = ("tokenizer_hash", "options", "dtype", "planned")


@dataclass
class Resume:
    doc: dict[str, Any]
    start: tuple[int, int] = (0, 0)
    complete: bool = False
    resumed: bool = False
    removed: list[str] = field(default_factory=list)


def identity(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "tokenizer_hash": doc["tokenizer"]["hash"],
        "options": doc["options"],
        "dtype": doc["dtype"],
        "planned": doc["planned"],
    }


def _ours(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) or name.startswith(("shard-", "part"))


def prepare(folder: str, fresh: dict[str, Any]) -> Resume:
    """The state to start from: a new manifest (`fresh`, written now), or the one in `folder`
    when it has the same identity. Raises InputError for anything else."""
    os.makedirs(folder, exist_ok=True)
    old = manifest.read(folder)
    names = sorted(os.listdir(folder))
    if old is None:
        foreign = [n for n in names if not n.startswith(TEMP_PREFIX)]
        if foreign:
            raise InputError(
                f"{folder!r} is not empty and holds no {manifest.NAME} (it has {', '.join(foreign[:3])}); "
                "give an empty or a new folder"
            )
        for n in names:
            os.remove(os.path.join(folder, n))
        manifest.write(folder, fresh)
        return Resume(fresh)
    was, now = identity(old), identity(fresh)
    if was != now:
        key = next(k for k in IDENTITY if was[k] != now[k])
        if key == "tokenizer_hash":
            why = f"was made by tokenizer {old['tokenizer']['ref']} ({was[key]}), not {now[key]}"
        elif key == "options":
            diff = sorted(k for k in now[key] if was[key].get(k) != now[key].get(k))
            why = f"was made with other options ({', '.join(diff)})"
        elif key == "dtype":
            why = f"holds {was[key]} ids, not {now[key]}"
        else:
            why = "was made from other inputs (names or sizes differ)"
        raise InputError(f"dataset folder {folder!r} {why}; give a new folder, or the command that made it")
    listed = {f for s in old["shards"] for f in s["files"]}
    removed: list[str] = []
    for n in names:
        if n == manifest.NAME or n in listed:
            continue
        if not _ours(n):
            raise InputError(f"dataset folder {folder!r} holds {n!r}, which is not one of its files; move it away")
        os.remove(os.path.join(folder, n))
        removed.append(n)
    missing = sorted(f for f in listed if f not in names)
    if missing:
        raise InputError(f"dataset folder {folder!r} lacks {missing[0]}, which its manifest lists; give a new folder")
    last = old["shards"][-1]["end"] if old["shards"] else [0, 0]
    return Resume(
        old, start=(int(last[0]), int(last[1])), complete=old["state"] == "complete", resumed=True, removed=removed
    )
