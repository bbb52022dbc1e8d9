"""What `Registry.show` says of a version, kept per version row: counting a 200k-token vocabulary
by kind takes a few hundred milliseconds, and a version never changes once written."""

from __future__ import annotations

import copy
from typing import Any

from ..registry import Registry
from .cache import Lru

#: First merges (or highest-scored pieces) a version page shows.
FIRST_MERGES = 20


class Summaries:
    def __init__(self, reg: Registry, size: int = 64):
        self.reg = reg
        self._cache: Lru[tuple[int, str], dict[str, Any]] = Lru(size)

    def get(self, ref: str) -> dict[str, Any]:
        """`Registry.show(ref)` (a copy: callers add to it)."""
        v = self.reg.resolve(ref)
        shown = self._cache.get((v.id, v.content_hash), lambda: self.reg.show(v.ref, merges=FIRST_MERGES))
        return copy.deepcopy(shown)
