"""A real ``redis-server`` for the tests (no tests here): started on a free loopback port
with its own temporary directory and no persistence, stopped at the end.

The binary comes from the system (Debian's ``redis-server`` package, which ``.ci/run``
installs); a machine without it fails the tests that need it, with the way to get it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def redis_server_binary() -> str:
    found = shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).is_file()),
        None)
    if found is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server): the Redis "
                    "ledger is tested against a real server")
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """``redis-server`` listening on 127.0.0.1:<free port>, persistence off."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="ethread-redis-")
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20.0) -> RedisServer:
        binary = redis_server_binary()
        for _attempt in range(5):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            self.process = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--dir", self._dir.name, "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--loglevel", "warning",
                 "--enable-debug-command", "local"],  # DEBUG SLEEP: a Redis that stalls
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if self._wait_ready(timeout):
                return self
            self.stop()
        raise RuntimeError("redis-server did not start")

    def _wait_ready(self, timeout: float) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def command(self, *words: str) -> bytes:
        """One command's raw reply (for FLUSHALL and checks without the client library)."""
        request = b"".join(b"$%d\r\n%s\r\n" % (len(w.encode()), w.encode()) for w in words)
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"*%d\r\n" % len(words) + request)
            return sock.recv(65536)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None

    def close(self) -> None:
        self.stop()
        self._dir.cleanup()
