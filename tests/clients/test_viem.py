"""viem (from the npm registry, pinned in tests/js/package.json) against a live server:
``simulateBlocks`` and ``simulateCalls`` (eth_simulateV1, with eth_call for asset changes) on
a dev chain holding the ERC-20 of tests/contracts/Token.sol.

Needs ``node`` and ``npm install`` run in tests/js beforehand, as CI does.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from web3 import Web3

import ethread
from ethread.devchain import DevChain
from ethread.web3 import EthreadProvider
from tests.support.paths import CONTRACTS, JS
from tests.support.server_harness import serve_in_thread, url_of

pytestmark = pytest.mark.node

TOKEN = json.loads((CONTRACTS / "Token.json").read_text())["contracts"]["Token"]


def test_viem_simulates_token_transfers() -> None:
    node = shutil.which("node")
    assert node, "node is needed for the viem test"
    assert (JS / "node_modules" / "viem").is_dir(), "run `npm install` in tests/js first (CI does)"
    w3 = Web3(EthreadProvider(DevChain(ethread.MemoryBackend())))
    holder, recipient = w3.eth.accounts[:2]
    contract = w3.eth.contract(abi=TOKEN["abi"], bytecode=TOKEN["bytecode"])
    receipt = w3.eth.wait_for_transaction_receipt(
        contract.constructor("Test Token", "TST", 10**24).transact({"from": holder}))
    chain = w3.provider.chain  # type: ignore[attr-defined]
    info = json.dumps({"token": receipt.contractAddress, "holder": holder, "recipient": recipient})
    with serve_in_thread(chain.backend) as server:
        result = subprocess.run([node, "viem_simulate.mjs", url_of(server), info],
                                cwd=JS, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all viem checks passed" in result.stdout
