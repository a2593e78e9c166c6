"""ethers.js v6 (from the npm registry, pinned in tests/js/package.json) against a live
server: a JsonRpcProvider and a WebSocketProvider read blocks, transactions, receipts, logs,
uncles, balances, nonces, code, storage and fees, see a revert as CALL_EXCEPTION with its
reason, and follow new blocks and (through eth_newFilter/eth_getFilterChanges) new logs on the
growing demo chain; and a JsonRpcProvider reads the rpc-compat chain's known answers.

Needs ``node`` and ``npm install`` run in tests/js beforehand, as CI does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.paths import JS
from tests.support.server_harness import demo_network, serve_in_thread, shared_demo, url_of, ws_url_of

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with serve_in_thread(networks=[demo_network(block_time=0.3)]) as thread:
        yield thread


def test_ethers_v6_over_http_and_websocket(server: Any) -> None:
    node = shutil.which("node")
    assert node, "node is needed for the ethers.js test"
    assert (JS / "node_modules" / "ethers").is_dir(), \
        "run `npm install` in tests/js first (CI does)"
    demo = shared_demo()
    info = json.dumps({"reverter": "0x" + demo.reverter.hex(),
                       "logEmitter": "0x" + demo.log_emitter.hex()})
    result = subprocess.run([node, "ethers_client.mjs", url_of(server), ws_url_of(server), info],
                            cwd=JS, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all ethers checks passed" in result.stdout


def test_ethers_v6_reads_the_rpc_compat_chain(rpc_compat_memory: Any) -> None:
    node = shutil.which("node")
    assert node, "node is needed for the ethers.js test"
    with serve_in_thread(rpc_compat_memory) as thread:
        result = subprocess.run([node, "ethers_rpc_compat.mjs", url_of(thread)],
                                cwd=JS, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all ethers checks passed" in result.stdout
