"""Polling for a short while before sleeping, for clients that send one request at a time.

When a worker has answered and its event loop has nothing left to do, it sleeps in
``epoll_wait`` until the next request arrives, and the kernel has to wake it. On the virtual
machines servers run on, that wake-up takes tens of microseconds of CPU and more of wall time:
for a client that sends its requests one after another on one connection (a test suite, a
script, an indexer), more than a cached answer costs. Measured on 2 vCPUs with wrk at
concurrency 1, ``eth_chainId`` took 100-120 µs of server CPU a request against about 10 µs in
process.

:class:`BusyPoll` keeps the loop turning for :attr:`BusyPoll.window` seconds after each read:
every turn polls the sockets without blocking (libuv polls with a zero timeout while a
callback is ready) and yields the core to any other runnable process, so a request that comes
within the window is read by a running process instead of a sleeping one. Once the window
passes with nothing read, the loop sleeps as before: an idle server costs nothing, and a
lone request costs at most one window of polling.

A protocol starts the window only while its worker holds at most :data:`MAX_CONNECTIONS`
connections. With more, the loop rarely idles between requests, and turning it would take
CPU from the other workers and from whatever else shares the machine.
"""

from __future__ import annotations

import asyncio
import os
import time

MAX_CONNECTIONS = 2
"""The most connections a worker may hold and still poll after a read."""

_yield = getattr(os, "sched_yield", lambda: None)


class BusyPoll:
    """The polling window of one event loop (one per server: each protocol class made for a
    server holds its own)."""

    __slots__ = ("_loop", "_running", "_until", "turns", "window")

    def __init__(self, window: float) -> None:
        if window <= 0:
            raise ValueError("a polling window is longer than zero")
        self.window = window
        """Seconds the loop keeps turning after the last read."""
        self.turns = 0
        """Turns taken so far (what the tests read)."""
        self._until = 0.0
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """Whether the loop is being kept turning now."""
        return self._running

    def touch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bytes were read on ``loop``: keep it turning for :attr:`window` seconds from now."""
        self._until = time.perf_counter() + self.window
        if not self._running:
            self._running = True
            self._loop = loop
            loop.call_soon(self._turn)

    def _turn(self) -> None:
        if time.perf_counter() >= self._until:
            self._running = False
            return
        self.turns += 1
        _yield()
        self._loop.call_soon(self._turn)  # type: ignore[union-attr]  # set by touch
