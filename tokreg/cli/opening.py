"""A registry opened on a thread while the command does its own work: `tokreg train` counts and
trains in the core (which lets go of the GIL) while this thread opens the registry and asks
whether it can be written. An existing SQLite registry at the newest schema is opened with the
standard library alone (store/sqlite_write.py), which records the run without SQLAlchemy;
anything else imports SQLAlchemy and the store and opens a `Registry` (in a fresh process that
is most of what a small corpus costs besides training).

The answer still comes before anything is written, and, for a long run, early: `guard` wraps the
run's progress callback, which the core calls every few hundredths of a second, so a registry
that cannot be written (or a name that is not valid) stops the run at its next report with the
same one-line error the command would have given before training.

The thread then imports what the command needs once the core has trained (`AFTER_TRAINING`):
in a fresh process each import is Python work under the GIL, which the core leaves free while
it counts and merges, so there it takes no time from the command's own thread (about 20 ms of
CPU, against 60-200 ms of counting and merging on a 1 MB corpus).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from ..errors import Interrupted
from ..store.names import check_name

if TYPE_CHECKING:
    from ..data import FinishedVersion, Recorded

#: The modules `tokreg train` needs after training and not before, imported on the opening
#: thread: the encoder (the measure and the sample strings), the sample strings and the
#: package's version (the run record). Not OpenSSL (hashlib, for the content's sha256): loaded
#: while the core trains, its pages added ~4 MB to the peak of a 6 MB run; after, they do not.
AFTER_TRAINING = ("tokreg.encoding.tokenizer", "tokreg.versions.samples", "tokreg.package_version")


def samples_of(version: FinishedVersion, name: str) -> list[tuple[str, list[int]]]:
    """The sample strings with the ids `version` encodes them to, stored with it (as
    `Registry` stores them)."""
    # On use: `tokreg train` imports this module before it trains, and needs these to record.
    from ..encoding.tokenizer import Tokenizer
    from ..versions.samples import SAMPLES

    # Encoded on the core's pool, whose threads measured the version a moment before: a thread's
    # first encode sets up ~3 MB of its own (`encode_all` on this thread would add that to the
    # run's peak). The ids are `encode_ordinary`'s, as `encode_all` gives them.
    ids = Tokenizer.of_finished(version, ref=name).encode_ordinary_batch(list(SAMPLES))
    return list(zip(SAMPLES, ids))


class Recorder(Protocol):
    """What `tokreg train` asks of the registry it records into: a `Registry`, or the lean
    SQLite recorder (`store.sqlite_write.SqliteRecorder`)."""

    created: bool

    @property
    def where(self) -> str: ...

    def record_trained(
        self,
        name: str,
        trained: Sequence[FinishedVersion],
        *,
        message: Optional[str] = None,
        ready: Optional[Callable[[], object]] = None,
    ) -> list[Recorded]: ...

    def interruption(self) -> Interrupted: ...

    def close(self) -> None: ...


class Opening:
    """`Registry(db)` (or the lean SQLite recorder), checked writable for a version of `name`,
    made on its own thread."""

    def __init__(self, db: Optional[str], name: str):
        self._registry: Optional[Recorder] = None
        self.error: Optional[BaseException] = None
        #: Called before the lean recorder encodes the sample strings: `tokreg train` waits
        #: there for the encoders compiled on the measure's thread (`train_run.Measuring`).
        self.before_samples: Callable[[], None] = lambda: None
        #: Whether the registry is written by the lean SQLite recorder (else by a `Registry`,
        #: which encodes the samples before it writes).
        self.lean = True
        self._thread = threading.Thread(target=self._open, args=(db, name), name="tokreg-open", daemon=True)
        self._thread.start()

    def _open(self, db: Optional[str], name: str) -> None:
        try:
            self._registry = self._recorder(db, name)
        except BaseException as e:  # handed to the command's thread, which raises it
            self.error = e
            return
        for module in AFTER_TRAINING:
            try:
                importlib.import_module(module)
            except Exception:  # only a head start: the command imports it again where it is used
                break

    def _samples(self, version: FinishedVersion, name: str) -> list[tuple[str, list[int]]]:
        self.before_samples()
        return samples_of(version, name)

    def _recorder(self, db: Optional[str], name: str) -> Recorder:
        check_name(name)
        from ..store.sqlite_write import open_file  # on this thread, as the Registry below

        lean = open_file(db, self._samples)
        if lean is not None:
            return lean
        # Imported here, on this thread: loading SQLAlchemy and the store is what this
        # thread takes off the command's own path.
        from ..registry import Registry

        reg = Registry(db)
        try:
            reg.check_writable()
        except BaseException:
            reg.close()
            raise
        self.lean = False
        return reg

    def guard(self, progress: Callable[..., None]) -> Callable[..., None]:
        """`progress`, raising the opening's error as soon as there is one."""

        def report(phase: str, done: int, total: int, **detail: Any) -> None:
            if self.error is not None:
                raise self.error
            progress(phase, done, total, **detail)

        return report

    def registry(self) -> Recorder:
        """The opened registry, once the thread is done; its error if it failed."""
        self._thread.join()
        if self.error is not None:
            raise self.error
        assert self._registry is not None
        return self._registry

    def abandon(self) -> None:
        """Waits for the thread (an upgrade of the schema in it is never cut short) and closes
        what it opened: the command failed or was interrupted before writing."""
        self._thread.join()
        if self._registry is not None:
            self._registry.close()
