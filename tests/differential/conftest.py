"""The router chain served by ethread and by anvil, for the differential trace suites
(:mod:`.test_anvil_traces`, :mod:`.test_anvil_parity_traces`)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.anvil import Peer, anvil_binary, free_port, replay, wait_for
from tests.support.router import RouterChain, Traced


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    deployed = RouterChain.deployed()
    chain = deployed.chain
    backend = chain.backend
    deployed.send_calls()
    chain.mine()
    genesis = tmp_path_factory.mktemp("trace-peer") / "genesis.json"
    genesis.write_text(json.dumps(chain.genesis))
    port = free_port()
    home = tmp_path_factory.mktemp("trace-anvil-home")
    process = subprocess.Popen(
        [str(anvil_binary()), "--init", str(genesis), "--host", "127.0.0.1", "--port", str(port),
         "--no-mining", "--order", "fifo", "--hardfork", "prague", "--accounts", "0",
         "--disable-default-create2-deployer",
         "--steps-tracing"],  # (without it anvil records no steps: its opcode logs are empty)
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(home)})
    try:
        peer = Peer(f"http://127.0.0.1:{port}")
        wait_for(peer, process)
        replay(chain, peer)
        hashes = ["0x" + itx.hash.hex() for n in (1, 2) for itx in chain.block(n).transactions]
        yield Traced(backend, peer, hashes)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
