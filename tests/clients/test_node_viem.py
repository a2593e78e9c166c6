"""viem's test client (``createTestClient({mode: 'anvil'})``) with its public and wallet clients,
from tests/js, against a real ``ethread node``, unchanged from how they run against anvil
(tests/js/node_test_client.mjs); what it did is then read back from the chain here."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.support.dev_node import NodeProcess
from tests.support.paths import JS

pytestmark = pytest.mark.node

FIRST = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
SECOND = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
RICH = "0x000000000000000000000000000000000000beef"


def test_viems_test_client_runs_against_the_node() -> None:
    node_js = shutil.which("node")
    assert node_js, "node is needed for the viem test"
    assert (JS / "node_modules" / "viem").is_dir(), "run `npm install` in tests/js first (CI does)"
    with NodeProcess(["--silent"]) as node:
        done = subprocess.run([node_js, "node_test_client.mjs", node.url], cwd=JS,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        seen = json.loads(done.stdout.splitlines()[-1])
        assert [a.lower() for a in seen["accounts"]] == node.rpc("eth_accounts")
        transfer = node.rpc("eth_getTransactionByHash", seen["transfer"])
        assert transfer["from"] == FIRST and transfer["to"] == SECOND
        assert transfer["value"] == hex(2 * 10**18)
        assert node.rpc("eth_getCode", seen["token"], "latest") != "0x"
        impersonated = node.rpc("eth_getTransactionByHash", seen["impersonated"])
        assert impersonated["from"] == RICH
        assert node.rpc("eth_getCode", RICH, "latest") == "0x602a60005260206000f3"
        assert int(node.rpc("eth_blockNumber"), 16) == seen["head"]
