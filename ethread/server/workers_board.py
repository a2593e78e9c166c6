"""Which worker processes are serving, and how many connections each holds: a byte and a count
per slot in anonymous shared memory mapped before the first fork. A worker marks its slot once
it accepts connections; the supervisor clears it when the worker exits."""

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
        self._counts_map = mmap.mmap(-1, 4 * size)
        self._counts = memoryview(self._counts_map).cast("I")
        """Each slot's open connections as its worker last wrote them (aligned 4-byte words:
        each read or write is whole)."""

    def mark(self, slot: int, up: bool) -> None:
        """Mark the worker in ``slot`` up or down."""
        self._map[slot] = 1 if up else 0

    def up(self) -> int:
        """How many workers are marked up."""
        return sum(self._map[:self.size])

    def set_connections(self, slot: int, count: int) -> None:
        """The worker in ``slot`` holds ``count`` connections."""
        self._counts[slot] = min(count, 0xFFFFFFFF)

    def fewest_elsewhere(self, slot: int) -> int | None:
        """The fewest connections any other worker marked up holds (as each last wrote), or
        None when no other is up."""
        counts, flags = self._counts, self._map
        fewest = None
        for other in range(self.size):
            if other != slot and flags[other] == 1:
                count = counts[other]
                if fewest is None or count < fewest:
                    fewest = count
        return fewest
