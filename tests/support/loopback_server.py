"""An HTTP server on a free loopback port, answering from its own thread until closed: what the
test doubles in front of a node (:mod:`.fake_upstream`, :mod:`.fork_proxy`) are built on."""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing."""

    def log_message(self, *args: Any) -> None:
        pass

    def start_json(self, length: int) -> None:
        """The status line and headers of a 200 answer of ``length`` bytes of JSON."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()


def post_json(target: str, body: bytes) -> bytes:
    """The body of ``target``'s answer to ``body`` POSTed as JSON."""
    request = urllib.request.Request(target, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()  # type: ignore[no-any-return]


def methods_of(request: Any) -> list[str]:
    """The methods a JSON-RPC request (or batch) calls."""
    entries = request if isinstance(request, list) else [request]
    return [str(e.get("method")) for e in entries if isinstance(e, dict)]


class LoopbackServer:
    """Serves ``handler`` at :attr:`url` until :meth:`close`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
