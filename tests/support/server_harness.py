"""Helpers shared by the server tests (no tests here): serving a backend in a thread, running
``ethread serve`` as a subprocess, and posting JSON-RPC with the standard library."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

KEY = "test-key-0123456789"
ETHREAD = [sys.executable, "-c", "import sys; from ethread.cli import main; sys.exit(main())"]
"""``ethread`` as this interpreter runs it, installed or not."""


def ethread_command() -> list[str]:
    """The installed ``ethread`` console script (the command a user runs)."""
    script = Path(sys.executable).parent / "ethread"
    if script.exists():
        return [str(script)]
    found = shutil.which("ethread")
    return [found] if found else [sys.executable, "-m", "ethread.cli"]


def post(url: str, body: Any, *, raw: bytes | None = None, headers: dict[str, str] | None = None,
         timeout: float = 30) -> tuple[int, dict[str, str], Any]:
    """(status, headers, parsed JSON body or None) of a POST, error statuses included."""
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, head, payload = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        status, head, payload = exc.code, dict(exc.headers), exc.read()
    return status, {k.lower(): v for k, v in head.items()}, json.loads(payload) if payload else None


def get(url: str, timeout: float = 10) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def call(method: str, params: Sequence[Any] = (), request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": list(params)}


def call_body(method: str, params: Sequence[Any] = (), request_id: Any = 1) -> bytes:
    """The JSON bytes of :func:`call`'s request, as a client sends them."""
    return json.dumps(call(method, params, request_id)).encode()


ENDLESS = {"data": "0x5b600056", "gas": "0x7fffffffffffffff"}
"""An eth_call of creation code ``JUMPDEST PUSH1 0 JUMP``: a loop that only a time limit, the
gas or a client leaving ends."""
RETURN_ONE = {"data": "0x600160005260206000f3"}
"""An eth_call whose creation code returns the word 1 (:data:`ONE`)."""
ONE = "0x" + "00" * 31 + "01"
BOUNDED_LIMITS = {"max_response_bytes": 60_000, "call_timeout_seconds": 3.0,
                  "ws_max_unread_bytes": 300_000, "header_timeout_seconds": 0.5,
                  "body_timeout_seconds": 0.5}
"""Small answer, time and unread-bytes bounds, for the tests of a server's limits."""


def wait_until(condition: Any, timeout: float = 30.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def raw_http(port: int, payload: bytes) -> socket.socket:
    """A loopback connection to ``port`` that has sent ``payload`` (bytes as they are)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(payload)
    return sock


def request_bytes(body: bytes, length: int | None = None) -> bytes:
    """A POST of ``body`` to the test key, its Content-Length ``length`` (default: the
    body's)."""
    return (f"POST /v3/{KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


@contextmanager
def serve_in_thread(backend: Any = None, *, networks: list[Any] | None = None,
                    **settings: Any) -> Iterator[Any]:
    """Serve ``backend`` (or ``networks``) on a free loopback port in this process.

    ``settings`` are :class:`ServerConfig` fields; ``limits`` may be a dict of overrides. The
    ledger is in memory unless ``ledger`` names a file.
    """
    from ethread.server import ServerConfig, ServerThread, make_network, prepare
    from ethread.server.config import KeyConfig

    limits = settings.pop("limits", None)
    keys = settings.pop("keys", (KeyConfig(key=KEY),))
    # (no busy polling unless asked: a polling loop in the test's own process would take
    # turns at the interpreter with the client it waits for)
    settings.setdefault("busy_poll_us", 0)
    config = ServerConfig(port=0, keys=keys, ledger=settings.pop("ledger", ":memory:"),
                          access_log=settings.pop("access_log", False), **settings)
    if limits:
        config = replace(config, limits=replace(config.limits, **limits))
    if networks is None:
        networks = [make_network("main", backend, _context(config))]
    thread = ServerThread(prepare(config, networks))
    thread.start()
    try:
        yield thread
    finally:
        thread.stop()


def _context(config: Any) -> Any:
    from ethread.server.networks import service_context

    return service_context(config)


def url_of(thread: Any, key: str = KEY) -> str:
    return f"http://127.0.0.1:{thread.port}/v3/{key}"


def ws_url_of(thread: Any, key: str = KEY) -> str:
    return f"ws://127.0.0.1:{thread.port}/ws/v3/{key}"


class ServeProcess:
    """``ethread serve ARGS --port 0`` in a subprocess; the port is read from what it prints
    (kept in ``lines``, up to the line that names the port)."""

    def __init__(self, args: Sequence[str], cwd: Path, timeout: float = 120) -> None:
        self.host = "127.0.0.1"
        self.lines: list[str] = []
        if not any(a in args for a in ("--ledger", "--config", "--workers")):
            # A single process's credits in memory: the default ledger file would land in
            # ``cwd`` (the repository for some tests) and carry one day's spending from run to
            # run, until a key ran dry.
            args = [*args, "--ledger", ":memory:"]
        self.process = subprocess.Popen(
            [*ethread_command(), "serve", *args, "--port", "0"], cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.port = self._wait_for_port(timeout)

    def _wait_for_port(self, timeout: float) -> int:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            found = re.search(r"health: http://([^:/]+):(\d+)/health", line)
            if found:
                self.host = found.group(1)
                port = int(found.group(2))
                self._wait_healthy(port, deadline)
                return port
        _, err = self.stop()
        raise RuntimeError(f"ethread serve did not start:\n{''.join(self.lines)}\n{err[-3000:]}")

    def _wait_healthy(self, port: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                if get(f"http://{self.host}:{port}/health", timeout=2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("ethread serve never answered /health")

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then wait: (exit status, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_DEMO: list[Any] = []


def shared_demo() -> Any:
    """The demo chain (``ethread.devchain.demo``), built once per test session: blocks
    of every fork, every transaction type, logs, uncles, a reverting contract."""
    if not _DEMO:
        import ethread
        from ethread.devchain.demo import demo_chain

        _DEMO.append(demo_chain(ethread.MemoryBackend()))
    return _DEMO[0]


def demo_network(block_time: float = 0.0) -> Any:
    """A network over the shared demo chain; with ``block_time`` the server mines blocks."""
    from ethread.server import make_network

    demo = shared_demo()
    return make_network("demo", demo.chain.backend, miner=demo, block_time=block_time)
