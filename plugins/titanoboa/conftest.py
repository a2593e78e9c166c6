"""An ``ethread node`` for the titanoboa tests, and a record of what boa asks of it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session", autouse=True)
def fresh_boa_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A HOME of the session's own: boa keeps what its forks read in ~/.cache/titanoboa, one
    file per chain id, keyed by request and block number. A dev node started again with the
    same chain id is another chain at the same numbers, which that cache would answer for."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield


@pytest.fixture(scope="session")
def node_url() -> Iterator[str]:
    """``ethread node`` on a free loopback port (this environment's), stopped at the end."""
    port = _free_port()
    ethread = [str(Path(sys.executable).with_name("ethread")), "node"]
    # BOA_TEST_NODE=/path/to/anvil runs the same tests on anvil (to compare)
    command = [os.environ["BOA_TEST_NODE"]] if os.environ.get("BOA_TEST_NODE") else ethread
    process = subprocess.Popen([*command, "--port", str(port), "--silent"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"ethread node exited: {process.stderr.read().decode()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def requests_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, int]]:
    """Every request boa sends over HTTP: (method, params, size of the batch it went in; 0 for
    a request sent alone)."""
    from boa.rpc import EthereumRPC

    made: list[tuple[str, Any, int]] = []
    fetch, fetch_multi = EthereumRPC.fetch, EthereumRPC.fetch_multi

    def recorded_fetch(self: EthereumRPC, method: str, params: Any) -> Any:
        made.append((method, params, 0))
        return fetch(self, method, params)

    def recorded_multi(self: EthereumRPC, payloads: list[tuple[str, Any]]) -> list[Any]:
        made.extend((method, params, len(payloads)) for method, params in payloads)
        return fetch_multi(self, payloads)

    monkeypatch.setattr(EthereumRPC, "fetch", recorded_fetch)
    monkeypatch.setattr(EthereumRPC, "fetch_multi", recorded_multi)
    return made
