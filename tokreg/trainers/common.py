"""What every trainer shares: the progress callback type, the options' JSON form, turning core
errors into tokreg errors, and the training-run record (options, corpus fingerprint, version,
timings)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime
from typing import Any, Callable, TypeVar

from ..corpus import Corpus
from ..errors import InputError, Interrupted
from ..version import __version__

Progress = Callable[[str, int, int], None]
OptionsT = TypeVar("OptionsT", bound="OptionsJson")


class OptionsJson:
    """JSON form of a trainer's options dataclass, as stored with its training run (`special`,
    a tuple, is stored as a list)."""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = asdict(self)  # type: ignore[call-overload]
        d["special"] = list(d.get("special", ()))
        return d

    @classmethod
    def from_json(cls: type[OptionsT], d: dict[str, Any]) -> OptionsT:
        d = dict(d)
        d["special"] = tuple(d.get("special", ()))
        return cls(**d)


@contextmanager
def core_errors(what: str) -> Iterator[None]:
    """Ctrl-C becomes Interrupted (nothing was written); a core ValueError an InputError."""
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(f"{what} interrupted; nothing was written to the registry") from None
    except ValueError as e:
        raise InputError(f"{what} failed: {e}") from None


def run_record(
    algorithm: str,
    options: dict[str, Any],
    corpus: Corpus,
    *,
    threads: int,
    started: datetime,
    t0: float,
    count_seconds: float,
    train_seconds: float,
    **extra: Any,
) -> dict[str, Any]:
    """The `training_runs` row of a run (extra keys are kept in memory, not stored)."""
    return {
        "config": {"algorithm": algorithm, **options},
        "corpus_fingerprint": corpus.fingerprint,
        "corpus_files": corpus.files,
        "corpus_bytes": corpus.size,
        "tokreg_version": __version__,
        "threads": threads or (os.cpu_count() or 1),
        "count_seconds": count_seconds,
        "train_seconds": train_seconds,
        "total_seconds": time.perf_counter() - t0,
        "started_at": started,
        **extra,
    }


def check_threads(threads: int) -> None:
    if threads < 0:
        raise InputError("--threads must be 0 (one per core) or more")
