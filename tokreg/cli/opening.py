"""A registry opened on a thread while the command does its own work: `tokreg train` counts and
trains in the core (which lets go of the GIL) while this thread imports SQLAlchemy and the store,
opens the registry and asks whether it can be written; in a fresh process that is most of what
a small corpus costs besides training.

The answer still comes before anything is written, and, for a long run, early: `guard` wraps the
run's progress callback, which the core calls every few hundredths of a second, so a registry
that cannot be written (or a name that is not valid) stops the run at its next report with the
same one-line error the command would have given before training.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:
    from ..registry import Registry


class Opening:
    """`Registry(db)`, checked writable for a version of `name`, made on its own thread."""

    def __init__(self, db: Optional[str], name: str):
        self._registry: Optional[Registry] = None
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._open, args=(db, name), name="tokreg-open", daemon=True)
        self._thread.start()

    def _open(self, db: Optional[str], name: str) -> None:
        try:
            # Imported here, on this thread: loading SQLAlchemy and the store is what this
            # thread takes off the command's own path.
            from ..registry import Registry
            from ..store.refs import check_name

            check_name(name)
            reg = Registry(db)
            try:
                reg.check_writable()
            except BaseException:
                reg.close()
                raise
            self._registry = reg
        except BaseException as e:  # handed to the command's thread, which raises it
            self.error = e

    def guard(self, progress: Callable[..., None]) -> Callable[..., None]:
        """`progress`, raising the opening's error as soon as there is one."""

        def report(phase: str, done: int, total: int, **detail: Any) -> None:
            if self.error is not None:
                raise self.error
            progress(phase, done, total, **detail)

        return report

    def registry(self) -> Registry:
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
