"""What `Registry.show` says of a version, kept per version row: counting a 200k-token vocabulary
by kind takes a few hundred milliseconds, and a version never changes once written."""

from __future__ import annotations

from ..registry import Registry
from ..versions.details import VersionDetails
from .cache import Lru

#: First merges (or highest-scored pieces) a version page shows.
FIRST_MERGES = 20


class Summaries:
    def __init__(self, reg: Registry, size: int = 64):
        self.reg = reg
        self._cache: Lru[tuple[int, str], VersionDetails] = Lru(size)

    def get(self, ref: str) -> VersionDetails:
        """`Registry.show(ref)` (frozen: shared by every page that asks)."""
        v = self.reg.resolve(ref)
        return self._cache.get((v.id, v.content_hash), lambda: self.reg.show(v, merges=FIRST_MERGES))
