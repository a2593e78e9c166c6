"""The comparison nodes of bench_testchain.py, each behind the one provider line the token
suite has: eth-tester in process and anvil as a subprocess on loopback.

eth-tester through web3.py's ``EthereumTesterProvider`` raises eth-tester's own
``TransactionFailed`` for a revert, with the revert data flattened into a message; a node
answers JSON-RPC error 3 with the data, which web3.py turns into ``ContractLogicError`` or
``ContractCustomError``. :class:`RevertingTesterProvider` answers as a node does, so the same
suite runs on it unchanged; it adds one try/except per request.
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from eth_abi import abi
from web3 import EthereumTesterProvider
from web3.types import RPCEndpoint, RPCResponse

REPO = Path(__file__).resolve().parents[2]
PEER_PACKAGES = REPO / "tests" / "js" / "node_modules" / "@foundry-rs"
"""Where ``npm install`` in tests/js puts anvil (pinned there for the differential run)."""


class RevertingTesterProvider(EthereumTesterProvider):
    """``EthereumTesterProvider`` answering a revert as a node does: error 3 with its data."""

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        from eth_tester.exceptions import TransactionFailed

        namespace, _, endpoint = method.partition("_")
        delegator = self.api_endpoints.get(namespace, {}).get(endpoint)
        if delegator is None:
            return super().make_request(method, params)
        try:
            result = delegator(self.ethereum_tester, params)
        except TransactionFailed as exc:
            raw = _revert_data(exc)
            message = "execution reverted"
            if raw[:4] == bytes.fromhex("08c379a0"):
                message += ": " + abi.decode(["string"], raw[4:])[0]
            return {"jsonrpc": "2.0", "id": 0,  # type: ignore[typeddict-item]
                    "error": {"code": 3, "message": message, "data": "0x" + raw.hex()}}
        except NotImplementedError:
            return super().make_request(method, params)
        return {"jsonrpc": "2.0", "id": 0, "result": result}  # type: ignore[typeddict-item]


def _revert_data(exc: Exception) -> bytes:
    """The revert payload eth-tester carries: bytes, an exception holding them, or (from
    eth_call) the text of the bytes' repr."""
    raw: Any = exc.args[0] if exc.args else b""
    if isinstance(raw, Exception):
        raw = raw.args[0] if raw.args else b""
    if isinstance(raw, str) and raw.startswith(("b'", 'b"')):
        raw = ast.literal_eval(raw)
    return raw if isinstance(raw, bytes) else b""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Anvil:
    """anvil (npm ``@foundry-rs/anvil``) on a free loopback port, stopped on exit: Prague,
    automining, its default accounts (the same test mnemonic as ethread's)."""

    def __init__(self) -> None:
        installed = sorted(PEER_PACKAGES.glob("anvil-*/bin/anvil"))  # the platform's own package
        binary = os.environ.get("ANVIL") or (str(installed[0]) if installed else shutil.which("anvil"))
        if binary is None:
            raise SystemExit("anvil not found: run `npm install` in tests/js (or set ANVIL)")
        self.port = free_port()
        # anvil leaves the states it moves out of memory under ~/.foundry/anvil/tmp when it
        # stops: a home of its own, removed with it
        self.home = tempfile.mkdtemp(prefix="ethread-bench-anvil-")
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", str(self.port), "--silent"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": self.home},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit("anvil did not start") from None
                time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> Anvil:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
