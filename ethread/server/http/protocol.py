"""uvicorn's httptools protocol with a bound on how a request's headers arrive, and the rules
of a connection's end both HTTP paths follow (docs/server.md, "The HTTP path").

uvicorn waits for ever on headers that trickle in (slowloris). Here a request's line and
headers must arrive within ``header_timeout`` seconds of its first byte and add up to at most
:data:`MAX_HEADER_BYTES`, or the connection is closed (with a 400 for headers too large). The
body's deadline is the ASGI app's (:func:`ethread.server.http.app.read_body`) or the lean
path's. One timer per connection, re-armed only when it fires, checks the deadline each
request notes, instead of a timer per request.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..busy_poll import BusyPoll, KeepsPolling

MAX_HEADER_BYTES = 64 * 1024
"""Bytes of request line and headers one request may send (geth's Go server allows 1 MiB;
a JSON-RPC request needs a few hundred)."""


CLOSING = "ethread.closing"
"""The ASGI scope extension holding the connection's ``is_closing``: the application charges a
request only while its answer can still be written."""


def connection_gone(transport: asyncio.Transport) -> bool:
    """Whether a connection is closing, or its peer has reset it (an error pending on the
    socket that the loop has not reported yet), which aborts it. Asked right before a request
    is taken up (and charged), on both paths."""
    if transport.is_closing():
        return True
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    except OSError:
        return False
    if error:
        transport.abort()
        return True
    return False


class HeadersTooLarge(Exception):
    """Raised in a parser callback; httptools turns it into its parse error, which uvicorn
    answers with a 400 and a closed connection."""


class _ClosingAwareFlow(FlowControl):
    """uvicorn's read flow control, doing nothing once the transport is closing (resuming a
    closed uvloop transport logs a RuntimeError)."""

    def pause_reading(self) -> None:
        """Pause reading, unless the connection is closing."""
        if not self._transport.is_closing():
            super().pause_reading()

    def resume_reading(self) -> None:
        """Resume reading, unless the connection is closing."""
        if not self._transport.is_closing():
            super().resume_reading()


class BoundedHttpProtocol(KeepsPolling, HttpToolsProtocol):
    """uvicorn's httptools protocol with bounds on a request's headers (size and time), and
    the connection's end made explicit for both paths: nothing after the server's decision to
    close is taken up; requests sent whole before the client's input ended are answered; a
    request is charged only while its connection is open (:data:`CLOSING`); unreadable bytes
    are answered 400 after the requests before them, so a request charged is answered."""

    header_timeout: float = 30.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the header deadline for the connection's first request."""
        super().connection_made(transport)
        self.flow = _ClosingAwareFlow(transport)
        self._in_message = False
        """Whether the parser is inside a request (begun, not complete)."""
        self._late_400: str | None = None
        """A 400 to write after the answer of the request still being answered."""
        self._input_ended = False
        """Whether the client's input ended while requests were still to be answered."""
        self._header_bytes = 0
        self._watch: asyncio.TimerHandle | None = None
        self._watch_at = 0.0
        self._deadline: float | None = None
        self._phase = ""
        """What the deadline is for: "headers", "body" or "idle" (keep-alive), or "" (none)."""
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        """Parse what came (after starting the polling window, if the server polls)."""
        self.keep_polling(True)
        super().data_received(data)

    def on_response_complete(self) -> None:
        """A response is written (ASGI path): the polling window starts again, or the
        connection ends (its input ended, or a 400 is due)."""
        self.keep_polling(False)
        if self._late_400 is not None:
            if not self.pipeline:  # every request read whole before the bytes is answered
                if not self.transport.is_closing():
                    HttpToolsProtocol.send_400_response(self, self._late_400)
                return
            super().on_response_complete()  # the next of them
            self.flow.pause_reading()  # nothing after the bytes can be read
            return
        super().on_response_complete()
        self.close_if_input_ended()

    # -- the connection's end ------------------------------------------------------------------

    def eof_received(self) -> bool | None:  # type: ignore[override]  # (asyncio's allows True)
        """The client's input ended: the connection stays open for the answers of requests read
        whole (:meth:`close_if_input_ended`), else closes now."""
        if not self.transport.is_closing() and self._drop_partial() and self.busy():
            self._input_ended = True
            self.clear_deadline()
            return True
        return None

    def close_if_input_ended(self) -> None:
        """After an answer: close if the input ended and nothing is left to answer."""
        if self._input_ended and not self.busy() and not self.transport.is_closing():
            self.transport.close()

    def busy(self) -> bool:
        """Whether a request read whole is still to be answered (running or queued)."""
        cycle = self.cycle
        return bool(self.pipeline) or (cycle is not None and not cycle.response_complete)

    def _drop_partial(self) -> bool:
        """Forget a request begun but not read whole; False when it is the one being answered
        (waiting for its body: only closing ends it)."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not getattr(cycle, "more_body", False):
            return True  # the last request made was read whole: nothing was made after it
        if self.pipeline and self.pipeline[0][0] is cycle:
            self.pipeline.popleft()
            return True
        return False

    def send_400_response(self, msg: str) -> None:
        """Bytes the parser cannot read: answered 400, and the connection closed; behind a
        request still being answered, after that answer (nothing more is read)."""
        if self.transport.is_closing():
            return
        if self._drop_partial() and self.busy():
            self._late_400 = msg
            self.flow.pause_reading()
            return
        super().send_400_response(msg)

    # -- the one deadline of a connection ------------------------------------------------------

    def set_deadline(self, phase: str, seconds: float) -> None:
        """``phase`` must end within ``seconds``, else :meth:`deadline_passed` runs."""
        deadline = self.loop.time() + seconds
        self._deadline = deadline
        self._phase = phase
        if self._watch is None:
            self._arm(deadline)
        elif deadline < self._watch_at:
            self._watch.cancel()
            self._arm(deadline)

    def clear_deadline(self) -> None:
        """The current phase ended in time."""
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
        """Headers late, or idle past the keep-alive timeout: close the connection."""
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
        self._in_message = True
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
        """The headers are in, in time; a request behind the server's decision to close is
        not taken up."""
        self.clear_deadline()
        if self.transport.is_closing() and self.cycle is not None:
            return
        super().on_headers_complete()
        self.watch_closing()

    def watch_closing(self) -> None:
        """Give the request uvicorn has just made the connection's check (:data:`CLOSING`),
        which marks it gone when the connection is closing."""
        cycle = self.cycle
        if cycle is None or cycle.scope is not self.scope:
            return  # an upgrade: no cycle was made
        transport = self.transport

        def closing() -> bool:
            if connection_gone(transport):
                cycle.disconnected = True
                return True
            return False

        extensions: dict[str, Any] = self.scope.setdefault("extensions", {})  # type: ignore[assignment]
        extensions[CLOSING] = closing

    def on_message_complete(self) -> None:
        """The request is read whole."""
        self._in_message = False
        super().on_message_complete()
        cycle = self.cycle
        if (cycle is not None and cycle.response_complete and not self.pipeline
                and not self.transport.is_closing()):
            # answered before its body was in (a refusal on the headers): the body's bytes
            # stopped uvicorn's keep-alive timer, so the connection's idle deadline takes its
            # place (as on the lean path), or the connection would be held open for ever
            self.set_deadline("idle", self.timeout_keep_alive)

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the deadline timer."""
        self.clear_deadline()
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        super().connection_lost(exc)


def bounded_protocol(header_timeout: float, poll: BusyPoll | None = None) -> Any:
    """The protocol class uvicorn is given, with this header timeout and polling window."""
    return type("BoundedHttpProtocol", (BoundedHttpProtocol,), {
        "header_timeout": header_timeout, "busy_poll": poll})
