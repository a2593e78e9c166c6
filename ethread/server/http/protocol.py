"""uvicorn's httptools protocol with a bound on how a request's headers arrive.

uvicorn closes a connection left idle between requests (its keep-alive timeout) but waits for
ever on a request whose headers trickle in, and keeps every header line it is sent: a few
hundred such connections (slowloris) hold file descriptors and memory for as long as their
clients like. Here a request's request line and headers must arrive within
``header_timeout`` seconds of its first byte (or of the connection's opening) and add up to
at most :data:`MAX_HEADER_BYTES`; otherwise the connection is closed (with uvicorn's 400 for
headers that are too large). The body has its own deadline: in the application on the ASGI
path (:func:`ethread.server.app.read_body`), in :mod:`.http_fast` on the lean path.

The deadlines cost no timer per request: each request notes when its current phase must end
(one clock read), and one timer per connection, re-armed only when it fires, compares. A
kept-alive connection answering thousands of requests a second arms it about once per
timeout instead of twice per request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..busy_poll import BusyPoll, KeepsPolling

MAX_HEADER_BYTES = 64 * 1024
"""Bytes of request line and headers one request may send (geth's Go server allows 1 MiB;
a JSON-RPC request needs a few hundred)."""


class HeadersTooLarge(Exception):
    """Raised in a parser callback; httptools turns it into its parse error, which uvicorn
    answers with a 400 and a closed connection."""


class BoundedHttpProtocol(KeepsPolling, HttpToolsProtocol):
    """uvicorn's httptools protocol with bounds on a request's headers: their total size, and the
    time a client has to send them."""

    header_timeout: float = 30.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the header deadline for the connection's first request."""
        super().connection_made(transport)
        self._header_bytes = 0
        self._watch: asyncio.TimerHandle | None = None
        self._watch_at = 0.0
        self._deadline: float | None = None
        self._phase = ""
        """What the deadline is for: "headers", "body" (lean path), "idle" (lean path, between
        requests: the keep-alive timeout), or "" when none runs."""
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        """Parse what came (after starting the polling window, if the server polls)."""
        self.keep_polling(True)
        super().data_received(data)

    def on_response_complete(self) -> None:
        """A response is written (on the ASGI path): the client may send its next request,
        so the polling window starts again."""
        self.keep_polling(False)
        super().on_response_complete()

    # -- the one deadline of a connection ------------------------------------------------------

    def set_deadline(self, phase: str, seconds: float) -> None:
        """The connection's current ``phase`` must end within ``seconds``;
        :meth:`deadline_passed` runs otherwise."""
        deadline = self.loop.time() + seconds
        self._deadline = deadline
        self._phase = phase
        if self._watch is None:
            self._arm(deadline)
        elif deadline < self._watch_at:
            self._watch.cancel()
            self._arm(deadline)

    def clear_deadline(self) -> None:
        """The current phase ended in time (the timer, if armed, finds nothing to do)."""
        self._deadline = None
        self._phase = ""

    def _arm(self, at: float) -> None:
        self._watch_at = at
        self._watch = self.loop.call_at(at, self._check_deadline)

    def _check_deadline(self) -> None:
        self._watch = None
        deadline = self._deadline
        if deadline is None or self.transport.is_closing():
            return
        if self.loop.time() >= deadline:
            phase = self._phase
            self.clear_deadline()
            self.deadline_passed(phase)
        else:
            self._arm(deadline)

    def deadline_passed(self, phase: str) -> None:
        """The headers did not arrive in time (or the connection idled past its keep-alive
        timeout): close the connection."""
        self.transport.close()

    # -- headers -------------------------------------------------------------------------------

    def _expect_headers(self) -> None:
        self._header_bytes = 0
        self.set_deadline("headers", self.header_timeout)

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > MAX_HEADER_BYTES:
            raise HeadersTooLarge

    def on_message_begin(self) -> None:
        """A new request on the connection: its headers have ``header_timeout`` to arrive."""
        super().on_message_begin()
        if self._phase != "headers":  # a later request on a kept-alive connection
            self._expect_headers()

    def on_url(self, url: bytes) -> None:
        """Count the request line's URL against the header bound."""
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Count a header's bytes against the bound."""
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """The headers are in: their deadline is met."""
        self.clear_deadline()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the deadline timer."""
        self.clear_deadline()
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        super().connection_lost(exc)


def bounded_protocol(header_timeout: float, poll: BusyPoll | None = None) -> Any:
    """The protocol class uvicorn is given, with this server's header timeout and polling
    window (None: none)."""
    return type("BoundedHttpProtocol", (BoundedHttpProtocol,), {
        "header_timeout": header_timeout, "busy_poll": poll})
