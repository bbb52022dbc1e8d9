"""Starting or resuming a run in a folder. A run's identity is the tokenizer's hash, every
option, the dtype, the inputs as found (names and sizes on disk) and what a document is for
each kind of input, resolved (`--document auto` is resolved by the tokreg that runs, and its
rule has changed once); the manifest records it before the first shard is written.

Manifests written before the resolved kinds were recorded: an explicit `--document` resolves
as it always did, and `auto` meant `record` for JSON Lines and Parquet then as now. For plain
text, `auto` meant `file` (a document per file) until tokreg read it as `line`, and nothing in
such a manifest says which tokreg started it (the version label did not change with the rule),
so an unfinished one with plain-text inputs is refused, saying so: guessing could mix
documents of both kinds in one dataset. A complete one is left as it is (nothing is written).

The same command run again finds the same identity and continues after the last shard the
manifest lists: a shard's files are renamed into place before the manifest names them, so a
shard the manifest does not name (half-written under its temporary name, or renamed just
before a crash) is removed and written again, with the same bytes. A folder holding another
identity, or files that are not a dataset's, is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from . import manifest
from .formats import TEMP_PREFIX

IDENTITY = ("tokenizer_hash", "options", "dtype", "planned", "document_kinds")


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
        "document_kinds": doc.get("document_kinds"),
    }


def _older_kinds(old: dict[str, Any], fresh: dict[str, Any], folder: str) -> dict[str, str]:
    """The resolved kinds of a manifest written before they were recorded (module docstring)."""
    now: dict[str, str] = fresh["document_kinds"]
    chosen = old["options"].get("document", "auto")
    if chosen != "auto" or "text" not in now:
        return now if chosen == fresh["options"].get("document") else {}
    if old["state"] == "complete":
        return now
    raise InputError(
        f"dataset folder {folder!r} was started with --document auto by an older tokreg, which made each "
        "plain-text file one document where this one makes each line one; finish it with the tokreg that "
        "started it, or start again in a new folder"
    )


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
    if was["document_kinds"] is None:
        was["document_kinds"] = _older_kinds(old, fresh, folder)
    if was != now:
        key = next(k for k in IDENTITY if was[k] != now[k])
        if key == "tokenizer_hash":
            why = f"was made by tokenizer {old['tokenizer']['ref']} ({was[key]}), not {now[key]}"
        elif key == "options":
            diff = sorted(k for k in now[key] if was[key].get(k) != now[key].get(k))
            why = f"was made with other options ({', '.join(diff)})"
        elif key == "dtype":
            why = f"holds {was[key]} ids, not {now[key]}"
        elif key == "document_kinds":
            was_k, now_k = (", ".join(f"{f}: {k}" for f, k in sorted(d[key].items())) for d in (was, now))
            why = f"was made with other documents ({was_k}, not {now_k})"
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
