"""Which worker processes are serving: one byte per worker slot in memory shared by the
supervisor and every worker it forks (an anonymous shared mapping, made before the first
fork). A worker marks its slot once it accepts connections; the supervisor clears it when the
worker exits, however it died. ``/health`` in any worker reads the whole board."""

from __future__ import annotations

import mmap


class WorkerBoard:
    """A shared-memory board, one byte per worker slot, where the workers mark themselves up and
    the health check reads them."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a board has at least one slot")
        self.size = size
        self._map = mmap.mmap(-1, size)  # MAP_SHARED | MAP_ANONYMOUS: survives fork, shared

    def mark(self, slot: int, up: bool) -> None:
        """Mark the worker in ``slot`` up or down."""
        self._map[slot] = 1 if up else 0

    def is_up(self, slot: int) -> bool:
        """Whether the worker in ``slot`` is marked up."""
        return self._map[slot] == 1

    def up(self) -> int:
        """How many workers are marked up."""
        return sum(self._map[:self.size])
