"""The package's one bounded cache: least recently used entries go first. Bounded in entries
and, with a weight, in bytes; docs/design.md ("Caches") lists every cache ethread keeps.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``max_entries`` entries and, with ``weigh``, at most ``max_bytes`` of their
    summed weights. Safe to share between threads: writes take a lock, reads do not."""

    def __init__(self, max_entries: int, *, max_bytes: int | None = None,
                 weigh: Callable[[V], int] | None = None) -> None:
        if (max_bytes is None) != (weigh is None):
            raise ValueError("max_bytes and weigh go together")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._data: OrderedDict[K, V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    @property
    def weight(self) -> int:
        """The summed weights of the entries held (0 without ``weigh``)."""
        return self._bytes

    def get(self, key: K) -> V | None:
        """The value at ``key`` (marked as recently used), or None."""
        # No lock on the hot path: each OrderedDict call is atomic, and an entry evicted by
        # another thread between the two only misses its move to the recent end.
        data = self._data
        value = data.get(key)
        if value is not None:
            try:  # noqa: SIM105  (contextlib.suppress costs more than the lookup on this path)
                data.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile
                pass
        return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` at ``key``, evicting the least recently used entries past the bounds."""
        weight = 0
        if self._weigh is not None:
            assert self.max_bytes is not None
            weight = self._weigh(value)
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None and self._weigh is not None:
                self._bytes -= self._weigh(old)
            self._data[key] = value
            self._bytes += weight
            self._trim()

    def get_or_put(self, key: K, build: Callable[[], V]) -> V:
        """The entry for ``key``, built (under the cache's lock, so once) when absent."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
                return value
            value = build()
            self._data[key] = value
            if self._weigh is not None:
                self._bytes += self._weigh(value)
            self._trim()
            return value

    def pop(self, key: K) -> V | None:
        """Remove the entry at ``key`` and return its value (None: there was none)."""
        with self._lock:
            value = self._data.pop(key, None)
            if value is not None and self._weigh is not None:
                self._bytes -= self._weigh(value)
            return value

    def _trim(self) -> None:
        data = self._data
        while data and (len(data) > self.max_entries
                        or (self.max_bytes is not None and self._bytes > self.max_bytes)):
            _, dropped = data.popitem(last=False)
            if self._weigh is not None:
                self._bytes -= self._weigh(dropped)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()
            self._bytes = 0
