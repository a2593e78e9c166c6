"""A small bounded mapping for decoded history.

History below the head never changes, so a block or its receipts decoded once can be kept;
the bound keeps a long-running server's memory flat.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """Least-recently-used cache. Races between threads can only drop an entry early."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            with contextlib.suppress(KeyError):  # evicted by another thread meanwhile
                self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        while len(self._data) > self._size:
            try:
                self._data.popitem(last=False)
            except KeyError:
                break

    def clear(self) -> None:
        self._data.clear()
