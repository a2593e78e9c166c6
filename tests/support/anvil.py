"""anvil (foundry's node, from the npm package ``@foundry-rs/anvil`` pinned in
tests/js/package.json) as a peer on loopback, for the differential runs, the state files and
forks of anvil.

``npm install`` in tests/js installs the binary (CI does); the tests that start it carry the
``anvil`` marker."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ethread.devchain import DevChain
from ethread.rlpcodec.transactions import encode_transaction

from .paths import JS

PEER_PACKAGES = JS / "node_modules" / "@foundry-rs"


def anvil_binary() -> Path:
    """The platform's own anvil binary from tests/js's node_modules."""
    binaries = sorted(PEER_PACKAGES.glob("anvil-*/bin/anvil"))
    assert binaries, "run `npm install` in tests/js first (CI does): it installs the peer, anvil"
    return binaries[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Peer:
    """JSON-RPC over HTTP to the peer."""

    def __init__(self, url: str) -> None:
        self.url = url

    def raw(self, method: str, *params: Any) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
        request = urllib.request.Request(self.url, body, {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    def __call__(self, method: str, *params: Any) -> Any:
        answer = self.raw(method, *params)
        assert "error" not in answer, (method, params, answer)
        return answer["result"]


def wait_for(peer: Peer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"anvil exited with {process.returncode}")
        try:
            peer("eth_chainId")
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("anvil did not start within 30 s")


def replay(chain: DevChain, peer: Peer) -> None:
    """Feed the peer every block's signed transactions, with the block's time and coinbase."""
    genesis = peer("eth_getBlockByNumber", "0x0", False)
    assert int(genesis["baseFeePerGas"], 16) == chain.block(0).header.base_fee_per_gas
    for number in range(1, chain.head.number + 1):
        block = chain.block(number)
        peer("anvil_setCoinbase", "0x" + block.header.coinbase.hex())
        if number == 1:  # anvil starts its first block at the genesis base fee instead
            peer("anvil_setNextBlockBaseFeePerGas", hex(block.header.base_fee_per_gas or 0))
        peer("evm_setNextBlockTimestamp", block.header.timestamp)
        for itx in block.transactions:
            sent = peer("eth_sendRawTransaction", "0x" + encode_transaction(itx.transaction).hex())
            assert sent == "0x" + itx.hash.hex()
        peer("evm_mine")
        theirs = peer("eth_getBlockByNumber", hex(number), False)
        assert theirs["transactions"] == ["0x" + itx.hash.hex() for itx in block.transactions], number


@contextmanager
def replaying_peer(chain: DevChain, workdir: Path, *extra: str) -> Iterator[Peer]:
    """anvil started at ``chain``'s genesis (Prague, no accounts, no mining, transactions in
    arrival order; ``extra``: further arguments) with every block of ``chain`` replayed into
    it; stopped on leaving. ``workdir`` holds the genesis file and anvil's home (anvil leaves
    the states it saves under ~/.foundry)."""
    genesis = workdir / "genesis.json"
    genesis.write_text(json.dumps(chain.genesis))
    port = free_port()
    process = subprocess.Popen(
        [str(anvil_binary()), "--init", str(genesis), "--host", "127.0.0.1", "--port", str(port),
         "--no-mining", "--order", "fifo", "--hardfork", "prague", "--accounts", "0",
         "--disable-default-create2-deployer", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(workdir)})
    try:
        peer = Peer(f"http://127.0.0.1:{port}")
        wait_for(peer, process)
        replay(chain, peer)
        yield peer
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Anvil:
    """anvil on a loopback port with its own accounts, spoken to in JSON-RPC."""

    def __init__(self, binary: Path, home: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            [str(binary), "--host", "127.0.0.1", "--port", self.url.rsplit(":", 1)[1]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(home)})
        deadline = time.monotonic() + 30
        while True:
            try:
                self("eth_chainId")
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("anvil did not start") from None
                time.sleep(0.1)

    def __call__(self, method: str, *params: Any) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                           "params": list(params)}).encode()
        request = urllib.request.Request(self.url, body, {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        assert "error" not in answer, (method, answer)
        return answer["result"]
