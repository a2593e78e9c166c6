"""The ASGI application: ``POST /v3/<key>``, ``/ws/v3/<key>``, ``GET /health``.

A bare ASGI callable, not a framework: one route, and no layer between the socket and the
dispatcher. Checks come in order: network (by port and Host), key, HTTP method, content type,
body size; then the pipeline (:mod:`ethread.codec.pipeline`) parses, charges and dispatches,
and :mod:`.execution` runs what it leaves pending. A failure answers a JSON-RPC error with a
fitting HTTP status, and a request turned away is never charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

import orjson

from ...backend import SelfChecking
from ...codec.envelope import Call
from ...codec.pipeline import Exchange, LocalMethod, Refused, body_too_large
from .. import refusals
from ..asgi import Message, Receive, Scope, Send, send_json
from ..keys.auth import ApiKey
from ..metrics import CONTENT_TYPE, gauge
from ..networks import Network
from ..observe import CLIENT_GONE
from ..service import Service
from ..subscriptions import ChainFeed
from ..websocket.endpoint import WS_PREFIX, WebSocketEndpoint
from .protocol import CLOSING

log = logging.getLogger("ethread.server")

HTTP_PREFIX = "/v3/"
HEALTH_PATHS = ("/health", "/healthz")
METRICS_PATH = "/metrics"


def _needs_websocket(call: Call) -> bytes:
    raise refusals.subscriptions_need_websocket()


SUBSCRIPTIONS_NEED_WEBSOCKET: dict[str, LocalMethod] = {
    "eth_subscribe": _needs_websocket, "eth_unsubscribe": _needs_websocket}
"""Over HTTP the subscription methods answer that they need the WebSocket endpoint."""


_CLOSE = ((b"connection", b"close"),)
"""Closes the connection after a 408 or 413, whose body's rest is never read."""


_CORS = ((b"access-control-allow-origin", b"*"),)


def _cors_preflight(scope: Scope) -> list[tuple[bytes, bytes]]:
    """What a CORS preflight is allowed: POST and GET, the headers it asks for."""
    asked = next((value for name, value in scope.get("headers", ())
                  if name == b"access-control-request-headers"), b"content-type")
    return [(b"access-control-allow-methods", b"GET, POST, OPTIONS"),
            (b"access-control-allow-headers", asked), (b"access-control-max-age", b"86400")]


def _with_cors(send: Send) -> Send:
    """``send`` adding the header that lets any origin read the answer."""
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *_CORS]}
        await send(message)
    return sending


class ClientGone(Exception):
    """The client disconnected before its request was answered."""


class _Started:
    """A send callable that remembers whether the response was started."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = True
        await self.send(message)


class BodyTooSlow(Exception):
    """The client did not send its whole body within the body timeout."""


async def read_body(receive: Receive, limit: int, declared: int | None,
                    timeout: float | None = None) -> bytes | None:
    """The request body, or None when larger than ``limit``; :class:`BodyTooSlow` when it
    takes longer than ``timeout`` seconds."""
    if declared is not None and declared > limit:
        return None
    try:
        async with asyncio.timeout(timeout):
            return await _read_body(receive, limit)
    except TimeoutError:
        raise BodyTooSlow from None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        if not message.get("more_body"):
            return b"".join((*chunks, chunk)) if chunks else chunk
        chunks.append(chunk)


def request_headers(headers: Iterable[tuple[bytes, bytes]],
                    ) -> tuple[str | None, str | None, int | None, bool]:
    """(Host, Content-Type, Content-Length, whether it sends ``Expect: 100-continue``) in one
    pass over a request's headers (lower-case names, as uvicorn gives them)."""
    host = content_type = None
    length: int | None = None
    expect = False
    for key, value in headers:
        if key == b"host":
            host = value.decode("latin-1")
        elif key == b"content-type":
            content_type = value.decode("latin-1")
        elif key == b"content-length":
            try:
                length = int(value)
            except ValueError:
                length = None
        elif key == b"expect":
            expect = expect or value.lower() == b"100-continue"
    return host, content_type, length, expect


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media in ("application/json", "application/json-rpc", "application/jsonrequest")


def _store_status(network: Network) -> tuple[str | None, int | None]:
    """(what is wrong with the network's store or None, its head); never raises."""
    try:
        backend = network.backend
        problem = backend.health_problem() if isinstance(backend, SelfChecking) else None
        return problem, backend.pointer("latest")
    except Exception as exc:
        return type(exc).__name__, None


class RpcApp:
    """The ASGI callable. Background work (subscription feeds, the demo miner) starts and
    stops with the ASGI lifespan."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._tasks: list[asyncio.Task[None]] = []
        self._websocket = WebSocketEndpoint(service)
        self.root_key: str | None = None
        """The key a request to ``/`` is answered with, as if it came to ``/v3/<key>``:
        anvil's keyless route, for ``ethread node`` (None: ``/`` is not found)."""
        self.cors = False
        """Answer CORS preflights and let any origin read every answer, as anvil does (for
        ``ethread node``, with the lean path off)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if self.root_key is not None and scope.get("path") == "/" and kind != "lifespan":
            prefix = HTTP_PREFIX if kind == "http" else WS_PREFIX
            scope = {**scope, "path": prefix + self.root_key}
        if self.cors and kind == "http":
            if scope["method"] == "OPTIONS":
                await send({"type": "http.response.start", "status": 204,
                            "headers": [*_CORS, *_cors_preflight(scope)]})
                await send({"type": "http.response.body", "body": b""})
                return
            send = _with_cors(send)
        if kind == "http":
            started = _Started(send)
            try:
                await self.http(scope, receive, started)
            except ClientGone:
                return
            except asyncio.CancelledError:
                # uvicorn gave up on the request (its shutdown grace ran out): a JSON answer,
                # not its text/plain 500
                if not started.started:
                    with contextlib.suppress(Exception):
                        await self._refuse(send, refusals.shutting_down())
                raise
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await self.lifespan(receive, send)

    # -- HTTP ----------------------------------------------------------------------------------

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one HTTP request: health, metrics, the admin site, or JSON-RPC."""
        started = time.perf_counter()
        service = self.service
        path: str = scope["path"]
        if not path.startswith(HTTP_PREFIX):
            if path in HEALTH_PATHS and scope["method"] in ("GET", "HEAD"):
                ok, report = self.health()
                await send_json(send, 200 if ok else 503, report)
                return
            if path == METRICS_PATH and service.observer.metrics is not None:
                await self.metrics(scope, send)
                return
            site = service.admin
            if site is not None and site.serves(path):
                await site(scope, receive, send)
                return
            await self._refuse(send, refusals.not_found())
            return
        host, content_type, declared, _ = request_headers(scope.get("headers", ()))
        server = scope.get("server")
        network, key, refused = self.gate(path, scope["method"], host, content_type,
                                          server[1] if server else None, scope.get("client"))
        if refused is not None or network is None or key is None:
            refused = refused or refusals.unauthorized()
            await self._refuse(send, refused)
            if network is not None:
                self._log(scope, network.name, key, "-", refused.status, 0, started)
            return
        limit = service.limits.max_body_bytes
        try:
            body = await read_body(receive, limit, declared, service.limits.body_timeout_seconds)
        except BodyTooSlow:
            await self._refuse(send, refusals.body_too_slow(service.limits.body_timeout_seconds),
                               _CLOSE)
            self._log(scope, network.name, key, "-", 408, 0, started)
            return
        if body is None:
            await self._refuse(send, body_too_large(limit), _CLOSE)
            self._log(scope, network.name, key, "-", 413, 0, started)
            return
        closing = scope.get("extensions", {}).get(CLOSING)
        if closing is not None and closing():  # its answer could not be sent: not charged
            return
        exchange = service.http.submit(network.dispatcher, body, partial(service.admit, key),
                                       SUBSCRIPTIONS_NEED_WEBSOCKET)
        # cheap and cached calls are answered already, a quick call on the loop here
        if exchange.pending and not service.execution.try_on_loop(exchange):
            try:
                await self._finish(exchange, receive, key.key_id)
            except ClientGone:  # the work was started: charged all the same, and counted
                self._log(scope, network.name, key, exchange.what, CLIENT_GONE, 0, started)
                raise
            except BaseException:  # the server stops, or the work failed: its fault, not
                service.refund(key, exchange)  # the client's, so what was taken goes back
                raise
            if closing is not None and closing():  # closed while the work ran: nothing can
                if service.execution.draining:     # be written (a shutdown gives it back)
                    service.refund(key, exchange)
                else:
                    self._log(scope, network.name, key, exchange.what, CLIENT_GONE, 0,
                              started)
                return
        answer = exchange.answer()
        status = exchange.status
        if answer is None:  # only notifications
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        else:
            await send_json(send, status, answer, exchange.headers)
        self._log(scope, network.name, key, exchange.what, status,
                  0 if answer is None else len(answer), started, answer)

    def gate(self, path: str, method: str, host: str | None, content_type: str | None,
             port: int | None, client: Any = None,
             ) -> tuple[Network | None, ApiKey | None, Refused | None]:
        """The checks of a request to ``/v3/<key>`` before its body is read (network, client
        address, key, HTTP method, content type), for both HTTP paths: the network and key
        as far as known, and the refusal (None: it passes)."""
        service = self.service
        network = service.router.find(port, host)
        if network is None:
            return None, None, refusals.unknown_network(host, port)
        key, refused = service.authenticate(path[len(HTTP_PREFIX):].rstrip("/"), network,
                                            client)
        if refused is not None:
            return network, key, refused
        if key is None:
            return network, None, refusals.unauthorized()
        if method != "POST":
            return network, key, refusals.method_not_allowed()
        if not _is_json(content_type):
            return network, key, refusals.unsupported_media_type()
        return network, key, None

    async def _finish(self, exchange: Exchange, receive: Receive, owner: str) -> None:
        """Run the pending work while listening for the client: a disconnect cancels it."""
        work = asyncio.ensure_future(self.service.execution.finish(exchange, tried=True,
                                                                   owner=owner))
        gone = asyncio.ensure_future(receive())
        try:
            await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            exchange.cancel()
            gone.cancel()
            raise
        if work.done():
            gone.cancel()
            work.result()
            return
        exchange.cancel()  # the only message left to receive is the disconnect
        await work
        raise ClientGone

    def health(self) -> tuple[bool, bytes]:
        """Whether every network's store reads (else 503), and the report ("degraded" when a
        worker is down)."""
        networks = {}
        for network in self.service.router.networks:
            problem, head = _store_status(network)
            networks[network.name] = {"head": head,
                                      "status": "ok" if problem is None else f"error: {problem}"}
        up, configured = self._workers_up()
        stores_read = all(n["status"] == "ok" for n in networks.values())
        ok = stores_read and up == configured
        return stores_read, orjson.dumps({"status": "ok" if ok else "degraded",
                                          "networks": networks,
                                          "workers": {"up": up, "configured": configured}})

    def _workers_up(self) -> tuple[int, int]:
        board = self.service.workers
        return (1, 1) if board is None else (board.up(), board.size)

    async def _refuse(self, send: Send, refused: Refused,
                      extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        await send_json(send, refused.status, refused.body(), refused.headers + extra)

    def _log(self, scope: Scope, network: str, key: ApiKey | None, what: str, status: int,
             size: int, started: float, answer: bytes | None = None) -> None:
        self.service.record(scope.get("client"), network, key, what, status, size,
                            time.perf_counter() - started, answer)

    async def metrics(self, scope: Scope, send: Send) -> None:
        """``GET /metrics``: every worker's metrics in the Prometheus text format."""
        metrics = self.service.observer.metrics
        assert metrics is not None
        if scope["method"] not in ("GET", "HEAD"):
            await self._refuse(send, refusals.method_not_allowed())
            return
        metrics.flush()  # this worker's latest counts, written on the thread that keeps them
        body = await self.service.execution.blocking(metrics.scrape, self._live_metrics)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", CONTENT_TYPE.encode()),
                                (b"content-length", str(len(body)).encode()),
                                (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    def _live_metrics(self) -> Iterator[Any]:
        """The gauges a scrape reads live."""
        healthy: dict[tuple[str, ...], float] = {}
        heads: dict[tuple[str, ...], float] = {}
        for network in self.service.router.networks:
            problem, head = _store_status(network)
            healthy[(network.name,)] = 1.0 if problem is None else 0.0
            if head is not None:
                heads[(network.name,)] = float(head)
        yield gauge("ethread_store_up", "1 when the network's store reads (as /health says)",
                    healthy, ("network",))
        yield gauge("ethread_chain_head", "the latest block number served", heads,
                    ("network",))
        up, configured = self._workers_up()
        yield gauge("ethread_workers_up", "worker processes serving", {(): float(up)})
        yield gauge("ethread_workers_configured", "worker processes configured",
                    {(): float(configured)})
        yield gauge("ethread_api_keys", "API keys accepted (configured and issued)",
                    {(): float(len(self.service.keys))})

    # -- lifespan ------------------------------------------------------------------------------

    async def lifespan(self, receive: Receive, send: Send) -> None:
        """Handle the ASGI lifespan messages (:meth:`startup`, :meth:`shutdown`)."""
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
        """Start each network's chain feed and miner, and the key store's sync
        (:mod:`ethread.server.keys.sync`)."""
        service = self.service
        if service.key_sync is not None:
            self._tasks.append(asyncio.create_task(
                service.key_sync.run(service.execution, service.end_revoked_sessions),
                name="key-sync"))
        for network in self.service.router.networks:
            feed = self.service.feed(network)
            self._tasks.append(asyncio.create_task(feed.run(), name=f"feed-{network.name}"))
            if network.miner is not None and network.block_time > 0:
                self._tasks.append(asyncio.create_task(self._mine(network, feed),
                                                       name=f"miner-{network.name}"))

    async def shutdown(self) -> None:
        """Cancel the feed and miner tasks and wait for them to end."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.service.key_sync is not None:
            self.service.key_sync.close()
        self.service.billing.ledger.close()
        self.service.execution.close()

    async def _mine(self, network: Network, feed: ChainFeed) -> None:
        """The demo chain gains a block every ``block_time`` seconds."""
        from ..mining import mine_one

        while True:
            await asyncio.sleep(network.block_time)
            try:
                await self.service.execution.blocking(mine_one, network.miner)
            except Exception:
                log.exception("mining a block on %s failed", network.name)
            feed.poke()

