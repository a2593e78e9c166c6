"""A misbehaving node on loopback, in front of a real one, for the fork's bounds: it forwards
JSON-RPC POSTs to ``target`` until told to misbehave, then sleeps before answering, drips its
answer (or its status line) a byte at a time, or answers with whatever a function makes.

Only the requests ``affects`` picks misbehave (by default every one), so that a dev chain can
fork through it first and meet the misbehaviour on a later read.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.support.loopback_server import LoopbackServer, QuietHandler, methods_of, post_json


class FakeUpstream(LoopbackServer):
    """``mode`` is one of ``forward``, ``sleep`` (``pause`` seconds, then the answer), ``drip``
    (headers at once, then the body one byte every ``pause`` seconds), ``drip_status`` (the
    status line itself one byte every ``pause`` seconds)."""

    def __init__(self, target: str, *, pause: float = 1.0) -> None:
        self.target = target
        self.mode = "forward"
        self.pause = pause
        self.affects: Callable[[Any], bool] = lambda request: True
        self.requests = 0
        self.methods: list[str] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        upstream = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = json.loads(body)
                upstream._note(request)
                mode = upstream.mode if upstream.affects(request) else "forward"
                if mode == "drip_status":
                    upstream._drip(self.connection, b"HTTP/1.1 200 OK\r\n" * 1000)
                    return
                if mode == "sleep":
                    upstream._stopped.wait(upstream.pause)
                payload = post_json(upstream.target, body)
                try:
                    self.start_json(len(payload))
                    if mode == "drip":
                        upstream._drip(self.connection, payload)
                    else:
                        self.wfile.write(payload)
                except OSError:
                    pass  # (the client left)

        super().__init__(Handler)

    def _note(self, request: Any) -> None:
        with self._lock:
            self.requests += 1
            self.methods.extend(methods_of(request))

    def _drip(self, connection: socket.socket, data: bytes) -> None:
        for index in range(len(data)):
            if self._stopped.wait(self.pause):
                return
            try:
                connection.sendall(data[index:index + 1])
            except OSError:
                return

    def count(self, method: str) -> int:
        with self._lock:
            return self.methods.count(method)

    def close(self) -> None:
        self._stopped.set()
        super().close()


def wait_seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds ``fn`` took, what it returned or the exception it raised)."""
    started = time.monotonic()
    try:
        result: Any = fn()
    except BaseException as exc:
        result = exc
    return time.monotonic() - started, result
