"""The WebSocket endpoint ``/ws/v3/<key>``: the same JSON-RPC text messages, plus
subscriptions.

The handshake of an unknown key is refused (HTTP 401 with a JSON body where possible). Each
message is charged like an HTTP request; up to :data:`MAX_IN_FLIGHT` of a connection run at
once, answered as each is done. A client leaving more than ``ws_max_unread_bytes`` (or
:data:`OUTBOX_LIMIT` messages) unread is disconnected (1008), though one answer of any size
always passes when nothing else is unread. A client that leaves cancels its running calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from functools import partial
from typing import Any

from ...codec.envelope import Call
from ...codec.pipeline import Exchange, LocalMethod, Refused
from ...errors import InvalidParams, LimitExceeded
from .. import refusals
from ..access_log import log_request
from ..asgi import Receive, Scope, Send, header
from ..keys.auth import ApiKey
from ..networks import Network
from ..observe import CLIENT_GONE
from ..service import Service
from ..subscriptions import ChainFeed, parse_subscription

log = logging.getLogger("ethread.server")

MAX_IN_FLIGHT = 32
OUTBOX_LIMIT = 4096
CLOSE_GRACE_SECONDS = 1.0
"""How long a closing session waits for its close frame to go out."""
CLOSE_POLICY = 1008
REVOKED = "the API key was revoked"
"""The reason a revoked key's sessions are closed with (code :data:`CLOSE_POLICY`)."""
CLOSE_TOO_BIG = 1009
WS_PREFIX = "/ws/v3/"


class WebSocketEndpoint:
    """The ASGI endpoint of ``/ws/v3/<API_KEY>``: checks the key, then runs a :class:`Session` for
    the connection."""

    def __init__(self, service: Service) -> None:
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        service = self.service
        path: str = scope["path"]
        network = service.network_for(scope)
        if not path.startswith(WS_PREFIX):
            await _reject(scope, send, refusals.not_found("connect to /ws/v3/<API_KEY>"))
            return
        if network is None:
            server = scope.get("server")
            await _reject(scope, send, refusals.unknown_network(
                header(scope, b"host"), server[1] if server else None))
            return
        key, refused = service.authenticate(path[len(WS_PREFIX):].rstrip("/"), network,
                                            scope.get("client"))
        if refused is not None or key is None:
            await _reject(scope, send, refused or refusals.unauthorized())
            return
        limit = service.limits.ws_connections_per_key
        open_now = service.sessions.get(key.key_id, ())
        if limit and len(open_now) >= limit:
            await _reject(scope, send, refusals.too_many_connections(limit))
            return
        await send({"type": "websocket.accept"})
        session = Session(service, network, key, send, scope.get("client"))
        sessions = service.sessions.setdefault(key.key_id, set())
        sessions.add(session)
        try:
            await session.run(receive)
        finally:
            sessions.discard(session)
            if not sessions and service.sessions.get(key.key_id) is sessions:
                del service.sessions[key.key_id]


async def _reject(scope: Scope, send: Send, refused: Refused) -> None:
    """Refuse the handshake with the JSON error when the server lets us send a response."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": refused.status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "websocket.http.response.body", "body": refused.body()})
    else:
        await send({"type": "websocket.close", "code": CLOSE_POLICY})


class Session:
    """One open WebSocket: its in-flight calls, its subscriptions and its outbox."""

    def __init__(self, service: Service, network: Network, key: ApiKey, send: Send,
                 client: Any) -> None:
        self.service = service
        self.network = network
        self.key = key
        self.send = send
        self.client = client
        self.feed: ChainFeed = service.feed(network)
        self.subscriptions: set[str] = set()
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue(OUTBOX_LIMIT)
        self.in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        self.tasks: set[asyncio.Task[None]] = set()
        self.exchanges: set[Exchange] = set()
        """Requests whose work is running, cancelled when the session ends."""
        self.unread = 0
        """Bytes queued in the outbox, not yet handed to the socket."""
        self.closing: int | None = None
        self.close_reason = ""
        self._runner: asyncio.Task[Any] | None = None
        self.admit = partial(service.admit, key)
        self.local: dict[str, LocalMethod] = {"eth_subscribe": self._subscribe,
                                              "eth_unsubscribe": self._unsubscribe}

    async def run(self, receive: Receive) -> None:
        """Serve the connection: read requests and write answers and notifications until it closes.
        """
        writer = asyncio.create_task(self._write())
        self._runner = asyncio.current_task()
        try:
            await self._read(receive)
        finally:
            self._runner = None
            await self._end(writer)

    async def _read(self, receive: Receive) -> None:
        try:
            while self.closing is None:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    break
                if message["type"] != "websocket.receive":
                    continue
                text = message.get("text")
                data: bytes = text.encode() if text is not None else message.get("bytes") or b""
                if len(data) > self.service.limits.max_ws_message_bytes:
                    self.closing = CLOSE_TOO_BIG
                    break
                await self.in_flight.acquire()
                task = asyncio.create_task(self._handle(data))
                self.tasks.add(task)
                task.add_done_callback(self._done)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.closing is None or current is None:
                raise
            current.uncancel()  # :meth:`deliver` woke the reader to close an overflowing session

    async def _end(self, writer: asyncio.Task[None]) -> None:
        self._unsubscribe_all()
        for exchange in list(self.exchanges):
            exchange.cancel()
        for task in list(self.tasks):
            task.cancel()
        self._drop_unread()
        if self.closing is not None:
            self.outbox.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(writer), CLOSE_GRACE_SECONDS)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer

    def _drop_unread(self) -> None:
        """Let go of every message still queued (a closing session sends none of them)."""
        while not self.outbox.empty():
            self.outbox.get_nowait()
        self.unread = 0

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self.in_flight.release()
        if not task.cancelled() and task.exception() is not None:
            log.error("WebSocket message failed", exc_info=task.exception())

    def deliver(self, message: bytes) -> None:
        """Queue an answer or a notification without waiting; a client that leaves more than
        its bound unread is disconnected."""
        if self.closing is not None:
            return
        limit = self.service.limits.ws_max_unread_bytes
        if (self.unread and self.unread + len(message) > limit) or self.outbox.full():
            log.warning("closing a WebSocket of %s: %d bytes in %d messages unread",
                        self.key.masked, self.unread, self.outbox.qsize())
            self.close(CLOSE_POLICY)
            return
        self.unread += len(message)
        self.outbox.put_nowait(message)

    def close(self, code: int, reason: str = "") -> None:
        """End the session: stop reading, cancel the work in flight, drop what is unread."""
        if self.closing is None:
            self.closing = code
            self.close_reason = reason
            self._drop_unread()
            if self._runner is not None:
                self._runner.cancel()

    def revoked(self) -> None:
        """The key was revoked: its subscriptions end now, and so does the session (close code
        1008, reason :data:`REVOKED`)."""
        self._unsubscribe_all()
        self.close(CLOSE_POLICY, REVOKED)

    def _unsubscribe_all(self) -> None:
        for subscription in self.subscriptions:
            self.feed.unsubscribe(subscription)
        self.subscriptions.clear()

    async def _write(self) -> None:
        while True:
            message = await self.outbox.get()
            if message is None or self.closing is not None:
                await self.send({"type": "websocket.close", "code": self.closing or 1000,
                                 "reason": self.close_reason})
                return
            self.unread -= len(message)
            text = message.decode()
            del message
            await self.send({"type": "websocket.send", "text": text})

    async def _handle(self, data: bytes) -> None:
        started = time.perf_counter()
        service = self.service
        exchange = service.websocket.submit(self.network.dispatcher, data, self.admit, self.local)
        if exchange.pending:
            self.exchanges.add(exchange)
            try:
                await service.execution.finish(exchange, owner=self.key.key_id)
            except BaseException:  # the session ends with the work in flight: not sent
                if service.execution.draining:  # (the server stops: its fault, given back)
                    service.refund(self.key, exchange)
                else:  # the client left: the work was started, charged and counted
                    self._log(exchange, None, CLIENT_GONE, started)
                raise
            finally:
                self.exchanges.discard(exchange)
        answer = exchange.answer()
        status = exchange.status
        if answer is not None:
            self.deliver(answer)
            if self.closing is not None:  # the session ended first: the answer is not sent
                if service.execution.draining:
                    service.refund(self.key, exchange)
                status = CLIENT_GONE
        self._log(exchange, answer, status, started)

    def _log(self, exchange: Exchange, answer: bytes | None, status: int, started: float,
             ) -> None:
        """What a message leaves in the usage counts, the metrics and the access log."""
        service = self.service
        seconds = time.perf_counter() - started
        service.observer.request(self.network.name, self.key, exchange.what, status, answer,
                                 seconds)
        if service.access_log:
            log_request(self.client, self.network.name, self.key.masked, "ws " + exchange.what,
                        101 if status != CLIENT_GONE else status,
                        0 if answer is None or status == CLIENT_GONE else len(answer), seconds)

    def _subscribe(self, call: Call) -> bytes:
        limits = self.service.limits
        limit = limits.max_ws_subscriptions
        if len(self.subscriptions) >= limit:
            raise LimitExceeded(
                f"too many subscriptions on this connection: the limit is {limit}")
        per_key = limits.ws_subscriptions_per_key
        if per_key and self.service.subscriptions_of(self.key.key_id) >= per_key:
            raise LimitExceeded(f"too many subscriptions for this API key: the limit is "
                                f"{per_key} over all its connections")
        kind, matcher = parse_subscription(call.params)
        subscription = self.feed.subscribe(kind, self.deliver, matcher)
        self.subscriptions.add(subscription)
        return b'"' + subscription.encode() + b'"'

    def _unsubscribe(self, call: Call) -> bytes:
        if len(call.params) != 1 or not isinstance(call.params[0], str):
            raise InvalidParams("expected one subscription id")
        subscription = call.params[0]
        if subscription not in self.subscriptions:
            return b"false"
        self.subscriptions.discard(subscription)
        return b"true" if self.feed.unsubscribe(subscription) else b"false"
