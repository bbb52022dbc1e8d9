"""`tokreg reproduce REF`: retrain a version from its recorded run and compare hashes.

The run records the training config and, per corpus file, its path, name, size and xxh3 of
the decompressed bytes read (corpus/fingerprint.py). Each file is checked against that record
before training (a missing or changed file is an error naming it; a file read only in part by
--sample-bytes is checked on that part); the retrained content hash then either equals the
stored one or not. Files that moved can be given explicitly, in the recorded order. A run
that read standard input or a Python iterator cannot be reproduced: it says so, with the
fingerprint it recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import xxhash

from .. import algorithms
from ..data import FinishedVersion, JsonValue, VersionInfo
from ..errors import InputError, NotFoundError
from . import train_run
from .corpus import Corpus
from .corpus.reader import prefix_digest


def retrain(files: Sequence[str], config: dict[str, Any], field: Optional[str] = None) -> FinishedVersion:
    """Trains again with the options recorded in a run's config, whatever the algorithm."""
    options = algorithms.options_from_run(config)
    sizes = sorted(config.get("run_sizes") or [options.vocab_size])
    return train_run.train(Corpus.of(list(files), field=field), options, sizes)[sizes.index(options.vocab_size)]


def check_files(recorded: list[dict[str, Any]], given: Optional[Sequence[str]] = None) -> list[str]:
    """The paths to train on, each checked against its recorded size and xxh3."""
    if given and len(given) != len(recorded):
        raise InputError(
            f"the run was trained on {len(recorded)} file(s) "
            f"({', '.join(f['name'] for f in recorded)}); give that many, in that order"
        )
    for f in recorded:
        if f.get("path") is None:
            raise InputError(
                f"this run read {f['name']} ({f['size']:,} bytes, xxh3 {f['xxh3'][:16]}…), which cannot be read "
                "again; only runs on files and folders can be reproduced"
            )
    paths = []
    for n, f in enumerate(recorded):
        path = Path(given[n]) if given else Path(f["path"])
        if not path.is_file():
            hint = "" if given else "; if it moved, give its new path: tokreg reproduce REF FILE..."
            raise InputError(
                f"corpus file {str(path)!r} (recorded as {f['name']}, {f['size']:,} bytes) is missing{hint}"
            )
        whole = f.get("whole", True)
        if f.get("format") == "parquet":
            size, digest = len(raw := path.read_bytes()), xxhash.xxh3_128_hexdigest(raw)
        else:
            size, digest = prefix_digest(str(path), None if whole else f["size"])
        if size != f["size"] or digest != f["xxh3"]:
            raise InputError(
                f"corpus file {str(path)!r} changed since training: recorded {f['size']:,} bytes, "
                f"xxh3 {f['xxh3'][:16]}…; now {size:,} bytes, xxh3 {digest[:16]}…"
            )
        paths.append(os.fspath(path))
    return paths


@dataclass(frozen=True)
class Reproduction(JsonValue):
    """What `Registry.reproduce` found: whether retraining gave the stored content hash."""

    ref: str
    stored: str  # the version's content hash
    reproduced: str  # the retrained content's
    same: bool
    corpus_fingerprint: str  # as the run recorded it
    files: tuple[str, ...]  # the paths trained on, in the recorded order
    seconds: float


def reproduce(v: VersionInfo, run: Optional[dict[str, Any]], files: Optional[Sequence[str]] = None) -> Reproduction:
    """Retrains `v` from its recorded `run` (which the caller read)."""
    if run is None:
        raise NotFoundError(
            f"{v.ref} has no recorded training run (it was {v.source}); only trained versions can be reproduced"
            + (
                "; extending the same base with the same corpus and --add gives the same hash"
                if v.source == "extended"
                else ""
            )
        )
    config = {"algorithm": v.algorithm, **run["config"]}
    paths = check_files(run["corpus_files"], files)
    fields = [f.get("field") for f in run["corpus_files"] if f.get("field")]
    t0 = time.perf_counter()
    new_hash = retrain(paths, config, fields[0] if fields else None).content_hash
    return Reproduction(
        ref=v.ref,
        stored=v.content_hash,
        reproduced=new_hash,
        same=new_hash == v.content_hash,
        corpus_fingerprint=run["corpus_fingerprint"],
        files=tuple(paths),
        seconds=round(time.perf_counter() - t0, 3),
    )
