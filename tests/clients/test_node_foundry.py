"""Foundry's ``cast`` and ``forge`` (npm ``@foundry-rs/cast`` and ``@foundry-rs/forge``, pinned
in tests/js/package.json) against a real ``ethread node``, run as they run against anvil: the
node's URL with no key, anvil's first key.

forge compiles with a Solidity compiler it would download; offline, it is given
tests/contracts/solc-cli.js (``--use``): solc-js behind the two commands forge runs, ``solc
--version`` and ``solc --standard-json``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.dev_node import NodeProcess
from tests.support.paths import CONTRACTS, JS

pytestmark = pytest.mark.node

FIRST = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
FIRST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
SECOND = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
ETHER = 10**18
PROJECT = Path(__file__).parent / "node_foundry"
SOLC = CONTRACTS / "solc-cli.js"


def _tool(name: str) -> str:
    binary = JS / "node_modules" / ".bin" / name
    assert binary.exists(), f"run `npm install` in tests/js first (CI does): it installs {name}"
    return str(binary)


@pytest.fixture(scope="module")
def node() -> Iterator[NodeProcess]:
    with NodeProcess(["--silent"]) as running:
        yield running


def cast(node: NodeProcess, *args: str, home: Path | None = None) -> str:
    """What ``cast ARGS --rpc-url <node>`` prints (a failure fails the test with its output)."""
    done = subprocess.run([_tool("cast"), *args, "--rpc-url", node.url], capture_output=True,
                          text=True, timeout=120, env=_env(home))
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout.strip()


def _env(home: Path | None) -> dict[str, str]:
    """The environment with HOME in a scratch folder: foundry keeps its caches there."""
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
    return env


def test_cast_reads_the_node(node: NodeProcess) -> None:
    assert cast(node, "chain-id") == "31337"
    assert int(cast(node, "block-number")) == int(node.rpc("eth_blockNumber"), 16)
    assert int(cast(node, "balance", FIRST, "--block", "0")) == 10_000 * ETHER
    accounts = json.loads(cast(node, "rpc", "eth_accounts"))
    assert accounts == node.rpc("eth_accounts") and len(accounts) == 10
    assert cast(node, "client") == node.rpc("web3_clientVersion")


def test_cast_sends_and_reads_the_receipt(node: NodeProcess, tmp_path: Path) -> None:
    before = int(cast(node, "balance", SECOND))
    sent = json.loads(cast(node, "send", "--private-key", FIRST_KEY, SECOND, "--value",
                           "1.5ether", "--json", home=tmp_path))
    assert sent["status"] == "0x1"
    assert int(cast(node, "balance", SECOND)) == before + 15 * ETHER // 10
    receipt = json.loads(cast(node, "receipt", sent["transactionHash"], "--json"))
    assert receipt["blockNumber"] == sent["blockNumber"] == node.rpc("eth_blockNumber")
    assert cast(node, "tx", sent["transactionHash"], "from") == FIRST


def test_cast_drives_anvils_controls(node: NodeProcess) -> None:
    start = int(cast(node, "block-number"))
    cast(node, "rpc", "anvil_mine", "0x3")
    assert int(cast(node, "block-number")) == start + 3
    target = "0x" + "42" * 20
    cast(node, "rpc", "anvil_setBalance", target, hex(7 * ETHER))
    assert int(cast(node, "balance", target)) == 7 * ETHER
    snapshot = json.loads(cast(node, "rpc", "evm_snapshot"))
    cast(node, "rpc", "anvil_setBalance", target, "0x0")
    assert cast(node, "rpc", "evm_revert", snapshot) == "true"
    assert int(cast(node, "balance", target)) == 7 * ETHER
    cast(node, "rpc", "anvil_setCode", target, "0x602a60005260206000f3")  # returns 42
    assert int(cast(node, "call", target, "0x"), 16) == 42


def test_forge_script_broadcasts_a_deploy_and_a_call(node: NodeProcess, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    done = subprocess.run(
        [_tool("forge"), "script", "script/Deploy.s.sol:Deploy", "--offline", "--use", str(SOLC),
         "--rpc-url", node.url, "--broadcast"],
        cwd=project, capture_output=True, text=True, timeout=600,
        env={**_env(tmp_path), "DEPLOYER_KEY": FIRST_KEY})
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "ONCHAIN EXECUTION COMPLETE & SUCCESSFUL" in done.stdout
    run = json.loads((project / "broadcast" / "Deploy.s.sol" / "31337" /
                      "run-latest.json").read_text())
    create, add = run["transactions"]
    assert (create["transactionType"], add["transactionType"]) == ("CREATE", "CALL")
    counter = create["contractAddress"]
    # read back from the chain, not from forge's record
    receipts = [node.rpc("eth_getTransactionReceipt", tx["hash"]) for tx in (create, add)]
    assert [r["status"] for r in receipts] == ["0x1", "0x1"]
    assert receipts[0]["contractAddress"] == counter.lower()
    assert receipts[0]["from"] == FIRST.lower()
    assert int(cast(node, "call", counter, "count()(uint256)")) == 42
    assert cast(node, "call", counter, "owner()(address)") == FIRST
    (log,) = receipts[1]["logs"]
    assert log["address"] == counter.lower() and int(log["data"], 16) == 42
    assert node.rpc("eth_getCode", counter, "latest") != "0x"
