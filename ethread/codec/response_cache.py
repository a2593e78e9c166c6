"""A bounded cache of answers, valid for one generation of the chain."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable


class ResponseCache:
    """LRU of result bytes. Everything is dropped when the backend's generation moves (a block
    was added or a pointer moved), so no answer outlives the chain it was computed on."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._generation: int | None = None
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, generation: int, key: Hashable) -> bytes | None:
        with self._lock:
            if generation != self._generation:
                return None
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, generation: int, key: Hashable, value: bytes) -> None:
        if len(value) > self.max_bytes // 8:
            return  # one huge answer must not flush everything else
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._bytes = 0
                self._generation = generation
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._entries[key] = value
            self._bytes += len(value)
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped)
