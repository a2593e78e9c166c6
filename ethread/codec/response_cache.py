"""Bounded caches of answers, each valid for one generation of the chain."""

from __future__ import annotations

import threading
from collections.abc import Hashable

from ..lru import LRU
from .envelope import Call


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


class BodyAnswers:
    """Whole answers (with their ids) of single-call request bodies, by the body's bytes: a
    client that sends a body it sent before is answered without parsing it or encoding the
    answer again. Each entry holds the generation it was answered at and is used only while
    the chain is still at it. Only answers of cacheable methods are kept, and only those
    under :data:`MAX_ANSWER_BYTES` (a larger one is written in pieces from the answer cache,
    never copied).

    Most bodies are never sent again (a client numbers its requests), so an answer is kept
    only when its body comes the second time (the first time only the body's hash is noted,
    in a set bounded the same way), and the table is a dict, not an LRU with its lock and
    eviction: keeping every answer would hold megabytes alive for nothing and cost a few
    microseconds a request. When full (in entries or bytes) it starts over; a body sent again
    and again is back after its next answer."""

    MAX_ANSWER_BYTES = 64 * 1024
    MAX_BODY_BYTES = 16 * 1024
    """A longer body (a batch, a call with a large calldata) is not looked up (hashing it
    would cost more than it could save) nor kept."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 32 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: dict[bytes, tuple[int, Call, bytes]] = {}
        self._bytes = 0
        self._seen: set[int] = set()
        """Hashes of bodies answered once (at most ``4 * max_entries``)."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, generation: int, body: bytes) -> tuple[Call, bytes] | None:
        """The call and answer kept for ``body`` at this ``generation``, else None."""
        if len(body) > self.MAX_BODY_BYTES:
            return None
        entry = self._entries.get(body)
        if entry is None or entry[0] != generation:
            return None
        return entry[1], entry[2]

    def put(self, generation: int, body: bytes, call: Call, answer: bytes) -> None:
        """Keep ``answer`` to the one ``call`` that ``body`` holds, answered at
        ``generation``."""
        if len(answer) >= self.MAX_ANSWER_BYTES or len(body) > self.MAX_BODY_BYTES:
            return
        seen, mark = self._seen, hash(body)  # hashed already by the lookup: cached
        if mark not in seen:
            if len(seen) >= 4 * self.max_entries:
                seen.clear()
            seen.add(mark)
            return
        entries = self._entries
        if len(entries) >= self.max_entries or self._bytes >= self.max_bytes:
            entries.clear()
            self._bytes = 0
        entries[body] = (generation, call, answer)
        self._bytes += len(body) + len(answer) + ENTRY_OVERHEAD_BYTES


ENTRY_OVERHEAD_BYTES = 512
"""What an entry of :class:`BodyAnswers` costs besides its body and answer (the call, its
params, the tuple, the dict's slot), counted against the byte bound."""
