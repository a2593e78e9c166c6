"""Helpers of the provider-side tests (no tests here): ``ethread serve`` with the admin
address printed, ``ethread keys`` as a user runs it, and waiting for a condition."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .server_harness import ServeProcess, call, ethread_command, post

ADMIN_TOKEN = "admin-token-for-tests-0123456789"


class ProviderServer(ServeProcess):
    """``ethread serve`` whose admin and metrics addresses are read from what it prints."""

    def __init__(self, args: Sequence[str], cwd: Path, timeout: float = 120) -> None:
        super().__init__(args, cwd, timeout)
        self.admin = next((m.group(1) for line in self.lines
                           if (m := re.search(r"admin: (http://[^/ ]+)/admin", line))), None)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def rpc(self, key: str, method: str = "eth_blockNumber", params: Sequence[Any] = (),
            ) -> tuple[int, Any]:
        status, _, body = post(f"{self.base}/v3/{key}", call(method, params))
        return status, body


def keys_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ethread keys ARGS`` as a user runs it."""
    return subprocess.run([*ethread_command(), "keys", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env={**os.environ})


def create_key(ledger: str, cwd: Path, *extra: str) -> dict[str, Any]:
    done = keys_cli("create", "--ledger", ledger, "--json", *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def usage(ledger: str, ident: str, cwd: Path) -> dict[str, Any]:
    done = keys_cli("usage", ident, "--ledger", ledger, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def within(seconds: float, check: Callable[[], bool], pause: float = 0.02) -> float:
    """How long ``check`` took to hold (it must within ``seconds``)."""
    started = time.monotonic()
    while True:
        if check():
            return time.monotonic() - started
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(pause)


def admin_request(server: ProviderServer, method: str, path: str, body: Any = None,
                  token: str = ADMIN_TOKEN) -> tuple[int, Any]:
    """One admin API request (status, parsed JSON)."""
    assert server.admin is not None
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{server.admin}{path}", data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")
