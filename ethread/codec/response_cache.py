"""Bounded caches of answers, each valid for one generation of the chain."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from ..lru import LRU
from .envelope import Call


class ResponseCache:
    """LRU of result bytes, emptied when the backend's generation moves."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._generation: int | None = None
        self._entries: LRU[Hashable, bytes] = LRU(max_entries, max_bytes=max_bytes, weigh=len)
        self._lock = threading.Lock()

    def get(self, generation: int, key: Hashable) -> bytes | None:
        """The cached answer under ``key`` if computed at this ``generation``, else None."""
        # No lock: a put of another generation racing with this read can only hand back an
        # answer computed on a newer chain, or miss.
        if generation != self._generation:
            return None
        return self._entries.get(key)

    def put(self, generation: int, key: Hashable, value: bytes) -> None:
        """Cache an answer computed at ``generation`` (dropping older ones) unless it is large."""
        if len(value) > self.max_bytes // 8:
            return  # one huge answer must not flush everything else
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._generation = generation
            self._entries.put(key, value)


_PLAIN_ID = re.compile(rb'"id"[ \t\n\r]*:[ \t\n\r]*(0|[1-9][0-9]{0,14})(?=[ \t\n\r,}])')
"""The first ``"id": <integer>`` of a body (an integer of at most 15 digits, as JSON writes it)."""
_ANSWER_HEAD = b'{"jsonrpc":"2.0","id":'


class BodyAnswers:
    """Whole answers of single-call request bodies, by the body's bytes with the id taken out,
    each valid at the generation it was answered at. Only cacheable methods' answers under
    :data:`MAX_ANSWER_BYTES` are kept.

    The id is taken out only when it is a plain integer that nothing else can be mistaken for:
    no backslash in the body and ``"id"`` once in it. Any other body is kept by its exact
    bytes. An answer is kept only the second time its key comes (the first time only its hash
    is noted). When full the oldest entries go first; a lookup does not reorder them."""

    MAX_ANSWER_BYTES = 64 * 1024
    MAX_BODY_BYTES = 16 * 1024
    """A longer body is neither looked up nor kept (hashing it would cost more than it saves)."""

    def __init__(self, max_entries: int = 4096, max_bytes: int = 32 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, tuple[int, Call, bytes, bool]] = OrderedDict()
        """By key: the generation, the call, the answer (after its id when the flag is set)."""
        self._bytes = 0
        self._seen: set[int] = set()
        """Hashes of keys answered once (at most ``4 * max_entries``)."""
        self._lock = threading.Lock()
        """Taken to add an entry (and evict the oldest); a lookup takes none."""
        self._last: tuple[bytes, bytes, int, int] = (b"", b"", 0, 0)
        """The last body looked up with an integer id: its key and the id's place."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, generation: int, body: bytes) -> tuple[Call, Any, bytes] | None:
        """The call, its id and the whole answer for ``body`` at this ``generation``, else None."""
        if len(body) > self.MAX_BODY_BYTES:
            return None
        entries = self._entries
        found = _PLAIN_ID.search(body)
        if found is not None:
            start, end = found.span(1)
            key = body[:start] + body[end:]
            self._last = (body, key, start, end)  # for the put that follows a miss
            entry = entries.get(key)
            if entry is not None and entry[3]:
                if entry[0] != generation:
                    return None
                digits = body[start:end]
                return entry[1], int(digits), _ANSWER_HEAD + digits + entry[2]
        entry = entries.get(body)
        if entry is None or entry[0] != generation or entry[3]:
            return None
        return entry[1], entry[1].id, entry[2]

    def put(self, generation: int, body: bytes, call: Call, answer: bytes) -> None:
        """Keep ``answer`` to the one ``call`` of ``body``, answered at ``generation``."""
        if len(answer) >= self.MAX_ANSWER_BYTES or len(body) > self.MAX_BODY_BYTES:
            return
        last = self._last
        if last[0] is body:  # the split the lookup made (any thread's: checked by identity)
            _, key, start, end = last
        else:
            found = _PLAIN_ID.search(body)
            key, start, end = body, 0, 0
            if found is not None:
                start, end = found.span(1)
                key = body[:start] + body[end:]
        if not self._second(key):
            return
        kept, template = answer, end > 0
        if template:
            digits = b"%d" % call.id if type(call.id) is int else b""
            head = _ANSWER_HEAD + digits
            if (digits == body[start:end] and answer.startswith(head) and b"\\" not in body
                    and body.count(b'"id"') == 1):
                kept = answer[len(head):]
            else:  # the id can be mistaken: kept under its exact bytes
                key, template = body, False
                if not self._second(key):
                    return
        entries = self._entries
        with self._lock:
            old = entries.pop(key, None)
            if old is not None:
                self._bytes -= _size(key, old)
            entry = (generation, call, kept, template)
            size = _size(key, entry)
            while entries and (len(entries) >= self.max_entries
                               or self._bytes + size > self.max_bytes):
                oldest, gone = entries.popitem(last=False)
                self._bytes -= _size(oldest, gone)
            entries[key] = entry
            self._bytes += size

    def _second(self, key: bytes) -> bool:
        """Whether ``key`` was noted before; notes it if not."""
        seen, mark = self._seen, hash(key)
        if mark in seen:
            return True
        if len(seen) >= 4 * self.max_entries:
            seen.clear()
        seen.add(mark)
        return False


ENTRY_OVERHEAD_BYTES = 512
"""What an entry of :class:`BodyAnswers` costs besides its key and answer."""


def _size(key: bytes, entry: tuple[int, Call, bytes, bool]) -> int:
    return len(key) + len(entry[2]) + ENTRY_OVERHEAD_BYTES
