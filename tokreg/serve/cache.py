"""A small least-recently-used cache, safe across the server's worker threads. What the server
keeps is keyed by content hash or version row, so an entry never goes stale: versions are
immutable, and an alias that moves resolves to another key."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Callable, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value of `key`, made (outside the lock: two threads may both make it) when absent."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value
