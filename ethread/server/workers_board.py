"""Which worker processes are serving: one byte per worker slot in memory shared by the
supervisor and every worker it forks (an anonymous shared mapping, made before the first
fork). A worker marks its slot once it accepts connections; the supervisor clears it when the
worker exits, however it died. ``/health`` in any worker reads the whole board."""

from __future__ import annotations

import mmap


class WorkerBoard:
    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a board has at least one slot")
        self.size = size
        self._map = mmap.mmap(-1, size)  # MAP_SHARED | MAP_ANONYMOUS: survives fork, shared

    def mark(self, slot: int, up: bool) -> None:
        self._map[slot] = 1 if up else 0

    def is_up(self, slot: int) -> bool:
        return self._map[slot] == 1

    def up(self) -> int:
        return sum(self._map[:self.size])
