"""A bounded cache of answers, valid for one generation of the chain."""

from __future__ import annotations

import threading
from collections.abc import Hashable

from ..lru import LRU


class ResponseCache:
    """LRU of result bytes. Everything is dropped when the backend's generation moves (a block
    was added or a pointer moved), so no answer outlives the chain it was computed on."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._generation: int | None = None
        self._entries: LRU[Hashable, bytes] = LRU(max_entries, max_bytes=max_bytes, weigh=len)
        self._lock = threading.Lock()

    def get(self, generation: int, key: Hashable) -> bytes | None:
        """The cached answer under ``key`` if it was computed at this ``generation`` of the chain,
        else None."""
        # No lock: a put of another generation racing with this read can only hand back an
        # answer computed on a newer chain, or miss.
        if generation != self._generation:
            return None
        return self._entries.get(key)

    def put(self, generation: int, key: Hashable, value: bytes) -> None:
        """Cache an answer computed at ``generation``; a newer generation drops every older answer,
        and answers larger than an eighth of the budget are not kept."""
        if len(value) > self.max_bytes // 8:
            return  # one huge answer must not flush everything else
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._generation = generation
            self._entries.put(key, value)
