"""Accepting connections on a socket shared by worker processes, one at a time
(docs/scaling.md, "Workers on one machine").

An event loop's server accepts greedily: the first worker to wake takes every connection
waiting. :class:`FairListener` accepts **one** each time the socket is readable, and each
worker writes how many connections it holds on the supervisor's board
(:class:`ConnectionShare`): one holding more than another that is up leaves the next
connection to it for :data:`YIELD_SECONDS`, then takes it anyway.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

from ..workers_board import WorkerBoard

log = logging.getLogger("ethread.server")

RETRY_SECONDS = 0.1
"""How long the listener rests after an accept fails for want of resources (descriptors,
memory), rather than spinning on a socket that stays readable."""
_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
YIELD_SECONDS = 0.001
"""How long a worker holding more connections than another leaves a waiting connection to it
before taking it itself."""


@dataclass(frozen=True, slots=True)
class ConnectionShare:
    """This worker's place on the supervisor's board, and how many connections it holds now."""

    board: WorkerBoard
    slot: int
    holding: Callable[[], int]

    def ahead(self) -> bool:
        """Write this worker's count on the board; whether it holds more connections than some
        other worker that is up."""
        mine = self.holding()
        self.board.set_connections(self.slot, mine)
        fewest = self.board.fewest_elsewhere(self.slot)
        return fewest is not None and mine > fewest


class FairListener:
    """One listening socket served on ``loop`` with ``protocol_factory``; what uvicorn's
    shutdown needs of a server (:meth:`close`, :meth:`wait_closed`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket,
                 protocol_factory: Callable[[], asyncio.Protocol],
                 share: ConnectionShare | None = None) -> None:
        self.loop = loop
        self.sock = sock
        self.protocol_factory = protocol_factory
        self.share = share
        self.closed = False
        self._pending: set[asyncio.Task[object]] = set()
        sock.setblocking(False)
        loop.add_reader(sock.fileno(), self._ready)

    @property
    def pending(self) -> int:
        """Connections accepted but not yet handed to their protocol."""
        return len(self._pending)

    def _ready(self) -> None:
        if self.share is not None and self.share.ahead():
            self.loop.remove_reader(self.sock.fileno())
            self.loop.call_later(YIELD_SECONDS, self._take_then_resume)
            return
        self._accept()

    def _take_then_resume(self) -> None:
        """After yielding: take a connection still waiting, then listen again."""
        if not self.closed and self._accept():
            self.loop.add_reader(self.sock.fileno(), self._ready)

    def _accept(self) -> bool:
        """Accept one connection if one waits; False when accepting rests for want of
        resources."""
        try:
            conn, _ = self.sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return True  # another worker took it, or the client gave up
        except OSError as exc:
            if exc.errno not in _RESOURCES:
                log.warning("accepting a connection failed: %s", exc)
                return True
            log.error("cannot accept connections (%s): retrying in %.1f s", exc, RETRY_SECONDS)
            self.loop.remove_reader(self.sock.fileno())
            self.loop.call_later(RETRY_SECONDS, self._resume)
            return False
        conn.setblocking(False)
        if conn.family in (socket.AF_INET, socket.AF_INET6):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        task = self.loop.create_task(self._serve(conn))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return True

    async def _serve(self, conn: socket.socket) -> None:
        try:
            await self.loop.connect_accepted_socket(self.protocol_factory, conn)
        except OSError:
            conn.close()  # reset before it could be served: nothing to answer

    def _resume(self) -> None:
        if not self.closed:
            self.loop.add_reader(self.sock.fileno(), self._ready)

    def close(self) -> None:
        """Stop accepting (the socket itself stays open for the other workers)."""
        if not self.closed:
            self.closed = True
            self.loop.remove_reader(self.sock.fileno())

    async def wait_closed(self) -> None:
        """Wait for connections accepted but not yet handed to their protocol."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
