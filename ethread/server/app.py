"""The ASGI application: ``POST /v3/<key>``, ``/ws/v3/<key>``, ``GET /health``.

A bare ASGI callable rather than a framework: a JSON-RPC endpoint needs one route, and every
layer between the socket and :class:`~ethread.codec.jsonrpc.Dispatcher` costs time on each
request. The order of checks on a request is: network (by port and Host), key, HTTP method,
content type, body size, parse, batch size, credits; only then does a call run. Whatever
fails, the answer is a JSON-RPC error object with a fitting HTTP status, and a request turned
away is never charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..codec.jsonrpc import Call, error_response, parse_request
from ..errors import EthreadError
from . import refusals
from .access_log import log_request
from .auth import ApiKey, KeyRing
from .config import ServiceLimits
from .credits import Billing, cost_of
from .execution import CallRunner
from .networks import Network, NetworkRouter
from .refusals import Refused
from .subscriptions import ChainFeed

log = logging.getLogger("ethread.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
HTTP_PREFIX = "/v3/"
WS_PREFIX = "/ws/v3/"
HEALTH_PATHS = ("/health", "/healthz")
SUBSCRIPTION_METHODS = frozenset({"eth_subscribe", "eth_unsubscribe"})


class ClientGone(Exception):
    """The client disconnected before its request was read."""


@dataclass
class Service:
    """Everything a request needs, shared by HTTP and WebSocket handling."""

    router: NetworkRouter
    keys: KeyRing
    billing: Billing
    runner: CallRunner
    limits: ServiceLimits
    access_log: bool = True
    poll_interval: float = 0.25
    feeds: dict[str, ChainFeed] = field(default_factory=dict)

    def network_for(self, scope: Scope, host: str | None = None) -> Network | None:
        server = scope.get("server")
        port = server[1] if server else None
        return self.router.find(port, host if host is not None else header(scope, b"host"))

    def admit(self, key: ApiKey, calls: list[Call | EthreadError]) -> Refused | None:
        """Charge every call of the request at once, or refuse it and charge nothing."""
        cost = sum(cost_of(c.method) for c in calls if isinstance(c, Call))
        if cost == 0:
            return None
        refusal = self.billing.charge(key.key_id, key.config.daily_credits,
                                      key.config.credits_per_second, cost)
        if refusal is None:
            return None
        return refusals.over_credits(refusal.reason, refusal.retry_after)

    def feed(self, network: Network) -> ChainFeed:
        feed = self.feeds.get(network.name)
        if feed is None:
            feed = self.feeds[network.name] = ChainFeed(network.backend, self.poll_interval)
        return feed


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def send_json(send: Send, status: int, body: bytes,
                    extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    headers = [*JSON_HEADERS, (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Receive, limit: int, declared: int | None) -> bytes | None:
    """The request body, or None when it is larger than ``limit``."""
    if declared is not None and declared > limit:
        return None
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientGone
    body: bytes = message.get("body", b"")
    if not message.get("more_body"):
        return body if len(body) <= limit else None
    chunks = [body]
    size = len(body)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def request_headers(scope: Scope) -> tuple[str | None, str | None, int | None]:
    """(Host, Content-Type, Content-Length) in one pass over the headers."""
    host = content_type = None
    length: int | None = None
    for key, value in scope.get("headers", ()):
        if key == b"host":
            host = value.decode("latin-1")
        elif key == b"content-type":
            content_type = value.decode("latin-1")
        elif key == b"content-length":
            try:
                length = int(value)
            except ValueError:
                length = None
    return host, content_type, length


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media in ("application/json", "application/json-rpc", "application/jsonrequest")


class RpcApp:
    """The ASGI callable. Background work (subscription feeds, the demo miner, ledger
    flushes) starts and stops with the ASGI lifespan."""

    def __init__(self, service: Service, ledger_flush_interval: float = 1.0) -> None:
        self.service = service
        self.ledger_flush_interval = ledger_flush_interval
        self._tasks: list[asyncio.Task[None]] = []
        from .websocket import WebSocketEndpoint  # the WebSocket side is its own module

        self._websocket = WebSocketEndpoint(service)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            try:
                await self.http(scope, receive, send)
            except ClientGone:
                return
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await self.lifespan(receive, send)

    # -- HTTP ----------------------------------------------------------------------------------

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        service = self.service
        path: str = scope["path"]
        if not path.startswith(HTTP_PREFIX):
            if path in HEALTH_PATHS and scope["method"] in ("GET", "HEAD"):
                await send_json(send, 200, self.health())
                return
            await self._refuse(send, refusals.not_found())
            return
        host, content_type, declared = request_headers(scope)
        network = service.network_for(scope, host)
        if network is None:
            server = scope.get("server")
            await self._refuse(send, refusals.unknown_network(
                host, server[1] if server else None))
            return
        presented = path[len(HTTP_PREFIX):].rstrip("/")
        key = service.keys.lookup(presented) if presented and "/" not in presented else None
        if key is None:
            await self._refuse(send, refusals.unauthorized())
            self._log(scope, network.name, "-", "-", 401, 0, started)
            return
        if scope["method"] != "POST":
            await self._refuse(send, refusals.method_not_allowed())
            return
        if not _is_json(content_type):
            await self._refuse(send, refusals.unsupported_media_type())
            return
        limits = service.limits
        body = await read_body(receive, limits.max_body_bytes, declared)
        if body is None:
            await self._refuse(send, refusals.body_too_large(limits.max_body_bytes))
            self._log(scope, network.name, key.masked, "-", 413, 0, started)
            return
        status, answer, extra, what = await self.answer(network, key, body)
        if answer is None:  # only notifications
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        else:
            await send_json(send, status, answer, extra)
        self._log(scope, network.name, key.masked, what, status,
                  0 if answer is None else len(answer), started)

    async def answer(self, network: Network, key: ApiKey, body: bytes,
                     ) -> tuple[int, bytes | None, tuple[tuple[bytes, bytes], ...], str]:
        """(status, body or None, extra headers, what for the log) of a JSON-RPC body."""
        service = self.service
        try:
            is_batch, calls, ids = parse_request(body)
        except EthreadError as exc:
            return 200, error_response(None, exc), (), "invalid"
        if is_batch and len(calls) > service.limits.max_batch_calls:
            too_big = refusals.batch_too_large(len(calls), service.limits.max_batch_calls)
            return too_big.status, too_big.body(), too_big.headers, f"batch({len(calls)})"
        refused = service.admit(key, calls)
        what = f"batch({len(calls)})" if is_batch else _method_of(calls[0])
        if refused is not None:
            wanted = [i for c, i in zip(calls, ids, strict=True)
                      if not (isinstance(c, Call) and c.is_notification)]
            return refused.status, refused.body(wanted if is_batch else None), refused.headers, what
        dispatcher = network.dispatcher
        if not is_batch:
            call = calls[0]
            if isinstance(call, EthreadError):
                return 200, error_response(ids[0], call), (), what
            if call.method in SUBSCRIPTION_METHODS:
                return 200, error_response(call.id, refusals.subscriptions_need_websocket()), (), what
            return 200, await service.runner.answer(dispatcher, call), (), what
        calls = [refusals.subscriptions_need_websocket()
                 if isinstance(c, Call) and c.method in SUBSCRIPTION_METHODS and not c.is_notification
                 else c for c in calls]
        answers = await service.runner.answer_batch(dispatcher, calls, ids)
        if not answers:
            return 200, None, (), what
        return 200, b"[" + b",".join(answers) + b"]", (), what

    def health(self) -> bytes:
        networks = {}
        for network in self.service.router.networks:
            try:
                networks[network.name] = {"head": network.backend.pointer("latest"),
                                          "status": "ok"}
            except Exception as exc:  # a health check reports a broken store, never raises
                networks[network.name] = {"head": None, "status": f"error: {type(exc).__name__}"}
        ok = all(n["status"] == "ok" for n in networks.values())
        return orjson.dumps({"status": "ok" if ok else "degraded", "networks": networks})

    async def _refuse(self, send: Send, refused: Refused) -> None:
        await send_json(send, refused.status, refused.body(), refused.headers)

    def _log(self, scope: Scope, network: str, key: str, what: str, status: int, size: int,
             started: float) -> None:
        if self.service.access_log:
            log_request(scope.get("client"), network, key, what, status, size,
                        time.perf_counter() - started)

    # -- lifespan ------------------------------------------------------------------------------

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.startup()
                except Exception as exc:
                    log.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def startup(self) -> None:
        for network in self.service.router.networks:
            feed = self.service.feed(network)
            self._tasks.append(asyncio.create_task(feed.run(), name=f"feed-{network.name}"))
            if network.miner is not None and network.block_time > 0:
                self._tasks.append(asyncio.create_task(self._mine(network, feed),
                                                       name=f"miner-{network.name}"))
        if self.ledger_flush_interval > 0:
            self._tasks.append(asyncio.create_task(self._flush_ledger(), name="ledger"))

    async def shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self.service.billing.ledger.close()
        self.service.runner.close()

    async def _mine(self, network: Network, feed: ChainFeed) -> None:
        """The demo chain gains a block every ``block_time`` seconds."""
        from .mining import mine_one

        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(network.block_time)
            try:
                await loop.run_in_executor(self.service.runner.fast_pool, mine_one, network.miner)
            except Exception:
                log.exception("mining a block on %s failed", network.name)
            feed.poke()

    async def _flush_ledger(self) -> None:
        ledger = self.service.billing.ledger
        while True:
            await asyncio.sleep(self.ledger_flush_interval)
            try:
                ledger.flush()
            except Exception:
                log.exception("writing the credit ledger failed")


def _method_of(call: Call | EthreadError) -> str:
    return call.method if isinstance(call, Call) else "invalid"
