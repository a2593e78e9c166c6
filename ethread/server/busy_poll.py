"""Polling for a short while before sleeping, for clients that send one request at a time.

When a worker has answered and its event loop has nothing left to do, it sleeps in
``epoll_wait`` until the next request arrives, and the kernel has to wake it. On the virtual
machines servers run on, that wake-up takes tens of microseconds of CPU and more of wall time:
for a client that sends its requests one after another on one connection (a test suite, a
script, an indexer), more than a cached answer costs. Measured on 2 vCPUs with wrk at
concurrency 1, ``eth_chainId`` took 100-120 µs of server CPU a request against about 10 µs in
process.

:class:`BusyPoll` keeps the loop turning for :attr:`BusyPoll.window` seconds after each read
and after each answer written, counted from the loop's first turn after it (so a request
answered on the loop in a millisecond, or in a thread in ten, is still followed by a full
window, in which its client sends the next one). Every turn polls the sockets without
blocking (libuv polls with a zero timeout while a callback is ready) and yields the core to
any other runnable process, so a request that comes within the window is read by a running
process instead of a sleeping one. Once the window passes with nothing read, the loop sleeps
as before: an idle server costs nothing, and a lone request costs at most two windows of
polling (one after its read, one after its answer, which overlap when it is answered on the
loop).

The HTTP protocols (:mod:`.http_protocol`, :mod:`.http_fast`) and the WebSocket one
(:func:`websocket_protocol`) share their server's window. A protocol starts it only while
its worker holds at most :data:`MAX_CONNECTIONS` connections. With more, the loop rarely
idles between requests, and turning it would take CPU from the other workers and from
whatever else shares the machine.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

MAX_CONNECTIONS = 2
"""The most connections a worker may hold and still poll after a read."""

_yield = getattr(os, "sched_yield", lambda: None)


class BusyPoll:
    """The polling window of one event loop: one per server, shared by the HTTP and WebSocket
    protocol classes made for it."""

    __slots__ = ("_fresh", "_loop", "_running", "_until", "turns", "window")

    def __init__(self, window: float) -> None:
        if window <= 0:
            raise ValueError("a polling window is longer than zero")
        self.window = window
        """Seconds the loop keeps turning after the last read."""
        self.turns = 0
        """Turns taken so far (what the tests read)."""
        self._until = 0.0
        self._fresh = False
        """A read came since the last turn: the window starts again at the next."""
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """Whether the loop is being kept turning now."""
        return self._running

    def touch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bytes were read on ``loop``: keep it turning for :attr:`window` seconds from its next
        turn (once what the bytes asked for has been done or handed on)."""
        self._fresh = True
        if not self._running:
            self._running = True
            self._loop = loop
            loop.call_soon(self._turn)

    def _turn(self) -> None:
        now = time.perf_counter()
        if self._fresh:
            self._fresh = False
            self._until = now + self.window
        elif now >= self._until:
            self._running = False
            return
        self.turns += 1
        _yield()
        self._loop.call_soon(self._turn)  # type: ignore[union-attr]  # set by touch


def polling(seconds: float) -> BusyPoll | None:
    """A server's polling window of ``seconds``, or None for 0."""
    return BusyPoll(seconds) if seconds > 0 else None


class PollingWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, starting the server's polling window after a read."""

    busy_poll: BusyPoll

    def data_received(self, data: bytes) -> None:
        """Keep the loop turning a while if this worker holds few connections; then what
        uvicorn does with the bytes."""
        if len(self.connections) <= MAX_CONNECTIONS:
            self.busy_poll.touch(self.loop)
        super().data_received(data)

    async def send(self, message: Any) -> None:
        """What uvicorn sends for the application; after a message, the window starts again
        (the client may answer it)."""
        await super().send(message)
        if len(self.connections) <= MAX_CONNECTIONS:
            self.busy_poll.touch(self.loop)


def websocket_protocol(poll: BusyPoll | None) -> Any:
    """What uvicorn is given as its WebSocket protocol: its own sans-I/O one, polling with
    ``poll`` after each read when there is a window."""
    if poll is None:
        return "websockets-sansio"
    return type("PollingWebSocketProtocol", (PollingWebSocketProtocol,), {"busy_poll": poll})
