"""The router chain served by ethread and by anvil, for the differential trace suites
(:mod:`.test_anvil_traces`, :mod:`.test_anvil_parity_traces`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.anvil import replaying_peer
from tests.support.router import RouterChain, Traced


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    deployed = RouterChain.deployed()
    chain = deployed.chain
    backend = chain.backend
    deployed.send_calls()
    chain.mine()
    # (without --steps-tracing anvil records no steps: its opcode logs are empty)
    with replaying_peer(chain, tmp_path_factory.mktemp("trace-anvil"), "--steps-tracing") as peer:
        hashes = ["0x" + itx.hash.hex() for n in (1, 2) for itx in chain.block(n).transactions]
        yield Traced(backend, peer, hashes)
