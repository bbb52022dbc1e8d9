"""Datasets pinned in a project's `tokreg.lock` (`tokreg dataset pin DIR`): the dataset's hash
and the hash of the tokenizer that made it, under a name, with the folder's path (relative to
the lockfile's folder when it is below it, so the project can move).

`tokreg.open_dataset` applies them, as `tokreg.load` applies tokenizer pins: a folder or a
name that a `[[dataset]]` pin names must hold a complete dataset with exactly the pinned
dataset hash, made by exactly the pinned tokenizer, or it is refused in one line naming the
lockfile and both hashes. A pinned name can stand for its folder:
`tokreg.open_dataset("web", tokenizer="gpt-mini")` in the project opens the pinned folder.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any, Optional

from ..datasets import reader
from ..errors import IntegrityError
from . import lockfile


def folder_of(lock: lockfile.Lock, pin: lockfile.DatasetPin) -> str:
    return os.path.normpath(os.path.join(lock.folder, pin.path))


def find(lock: Optional[lockfile.Lock], where: str) -> Optional[tuple[lockfile.DatasetPin, str]]:
    """The pin that applies to `where` (a folder, or a pinned name that is not a folder here),
    with the folder it names; None when none does."""
    if lock is None or not lock.datasets:
        return None
    if not os.path.isdir(where) and where in lock.datasets:
        pin = lock.datasets[where]
        return pin, folder_of(lock, pin)
    real = os.path.realpath(where)
    for pin in lock.datasets.values():
        if os.path.realpath(folder_of(lock, pin)) == real:
            return pin, where
    return None


def check(lock: lockfile.Lock, pin: lockfile.DatasetPin, folder: str, doc: dict[str, Any]) -> None:
    head = (
        f"{lock.path} pins dataset {pin.name} ({pin.hash}, made by {pin.tokenizer_ref or 'tokenizer'} {pin.tokenizer})"
    )
    made = doc["tokenizer"]["hash"]
    if made != pin.tokenizer:
        raise IntegrityError(
            f"{head}, but {folder} was made by tokenizer {doc['tokenizer']['ref']} ({made}); "
            "tokenize again with the pinned tokenizer, or re-pin deliberately with `tokreg dataset pin`",
            expected=pin.tokenizer,
            actual=made,
        )
    if doc["dataset_hash"] != pin.hash:
        raise IntegrityError(
            f"{head}, but {folder} holds dataset {doc['dataset_hash']}; restore the pinned data, "
            "or re-pin deliberately with `tokreg dataset pin`",
            expected=pin.hash,
            actual=doc["dataset_hash"],
        )


def pin(folder: str, name: Optional[str] = None, lock_folder: Optional[str] = None) -> lockfile.DatasetPin:
    """Pins the complete dataset in `folder` as `name` (default: the folder's own name) in
    `lock_folder`/tokreg.lock (default: the current directory); returns the pin."""
    doc = reader.complete_manifest(folder)
    where = os.path.abspath(lock_folder or os.getcwd())
    full = os.path.abspath(folder)
    rel = os.path.relpath(full, where)
    p = lockfile.DatasetPin(
        name=name or os.path.basename(full.rstrip(os.sep)),
        path=full if rel.startswith(os.pardir) else rel,
        hash=doc["dataset_hash"],
        tokenizer=doc["tokenizer"]["hash"],
        tokenizer_ref=doc["tokenizer"]["ref"],
        pinned_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    )
    lockfile.write_dataset(os.path.join(where, lockfile.FILENAME), p)
    return p


def open_dataset(
    folder: Any, *, tokenizer: reader.Expected, resolve: Optional[reader.Resolve], lock: lockfile.LockArg = None
) -> reader.Dataset:
    """`tokreg.open_dataset`: the reader's, with the dataset pins of `lock` (None: the project's
    tokreg.lock, False: none) applied: a pinned name stands for its folder, and a pinned folder
    must hold the pinned dataset, made by the pinned tokenizer (IntegrityError otherwise)."""
    where = os.fspath(folder)
    the_lock = lockfile.lock_of(lock)
    pinned = find(the_lock, where)
    if pinned is None or the_lock is None:
        return reader.open_dataset(where, tokenizer=tokenizer, resolve=resolve)
    pin_, folder_ = pinned
    return reader.open_dataset(
        folder_, tokenizer=tokenizer, resolve=resolve, check=lambda f, doc: check(the_lock, pin_, f, doc)
    )
