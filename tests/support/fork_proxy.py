"""A JSON-RPC proxy on loopback in front of a node, for forking checks: it counts the calls it
forwards (by method, a batch's calls each), and can change requests on their way to the node and
answers on their way back.

Used by tests/devchain/fork/ and benchmarks/bench_fork.py; it forwards only to the URL
it is given (a loopback node in both).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.support.loopback_server import LoopbackServer, QuietHandler, methods_of, post_json

Alter = Callable[[dict[str, Any], dict[str, Any]], None]
"""Changes one answer entry in place, given the request entry it answers."""
Rewrite = Callable[[dict[str, Any]], None]
"""Changes one request entry in place before it is forwarded."""


class CountingProxy(LoopbackServer):
    """Forwards POSTs to ``target``, counting each JSON-RPC call; ``rewrite`` (when given) sees
    every request entry before it is forwarded, ``alter`` every (request, answer) pair before
    the answer goes back."""

    def __init__(self, target: str, alter: Alter | None = None, *,
                 rewrite: Rewrite | None = None) -> None:
        self.target = target
        self.alter = alter
        self.rewrite = rewrite
        self.calls: Counter[str] = Counter()
        self.requests = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                proxy._note(json.loads(body))
                if proxy.rewrite is not None:
                    body = proxy._rewritten(json.loads(body))
                payload = post_json(proxy.target, body)
                if proxy.alter is not None:
                    payload = proxy._altered(json.loads(body), json.loads(payload))
                try:
                    self.start_json(len(payload))
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # (the client left: a node being stopped)

        super().__init__(Handler)

    def _note(self, request: Any) -> None:
        with self._lock:
            self.requests += 1
            self.calls.update(methods_of(request))

    def _rewritten(self, request: Any) -> bytes:
        assert self.rewrite is not None
        for entry in request if isinstance(request, list) else [request]:
            self.rewrite(entry)
        return json.dumps(request).encode()

    def _altered(self, request: Any, answer: Any) -> bytes:
        assert self.alter is not None
        by_id = {e.get("id"): e for e in (request if isinstance(request, list) else [request])}
        for entry in answer if isinstance(answer, list) else [answer]:
            asked = by_id.get(entry.get("id"))
            if asked is not None:
                self.alter(asked, entry)
        return json.dumps(answer).encode()

    def reset(self) -> None:
        """Start counting afresh."""
        with self._lock:
            self.calls.clear()
            self.requests = 0

    @property
    def total(self) -> int:
        """Calls forwarded since the last :meth:`reset`."""
        with self._lock:
            return sum(self.calls.values())
