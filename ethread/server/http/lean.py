"""The lean HTTP path: ``POST /v3/<key>`` answered from the parser's callbacks, without ASGI
(docs/server.md, "The HTTP path").

For a call answered from memory, uvicorn's ASGI exchange costs several times the answer. This
protocol keeps uvicorn's parser, connection handling, upgrade and shutdown, and answers
JSON-RPC itself: once the headers of a plain ``POST /v3/...`` (no query, percent-escape,
``Expect: 100-continue`` or upgrade, nothing earlier still being answered) are in,
:meth:`RpcApp.gate <ethread.server.http.app.RpcApp.gate>` runs; the body is collected within
its limits; the pipeline runs (or at the end of the loop's turn: :mod:`.admission_turn`), and
the answer is **one** write of status line, headers and body. Pending work runs in a task, the
connection's later requests waiting behind it. Everything else goes through uvicorn's ASGI path
to :class:`~ethread.server.http.app.RpcApp`, with the same bytes (the HTTP tests run both).
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ...codec.pipeline import Admission, Exchange, Refused, body_too_large
from .. import refusals
from ..observe import CLIENT_GONE
from .admission_turn import GATHER_ABOVE_CONNECTIONS, AdmissionTurn
from .app import HTTP_PREFIX, SUBSCRIPTIONS_NEED_WEBSOCKET, RpcApp, request_headers
from .protocol import MAX_HEADER_BYTES, BoundedHttpProtocol, HeadersTooLarge, connection_gone

if TYPE_CHECKING:
    from ..busy_poll import BusyPoll
    from ..keys.auth import ApiKey
    from ..networks import Network

log = logging.getLogger("ethread.server")

_PREFIX = HTTP_PREFIX.encode()
MAX_KNOWN_HEADS = 16
"""Request heads a connection remembers (:meth:`RpcHttpProtocol.data_received`); a client
whose bodies differ in length sends a head per length. When full, it starts over."""
_JSON_LENGTH = b"content-type: application/json\r\ncontent-length: "


class _Heads:
    """Each status's line and the server's default headers, made once per list of defaults
    (uvicorn makes a new one each second); list and heads are swapped as one, so servers in
    several threads never mix them."""

    __slots__ = ("_current",)

    def __init__(self) -> None:
        self._current: tuple[list[tuple[bytes, bytes]] | None, dict[int, bytes]] = (None, {})

    def head(self, status: int, defaults: list[tuple[bytes, bytes]]) -> bytes:
        """The status line and default headers for ``status``."""
        current = self._current
        if current[0] is not defaults:  # a reference is kept: the list's id cannot recur
            current = self._current = (defaults, {})
        heads = current[1]
        head = heads.get(status)
        if head is None:
            head = heads[status] = STATUS_LINE[status] + b"".join(
                b"%s: %s\r\n" % (name, value) for name, value in defaults)
        return head


_HEADS = _Heads()


class _LeanRequest:
    """One request on the lean path, standing in for uvicorn's request cycle (which
    uvicorn's connection bookkeeping reads: ``response_complete``, ``keep_alive``,
    ``disconnected``, ``message_event.set``)."""

    __slots__ = ("admit", "chunks", "disconnected", "exchange", "keep_alive", "key",
                 "message_event", "network", "response_complete", "size", "started",
                 "transport")

    def __init__(self, network: Network, key: ApiKey, admit: Admission, keep_alive: bool,
                 started: float) -> None:
        self.network = network
        self.key = key
        self.admit = admit
        self.keep_alive = keep_alive
        self.started = started
        self.chunks: list[bytes] = []
        self.size = 0
        self.response_complete = False
        self.disconnected = False
        self.exchange: Exchange | None = None
        self.message_event = self
        self.transport: asyncio.Transport | None = None
        """Its connection's, while it waits for its turn's end (:mod:`.admission_turn`)."""

    def gone(self) -> bool:
        """Whether its client left or its connection is closing."""
        transport = self.transport
        return self.disconnected or (transport is not None and transport.is_closing())

    def set(self) -> None:
        """Called by uvicorn when the connection is lost: stop the work still running."""
        if not self.response_complete:
            self.disconnected = True
            if self.exchange is not None:
                self.exchange.cancel()


class RpcHttpProtocol(BoundedHttpProtocol):
    """uvicorn's httptools protocol with the lean path for JSON-RPC requests."""

    rpc: RpcApp
    """The application (set, as the next two, on the class :func:`rpc_protocol` makes)."""
    gather: bool = True
    """Whether requests wait for their turn's end once the worker holds many connections."""
    _turns: dict[asyncio.AbstractEventLoop, AdmissionTurn]
    """The admission turn of each loop the class serves on."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Set up the connection as uvicorn does; nothing is paused for writing yet."""
        super().connection_made(transport)
        turns = self._turns
        turn = turns.get(self.loop)
        if turn is None:
            service = self.rpc.service
            turn = turns[self.loop] = AdmissionTurn(self.loop, service, service.http,
                                                    SUBSCRIPTIONS_NEED_WEBSOCKET)
        self._turn = turn
        self._lean: _LeanRequest | None = None
        self._running: _LeanRequest | None = None
        """The lean request waiting for its turn's end or running in a task."""
        self._paused_for_writes = False
        self._passed: tuple[bytes, str | None, str | None, Network, ApiKey, Admission] | None = None
        """The path, Host and Content-Type of the connection's last request to pass the gate,
        with the network, key and admission it passed with."""
        self._heads: dict[bytes, tuple[int, Network, ApiKey, Admission]] = {}
        """Request heads (as sent) answered on the lean path and kept alive, with their
        Content-Length and what they passed the gate with (:meth:`data_received`)."""
        self._between = True
        """Whether the parser has completed a request and seen no byte of the next."""
        self._head: bytes | None = None
        """The head of the request being parsed, when it came whole at a request's start."""

    def data_received(self, data: bytes) -> None:
        """A request whose head the connection sent before, byte for byte, with its whole body
        and nothing more, is answered without the parser (the same bytes parse the same way).
        Anything else is parsed."""
        self.keep_polling(True)
        if self._between and self._running is None:
            end = data.find(b"\r\n\r\n")
            if end > 0:
                head = data[:end]
                known = self._heads.get(head)
                if known is not None and len(data) - end - 4 == known[0]:
                    self._replay(known, data[end + 4:])
                    return
                self._head = head
        HttpToolsProtocol.data_received(self, data)  # (the window is started above)

    # -- parser callbacks ------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        """A new request: what uvicorn resets, without building its ASGI scope."""
        self._in_message = True
        self.url = b""
        self.headers = []
        self._lean = None
        self._between = False
        if self._phase != "headers":
            self._expect_headers()

    def on_url(self, url: bytes) -> None:
        """What uvicorn and the header bound do with the URL, in one call."""
        self._header_bytes += len(url)
        if self._header_bytes > MAX_HEADER_BYTES:
            raise HeadersTooLarge
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        """What uvicorn and the header bound do with a header, in one call."""
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > MAX_HEADER_BYTES:
            raise HeadersTooLarge
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        """Take the request on the lean path when it is a JSON-RPC POST that can be; otherwise
        hand it to uvicorn's ASGI path."""
        self.clear_deadline()  # the headers came in time
        head, self._head = self._head, None  # only the first request of a feed has it
        if self.transport.is_closing() and self.cycle is not None:
            # behind the server's decision to close: not taken up (nor charged)
            self._lean = _LeanRequest(None, None, None, False, 0.0)  # type: ignore[arg-type]
            self._lean.response_complete = True
            return
        parser = self.parser
        url = self.url
        if (url.startswith(_PREFIX) and parser.get_method() == b"POST"
                and not parser.should_upgrade() and b"?" not in url and b"%" not in url
                and b"#" not in url
                and (self.cycle is None or self.cycle.response_complete)
                and self.limit_concurrency is None):
            host, content_type, declared, expect = request_headers(self.headers)
            if not expect:
                self._begin_lean(url, host, content_type, declared, head)
                return
        self.expect_100_continue = request_headers(self.headers)[3]
        self._asgi_scope()
        HttpToolsProtocol.on_headers_complete(self)
        self.watch_closing()

    def _asgi_scope(self) -> None:
        """The ASGI scope uvicorn would have made, with what the parser delivered since."""
        url, headers, expect = self.url, self.headers, self.expect_100_continue
        HttpToolsProtocol.on_message_begin(self)  # resets expect_100_continue
        self.url, self.headers, self.expect_100_continue = url, headers, expect
        self.scope["headers"] = headers

    def on_body(self, body: bytes) -> None:
        """Collect a lean request's body up to the limit (beyond it, count and drop)."""
        lean = self._lean
        if lean is None:
            super().on_body(body)
            return
        if lean.response_complete:
            return
        lean.size += len(body)
        if lean.size > self.rpc.service.limits.max_body_bytes:
            # answered at once, as on the ASGI path; the connection closes, the rest unread
            lean.chunks = []
            self.clear_deadline()
            self._too_large(lean)
        else:
            lean.chunks.append(body)

    def on_message_complete(self) -> None:
        """A lean request's body is in: answer it."""
        self._in_message = False
        lean = self._lean
        if lean is None:
            super().on_message_complete()
            return
        if lean.response_complete:  # answered on its headers (401, 413...): the deadline now
            return                  # running is the idle one its answer armed, or none
        self.clear_deadline()
        self._between = True  # until the parser begins another message
        chunks = lean.chunks
        lean.chunks = []
        self._answer(lean, chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def _replay(self, known: tuple[int, Network, ApiKey, Admission], body: bytes) -> None:
        """Answer a request whose head the connection sent before (:meth:`data_received`)."""
        self.clear_deadline()  # the idle deadline: the request came in time
        _, network, key, admit = known
        lean = self._lean = _LeanRequest(network, key, admit, True, self._started())
        self.cycle = lean  # type: ignore[assignment]
        self._answer(lean, body)

    # -- the lean path ---------------------------------------------------------------------------

    def _begin_lean(self, url: bytes, host: str | None, content_type: str | None,
                    declared: int | None, head: bytes | None) -> None:
        rpc = self.rpc
        started = self._started()
        parser = self.parser
        keep_alive = parser.should_keep_alive() and parser.get_http_version() != "1.0"
        passed = self._passed
        if (passed is None or passed[0] != url or passed[1] != host
                or passed[2] != content_type):
            network, key, refused = rpc.gate(url.decode("latin-1"), "POST", host, content_type,
                                             self.server[1] if self.server else None,
                                             self.client)
            if refused is not None or network is None or key is None:
                refused = refused or refusals.unauthorized()
                self._refuse_now(refused, keep_alive)
                if network is not None:
                    self._log(network.name, key, "-", refused.status, 0, started)
                return
            # the keys and networks are fixed while the server runs: the next request of the
            # connection with the same path and headers passes the same way
            passed = self._passed = (url, host, content_type, network, key,
                                     partial(rpc.service.admit, key))
        lean = self._lean = _LeanRequest(passed[3], passed[4], passed[5], keep_alive, started)
        self.cycle = lean  # type: ignore[assignment]  # uvicorn's bookkeeping reads it
        limits = rpc.service.limits
        if declared is not None and declared > limits.max_body_bytes:
            # answered before the body is read; the connection closes, so it is never read
            self._too_large(lean)
            return
        if head is not None and keep_alive and declared is not None:
            heads = self._heads
            if len(heads) >= MAX_KNOWN_HEADS:
                heads.clear()
            heads[head] = (declared, passed[3], passed[4], passed[5])
        self.set_deadline("body", limits.body_timeout_seconds)

    def _started(self) -> float:
        """When a request began, for the access log and metrics (0.0 when neither is kept)."""
        return time.perf_counter() if self.rpc.service.timed else 0.0

    def _refuse_now(self, refused: Refused, keep_alive: bool) -> None:
        """Answer a request refused on its headers; its body, if any, is read and dropped."""
        lean = _LeanRequest(None, None, None, keep_alive, 0.0)  # type: ignore[arg-type]
        self._lean = lean
        self.cycle = lean  # type: ignore[assignment]
        self._write(lean, refused.status, refused.body(), refused.headers)

    def busy(self) -> bool:
        """Whether a request read whole (lean or ASGI) is still to be answered."""
        return self._running is not None or super().busy()

    def _drop_partial(self) -> bool:
        """Forget the lean request the input ended inside (its body was never complete)."""
        lean = self._lean
        if self._in_message and lean is not None and self.cycle is lean:  # type: ignore[comparison-overlap]
            lean.response_complete = True
            return True
        return super()._drop_partial()

    def deadline_passed(self, phase: str) -> None:
        """A lean request's body late: answer 408, then close. Headers late, or idle past the
        keep-alive timeout: close."""
        lean = self._lean
        if phase != "body" or lean is None or lean.response_complete:
            self.transport.close()
            return
        limits = self.rpc.service.limits
        lean.keep_alive = False
        self._write(lean, 408, refusals.body_too_slow(limits.body_timeout_seconds).body(), ())
        self._log(lean.network.name, lean.key, "-", 408, 0, lean.started)

    def _too_large(self, lean: _LeanRequest) -> None:
        lean.keep_alive = False
        self._write(lean, 413, body_too_large(self.rpc.service.limits.max_body_bytes).body(), ())
        self._log(lean.network.name, lean.key, "-", 413, 0, lean.started)

    def _answer(self, lean: _LeanRequest, body: bytes) -> None:
        """Answer a lean request's body, at once or at the turn's end (:mod:`.admission_turn`)."""
        if connection_gone(self.transport):  # never answered, so never charged
            lean.response_complete = True
            return
        if self.gather and len(self.connections) > GATHER_ABOVE_CONNECTIONS:
            self._running = lean  # the connection's next request waits for this one
            lean.transport = self.transport
            self._turn.add(lean, body, partial(self._answer_gathered, lean))
            return
        try:
            exchange = self.rpc.service.http.submit(lean.network.dispatcher, body, lean.admit,
                                                    SUBSCRIPTIONS_NEED_WEBSOCKET)
        except Exception:
            self._failed(lean)
            return
        self._proceed(lean, exchange)

    def _answer_gathered(self, lean: _LeanRequest, exchange: Exchange | None) -> None:
        """The turn's end: a gathered request was dispatched (None: client gone, or failed)."""
        self._running = None
        if exchange is None:
            if lean.gone():
                lean.response_complete = True
            else:  # its turn failed for it (logged there)
                self._write(lean, 500, refusals.internal_error().body(), ())
            return
        self._proceed(lean, exchange)

    def _proceed(self, lean: _LeanRequest, exchange: Exchange) -> None:
        """Answer a dispatched request, or run its pending work in a task first."""
        try:
            if exchange.pending and not self.rpc.service.execution.try_on_loop(exchange):
                lean.exchange = exchange
                self._running = lean
                task = self.loop.create_task(self._finish(lean, exchange))
                task.add_done_callback(self.tasks.discard)
                self.tasks.add(task)
                return
            self._send_exchange(lean, exchange)
        except Exception:
            self._failed(lean)

    def _failed(self, lean: _LeanRequest) -> None:
        """In an ``except`` block: a bug answers -32603 (not httptools' 400) and the connection
        goes on."""
        log.exception("answering a request failed")
        if not lean.response_complete:
            self._write(lean, 500, refusals.internal_error().body(), ())

    async def _finish(self, lean: _LeanRequest, exchange: Exchange) -> None:
        """Run the pending work off the loop, then answer (unless the client left)."""
        try:
            await self.rpc.service.execution.finish(exchange, tried=True,
                                                      owner=lean.key.key_id)
        except asyncio.CancelledError:  # the server's shutdown grace ran out
            exchange.cancel()
            self.rpc.service.refund(lean.key, exchange)  # a 503 is no answer to pay for
            if not lean.disconnected:
                lean.keep_alive = False
                self._write(lean, 503, refusals.shutting_down().body(), ())
            raise
        except Exception:
            log.exception("answering a request failed")
            self.rpc.service.refund(lean.key, exchange)
            if not lean.disconnected:
                self._write(lean, 500, refusals.internal_error().body(), ())
            return
        finally:
            self._running = None
        if lean.disconnected:  # its client left while the work ran: nothing is sent, but
            lean.response_complete = True  # the work was started: charged, and counted
            self._log(lean.network.name, lean.key, exchange.what, CLIENT_GONE, 0, lean.started)
            return
        self._send_exchange(lean, exchange)

    def _send_exchange(self, lean: _LeanRequest, exchange: Exchange) -> None:
        parts = exchange.answer_parts()
        refused = exchange.refused
        status = 200 if refused is None else refused.status
        if parts is None:  # only notifications
            written = self._write(lean, 204, None, ())
        elif len(parts) == 1:
            written = self._write(lean, status, parts[0],
                                  () if refused is None else refused.headers)
        else:  # a large cached answer: its pieces are written as they are
            written = self._write(lean, status, parts, ())
        if not written:  # the connection closed first: the work was done all the same
            self._log(lean.network.name, lean.key, exchange.what, CLIENT_GONE, 0, lean.started)
            return
        self._log(lean.network.name, lean.key, exchange.what, status,
                  0 if parts is None else sum(len(part) for part in parts), lean.started,
                  None if parts is None else parts[0])

    def _write(self, lean: _LeanRequest, status: int, body: bytes | tuple[bytes, ...] | None,
               extra: tuple[tuple[bytes, bytes], ...]) -> bool:
        """The whole response in one write (a body in pieces: one ``writelines``); then the
        connection goes on or closes. False when it was closing: nothing written."""
        lean.response_complete = True
        if self._running is lean:
            self._running = None
        transport = self.transport
        if transport.is_closing():
            return False
        head = _HEADS.head(status, self.server_state.default_headers)
        end = b"\r\n" if lean.keep_alive else b"connection: close\r\n\r\n"
        if extra:
            end = b"".join(b"%s: %s\r\n" % (name, value) for name, value in extra) + end
        if body is None:
            transport.write(head + end)
        elif isinstance(body, bytes):  # head, length, the rest of the headers, body: one copy
            transport.write(b"%s%s%d\r\n%s%s" % (head, _JSON_LENGTH, len(body), end, body))
        else:
            size = sum(len(part) for part in body)
            transport.writelines((b"%s%s%d\r\n%s" % (head, _JSON_LENGTH, size, end), *body))
        if not lean.keep_alive:
            transport.close()
            return True
        if self._late_400 is not None and not self.pipeline:  # what came after could not be read
            HttpToolsProtocol.send_400_response(self, self._late_400)
            return True
        if self.pipeline:  # ASGI requests queued behind this one: uvicorn starts the next
            self.on_response_complete()  # (which renews the polling window)
        elif self._input_ended:  # the client sent nothing more: this was the last answer
            self.close_if_input_ended()
        else:  # uvicorn's end of a response, but for its keep-alive timer: the connection's
            # one deadline (http_protocol) instead of a timer armed per response
            self.keep_polling(False)  # the client may send its next request now
            self.server_state.total_requests += 1
            self.flow.resume_reading()
            if self._phase != "headers":  # a pipelined request's headers may have begun
                self.set_deadline("idle", self.timeout_keep_alive)
        if self.flow.write_paused and not self._paused_for_writes:
            # the client does not read its answers: take no more requests until it does
            self._paused_for_writes = True
            self.flow.pause_reading()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        """The client left: a lean request still running stops too."""
        if self._running is not None:
            self._running.set()
        super().connection_lost(exc)

    def resume_writing(self) -> None:
        """The client reads again: so does the server."""
        super().resume_writing()
        if self._paused_for_writes:
            self._paused_for_writes = False
            self.flow.resume_reading()

    def _log(self, network: str, key: ApiKey | None, what: str, status: int, size: int,
             started: float, answer: bytes | None = None) -> None:
        self.rpc.service.record(self.client, network, key, what, status, size,
                                time.perf_counter() - started if started else 0.0, answer)


def rpc_protocol(app: RpcApp, header_timeout: float, poll: BusyPoll | None = None,
                 gather: bool = True) -> Any:
    """The protocol class uvicorn is given for ``app``, with this header timeout, polling
    window (None: none) and ``gather`` (:mod:`.admission_turn`)."""
    return type("RpcHttpProtocol", (RpcHttpProtocol,), {
        "rpc": app, "header_timeout": header_timeout, "busy_poll": poll, "gather": gather,
        "_turns": {}})
