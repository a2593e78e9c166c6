"""Polling for a short while before sleeping, for clients that send one request at a time
(docs/scaling.md, "One request at a time", has the measurements).

Waking a worker asleep in ``epoll_wait`` costs, on a virtual machine, more than a cached
answer. :class:`BusyPoll` keeps the loop turning for :attr:`BusyPoll.window` seconds after each
read and each answer written, counted from the loop's next turn; each turn polls the sockets
without blocking and yields the core. A window with nothing read lets the loop sleep.

Bounds: no window runs once :data:`CROWDED_CHECKS` looks in a row found more processes ready
than cores (:func:`runnable_processes`: a polling worker loses the scheduler's favour); after
:data:`MISSES_BEFORE_REST` windows in a row catch no read, the next :data:`REST_READS` reads
start none; and only a worker holding at most :data:`MAX_CONNECTIONS` connections polls. The
HTTP and WebSocket protocols of a server share its window.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

MAX_CONNECTIONS = 2
"""The most connections a worker may hold and still poll after a read."""

MISSES_BEFORE_REST = 4
"""Windows in a row that catch no read, after which polling rests (:data:`REST_READS`)."""
REST_READS = 64
"""Reads that start no window after :data:`MISSES_BEFORE_REST` windows caught nothing: a
client slower than the window costs a window every 68 reads instead of one a read."""
CHECK_SECONDS = 0.002
"""How often a polling loop looks again whether every process ready to run has a core."""
CROWDED_CHECKS = 2
"""Looks in a row that must find more processes ready than cores before polling stops."""

_yield = getattr(os, "sched_yield", lambda: None)
_CORES = os.cpu_count() or 1


def _open_loadavg() -> int | None:
    """``/proc/loadavg``, kept open and re-read from its start; None where there is none (not
    Linux: poll as if a core were free)."""
    try:
        return os.open("/proc/loadavg", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


_LOADAVG = _open_loadavg()


def runnable_processes() -> int:
    """Processes (threads) on the machine ready to run now, this one included; 0 where the
    system does not say."""
    if _LOADAVG is None:
        return 0
    try:
        # "0.52 0.58 0.59 2/345 12345": processes ready to run (this one included) / all
        return int(os.pread(_LOADAVG, 128, 0).split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return 0


class BusyPoll:
    """The polling window of one event loop: one per server, shared by the HTTP and WebSocket
    protocol classes made for it."""

    __slots__ = ("_caught", "_checked_at", "_crowded", "_fresh", "_loop", "_misses", "_rest",
                 "_running", "_until", "runnable", "turns", "window")

    def __init__(self, window: float, runnable: Callable[[], int] | None = None) -> None:
        if window <= 0:
            raise ValueError("a polling window is longer than zero")
        self.window = window
        """Seconds the loop keeps turning after the last read or answer."""
        self.runnable = runnable
        """Processes ready to run on the machine now (None: :func:`runnable_processes`)."""
        self.turns = 0
        """Turns taken so far (what the tests read)."""
        self._until = 0.0
        self._fresh = False
        """A read came since the last turn: the window starts again at the next."""
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._checked_at = -1.0
        self._crowded = 0
        """Looks in a row that found more processes ready to run than cores."""
        self._caught = False
        """A read came while the loop was turning, since the last window ran out."""
        self._misses = 0
        """Windows in a row that ran out with no read caught since the one before."""
        self._rest = 0
        """Reads still to come before a window may start again."""

    @property
    def running(self) -> bool:
        """Whether the loop is being kept turning now."""
        return self._running

    def touch(self, loop: asyncio.AbstractEventLoop, read: bool = True,
              connections: int = 1) -> None:
        """Bytes were read on ``loop`` (with ``read`` false: an answer written) by a process
        holding ``connections``: keep it turning for :attr:`window` seconds from its next turn,
        unless it holds more than :data:`MAX_CONNECTIONS`."""
        if connections > MAX_CONNECTIONS:
            return
        if self._running:
            self._fresh = True
            if read:
                self._caught = True
            return
        if self._rest:
            if read:
                self._rest -= 1
            return
        if self._has_room(time.perf_counter()):
            self._fresh = True
            self._running = True
            self._loop = loop
            loop.call_soon(self._turn)

    def _has_room(self, now: float) -> bool:
        """Whether the machine has a core for every process ready to run: false once
        :data:`CROWDED_CHECKS` looks in a row, :data:`CHECK_SECONDS` apart, found more ready
        than cores (one look can catch a process in passing)."""
        if now - self._checked_at >= CHECK_SECONDS:
            self._checked_at = now
            if (self.runnable or runnable_processes)() <= _CORES:
                self._crowded = 0
            else:
                self._crowded += 1
        return self._crowded < CROWDED_CHECKS

    def _turn(self) -> None:
        now = time.perf_counter()
        if self._fresh:
            self._fresh = False
            self._until = now + self.window
        elif now >= self._until:
            self._ran_out()
            return
        if not self._has_room(now):
            self._running = False
            return
        self.turns += 1
        _yield()
        self._loop.call_soon(self._turn)  # type: ignore[union-attr]  # set by touch

    def _ran_out(self) -> None:
        """A window passed with nothing read: the loop sleeps; after :data:`MISSES_BEFORE_REST`
        such windows in a row the next :data:`REST_READS` reads start none."""
        self._running = False
        if self._caught:
            self._caught = False
            self._misses = 0
            return
        self._misses += 1
        if self._misses >= MISSES_BEFORE_REST:
            self._misses = 0
            self._rest = REST_READS


class KeepsPolling:
    """The polling window the server's HTTP and WebSocket protocol classes share."""

    busy_poll: BusyPoll | None = None
    """The server's polling window, or None when it does not poll (set on the class)."""
    loop: asyncio.AbstractEventLoop
    connections: set[Any]

    def keep_polling(self, read: bool) -> None:
        """Something was read (``read``) or an answer written: see :meth:`BusyPoll.touch`."""
        poll = self.busy_poll
        if poll is not None:
            poll.touch(self.loop, read, len(self.connections))


def polling(seconds: float) -> BusyPoll | None:
    """A server's polling window of ``seconds``, or None for 0."""
    return BusyPoll(seconds) if seconds > 0 else None
