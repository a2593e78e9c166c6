"""JSON-RPC to the node a dev chain forks (``http://`` and ``https://``): batched, a bounded
number in flight, retried with backoff when a failure may pass (connection refused or reset,
HTTP 429 and 5xx; not an error object).

Every exchange has one wall-clock deadline, retries included, enforced by a watchdog that shuts
the socket down (a per-read timeout misses a dripping answer). An execution's time limit,
cancellation and call bound apply too. Under an event loop's budget
(:func:`ethread.evm.time_limit.budget`), :class:`~ethread.evm.time_limit.BudgetSpent` is raised
before the first request: the loop never waits for the network.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...backend import CancelToken, Deadline
from ...errors import Cancelled, ExecutionAborted, ServerError
from ...evm import time_limit

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_ANSWER_BYTES = 256 * 1024 * 1024
"""The most a node's answer to one request may hold (a batch of proofs is far below)."""


class RemoteError(ServerError):
    """The forked node could not be reached, or answered with an error (-32000)."""


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """How the dev chain speaks to the node it forks."""

    timeout: float = 15.0
    """Seconds one exchange with the node may take in all, retries included."""
    retries: int = 2
    """Further attempts after a failure that may pass (within :attr:`timeout`)."""
    backoff: float = 0.25
    """Seconds before the first retry; doubled for each next one."""
    batch_size: int = 50
    """Calls sent in one JSON-RPC batch."""
    concurrency: int = 4
    """Batches in flight at once."""
    max_calls_per_execution: int = 1_000
    """Calls to the node one execution (eth_call, a trace) may cause (0: no bound)."""


WATCH_STEP = 0.1
"""Seconds between two looks of a watch at its request's cancel token."""


class _Watch:
    """The sockets of one exchange, shut down when its deadline passes or its request is cancelled."""

    __slots__ = ("_lock", "cut", "done", "sockets")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.cut = False
        self.done = threading.Event()

    def watch(self, deadline: float, token: CancelToken | None) -> None:
        """Wait (in a thread of its own) until the exchange is done, or cut it."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (token is not None and token.cancelled):
                self.fire()
                return
            if self.done.wait(min(remaining, WATCH_STEP) if token is not None else remaining):
                return

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self.sockets.append(sock)
            if not self.cut:
                return
        _shut(sock)

    def fire(self) -> None:
        with self._lock:
            self.cut = True
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_watching = threading.local()
"""The :class:`_Watch` of the exchange this thread is in (``_watching.watch``)."""


@cache
def _watched(connection_class: type[http.client.HTTPConnection],
             ) -> type[http.client.HTTPConnection]:
    """``connection_class`` whose socket, once connected, joins the thread's current watch."""

    def connect(self: http.client.HTTPConnection) -> None:
        connection_class.connect(self)
        watch: _Watch | None = getattr(_watching, "watch", None)
        if watch is not None and self.sock is not None:
            watch.add(self.sock)

    return type("Watched" + connection_class.__name__, (connection_class,), {"connect": connect})


class _WatchedHTTP(urllib.request.HTTPHandler):
    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(_watched(http_class), req, **kwargs)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(_watched(http_class), req, **kwargs)


_OPENER = urllib.request.build_opener(_WatchedHTTP, _WatchedHTTPS)
"""urllib's opener (proxies from the environment and all) with watched connections."""


class _Spent(threading.local):
    """The node calls of the execution running on this thread so far."""

    limit: object | None = None
    calls: int = 0


_spent = _Spent()


class RemoteNode:
    """A JSON-RPC endpoint over HTTP."""

    def __init__(self, url: str, limits: RemoteLimits = RemoteLimits()) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteError(f"fork URL: expected http:// or https://, not {url!r}")
        self.url = url
        port = f":{parts.port}" if parts.port else ""
        self.shown_url = f"{parts.scheme}://{parts.hostname}{port}"
        """The URL without path, query or credentials (where a provider's key may be), for errors."""
        self.limits = limits
        self._ids = 0
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.requests = 0
        """HTTP requests sent (attempts included), for tests and the curious."""

    def _next_ids(self, count: int) -> range:
        with self._lock:
            first = self._ids
            self._ids += count
        return range(first, first + count)

    def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        """One call's result; :class:`RemoteError` when the node answers an error."""
        return self.batch([(method, params)])[0]

    def batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """The results of ``calls`` in their order, batched as :class:`RemoteLimits` says."""
        if not calls:
            return []
        if time_limit.under_budget():
            raise time_limit.BudgetSpent  # waiting for the network is long work: hand it back
        limit = time_limit.current_limit()
        token = Deadline.after(0).token
        deadline = time.monotonic() + self.limits.timeout
        if limit is not None:
            self._count(limit, len(calls))
            if limit.deadline.expired():
                raise ExecutionAborted(limit.timeout)
            if limit.deadline.clock is time.monotonic:
                deadline = min(deadline, limit.deadline.at)
        elif token is not None and token.cancelled:
            raise Cancelled(token.reason)
        size = self.limits.batch_size
        chunks = [list(calls[i:i + size]) for i in range(0, len(calls), size)]
        try:
            if len(chunks) == 1:
                return self._send(chunks[0], deadline, token)
            answered = self._executor().map(lambda chunk: self._send(chunk, deadline, token), chunks)
            return [result for answers in answered for result in answers]
        except RemoteError:
            if limit is not None and limit.deadline.expired():
                raise ExecutionAborted(limit.timeout) from None
            if token is not None and token.cancelled:
                raise Cancelled(token.reason) from None
            raise

    def _count(self, limit: object, calls: int) -> None:
        """Count ``calls`` against the bound of the execution (known by its time limit)."""
        bound = self.limits.max_calls_per_execution
        spent = _spent
        if spent.limit is not limit:
            spent.limit, spent.calls = limit, 0
        spent.calls += calls
        if bound and spent.calls > bound:
            raise RemoteError(f"this call reads more than {bound:,} values of the forked node "
                              f"({self.shown_url}), the server's bound for one call")

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.limits.concurrency,
                                                thread_name_prefix="ethread-fork")
            return self._pool

    def close(self) -> None:
        """Stop the threads of concurrent batches (they start again when needed)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _send(self, calls: list[tuple[str, Sequence[Any]]], deadline: float,
              token: CancelToken | None) -> list[Any]:
        ids = self._next_ids(len(calls))
        body = [{"jsonrpc": "2.0", "id": i, "method": method, "params": list(params)}
                for i, (method, params) in zip(ids, calls, strict=True)]
        payload = body[0] if len(body) == 1 else body
        answer = self._post(json.dumps(payload).encode(), deadline, token)
        answers = answer if isinstance(answer, list) else [answer]
        by_id = {entry.get("id"): entry for entry in answers if isinstance(entry, dict)}
        results = []
        for i, (method, _) in zip(ids, calls, strict=True):
            entry = by_id.get(i)
            if entry is None:
                raise RemoteError(f"the forked node gave no answer to {method}")
            error = entry.get("error")
            if error is not None:
                message = error.get("message") if isinstance(error, dict) else error
                raise RemoteError(f"the forked node refused {method}: {message}")
            results.append(entry.get("result"))
        return results

    def _post(self, data: bytes, deadline: float, token: CancelToken | None) -> Any:
        """The JSON answer to one request, retried while time is left before ``deadline``."""
        delay = self.limits.backoff
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._late()
            try:
                return json.loads(self._attempt(data, deadline, remaining, token))
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRY_STATUSES or attempt >= self.limits.retries:
                    raise RemoteError(f"the forked node answered HTTP {exc.code}") from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                if token is not None and token.cancelled:
                    raise RemoteError(f"stopped waiting for the forked node: "
                                      f"{token.reason}") from None
                if time.monotonic() >= deadline:
                    raise self._late() from None
                if attempt >= self.limits.retries or isinstance(exc, TimeoutError):
                    # (a timeout took the time a retry would have had)
                    reason = getattr(exc, "reason", exc)
                    raise RemoteError(f"the forked node at {self.shown_url} cannot be "
                                      f"reached: {reason}") from None
            except ValueError:
                raise RemoteError("the forked node answered something that is not JSON") from None
            attempt += 1
            if time.monotonic() + delay >= deadline:
                raise self._late()
            time.sleep(delay)
            delay *= 2

    def _attempt(self, data: bytes, deadline: float, remaining: float,
                 token: CancelToken | None) -> bytes:
        """One HTTP request, cut when ``deadline`` passes or ``token`` is cancelled."""
        with self._lock:
            self.requests += 1
        watch = _Watch()
        watcher = threading.Thread(target=watch.watch, args=(deadline, token), daemon=True,
                                   name="ethread-fork-watch")
        outer = getattr(_watching, "watch", None)
        _watching.watch = watch
        watcher.start()
        try:
            request = urllib.request.Request(self.url, data, {"Content-Type": "application/json"})
            with _OPENER.open(request, timeout=remaining) as response:
                body: bytes = response.read(MAX_ANSWER_BYTES + 1)
            if len(body) > MAX_ANSWER_BYTES:
                raise RemoteError(f"the forked node's answer is larger than "
                                  f"{MAX_ANSWER_BYTES:,} bytes")
            if watch.cut or time.monotonic() > deadline:
                raise TimeoutError("deadline")  # (a cut answer may still parse: not believed)
            return body
        finally:
            watch.done.set()
            _watching.watch = outer

    def _late(self) -> RemoteError:
        return RemoteError(f"the forked node at {self.shown_url} did not answer within "
                           f"{self.limits.timeout:g} s")


__all__ = ["RemoteError", "RemoteLimits", "RemoteNode"]
