"""``ethread node`` as a subprocess on a free loopback port, for the tests that point real tools
at it (cast, forge, viem) and the command's own tests; and JSON-RPC to it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .anvil import free_port
from .server_harness import call, ethread_command, post


class NodeProcess:
    """``ethread node ARGS --port <free>``: started, its banner read up to "Listening on", and
    answering. ``banner`` is what it printed; stderr (its request log) goes to a file, so that
    a long run never blocks on a full pipe."""

    def __init__(self, args: Sequence[str] = (), *, cwd: Path | None = None,
                 timeout: float = 120) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115  (closed by stop)
        self.process = subprocess.Popen(
            [*ethread_command(), "node", *args, "--port", str(self.port)], cwd=cwd,
            stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._wait(timeout)

    @property
    def banner(self) -> str:
        return "".join(self.lines)

    def _wait(self, timeout: float) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        silent = "--silent" in self.process.args
        while not silent and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.startswith("Listening on "):
                break
        while time.monotonic() < deadline and self.process.poll() is None:
            try:  # any HTTP answer will do (with --api-key, / answers 404)
                post(self.url + "/", call("eth_chainId"), timeout=2)
                return
            except OSError:
                time.sleep(0.05)
        code, err = self.stop()
        raise RuntimeError(f"ethread node did not start (exit {code}):\n{self.banner}\n"
                           f"{err[-3000:]}")

    def rpc(self, method: str, *params: Any, path: str = "/") -> Any:
        """The result of ``method`` (an error fails the test, naming the call)."""
        status, _, answer = post(self.url + path, call(method, params))
        assert status == 200 and "error" not in answer, (method, params, status, answer)
        return answer["result"]

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then wait: (exit status, what it wrote to stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
        self._stderr.seek(0)
        err = self._stderr.read()
        self._stderr.close()
        return self.process.returncode, err

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._stderr.closed:
            self.stop()


def banner_section(banner: str, title: str) -> list[str]:
    """The lines of a banner section (anvil's layout: a title, a rule, the lines up to the
    next blank line after the first entry)."""
    lines = banner.splitlines()
    start = lines.index(title) + 2
    while start < len(lines) and not lines[start].strip():
        start += 1
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        out.append(line.strip())
    return out


def banner_accounts(banner: str) -> list[tuple[str, str]]:
    """(checksummed address, balance as printed) of each account a banner lists."""
    return [re.fullmatch(r"\(\d+\) (0x[0-9a-fA-F]{40}) \((.*)\)", line).groups()  # type: ignore[union-attr]
            for line in banner_section(banner, "Available Accounts")]


def banner_keys(banner: str) -> list[str]:
    """The private keys a banner lists."""
    return [line.split()[1] for line in banner_section(banner, "Private Keys")]
