"""A one-line progress display on stderr for long runs (counting, merging). Silent when
stderr is not a terminal or with --quiet, so logs and pipes stay clean."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

_LABELS = {"count": "counting", "merge": "merging", "em": "EM", "prune": "pruning"}


class Progress:
    def __init__(self, stream: Optional[TextIO] = None, *, enabled: Optional[bool] = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._last = 0.0
        self._phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase == self._phase and now - self._last < 0.1 and done < total:
            return
        self._last, self._phase = now, phase
        label = _LABELS.get(phase, phase)
        if phase == "count":
            text = f"{label} {done / 1e6:,.1f}/{total / 1e6:,.1f} MB"
        else:
            text = f"{label} {done:,}/{total:,}"
        pct = f" {100 * done // total}%" if total else ""
        self.stream.write(f"\r\x1b[K{text}{pct}")
        self.stream.flush()

    def clear(self) -> None:
        if self.enabled and self._phase:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
