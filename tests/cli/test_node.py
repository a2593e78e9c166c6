"""``ethread node``: a real node process on a free loopback port, asked over JSON-RPC as the
tools that expect anvil ask it; its banner and accounts compared with anvil's own."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from eth_account import Account
from websockets.sync.client import connect

from tests.support.anvil import anvil_binary, free_port
from tests.support.dev_node import NodeProcess, banner_accounts, banner_keys, banner_section
from tests.support.server_harness import call, ethread_command, post

ETHER = 10**18
FIRST = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
SECOND = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"


def _anvil_banner(tmp_path: Path) -> str:
    """What anvil 1.7.1 prints at start with its defaults, up to "Listening on"."""
    process = subprocess.Popen([str(anvil_binary()), "--port", str(free_port())],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    lines = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Listening on"):
                break
    finally:
        process.terminate()
        process.wait(10)
    return "".join(lines)


@pytest.fixture(scope="module")
def node() -> NodeProcess:
    with NodeProcess() as running:
        yield running


@pytest.mark.anvil
def test_the_banner_lists_anvils_accounts_and_keys(node: NodeProcess, tmp_path: Path) -> None:
    anvil = _anvil_banner(tmp_path)
    assert len(banner_accounts(anvil)) == 10
    assert banner_accounts(node.banner) == banner_accounts(anvil)
    assert banner_keys(node.banner) == banner_keys(anvil)
    for title in ("Chain ID", "Base Fee", "Gas Limit", "Genesis Number"):
        assert banner_section(node.banner, title) == banner_section(anvil, title), title
    wallet = [line for line in node.banner.splitlines() if line.startswith(("Mnemonic:",
                                                                           "Derivation path:"))]
    assert wallet == [line for line in anvil.splitlines()
                      if line.startswith(("Mnemonic:", "Derivation path:"))]
    assert node.banner.splitlines()[-1] == f"Listening on 127.0.0.1:{node.port}"


@pytest.mark.anvil
def test_eth_accounts_are_anvils_ten_with_10000_ether(node: NodeProcess, tmp_path: Path) -> None:
    anvil = [address.lower() for address, _ in banner_accounts(_anvil_banner(tmp_path))]
    assert node.rpc("eth_accounts") == anvil
    assert node.rpc("eth_chainId") == hex(31337)
    assert node.rpc("net_version") == "31337"
    for address in anvil:
        assert int(node.rpc("eth_getBalance", address, "0x0"), 16) == 10_000 * ETHER


def test_a_transfer_mines_at_once(node: NodeProcess) -> None:
    before = int(node.rpc("eth_blockNumber"), 16)
    tx = node.rpc("eth_sendTransaction", {"from": FIRST, "to": SECOND, "value": hex(ETHER)})
    receipt = node.rpc("eth_getTransactionReceipt", tx)
    assert receipt is not None and receipt["status"] == "0x1"
    assert int(receipt["blockNumber"], 16) == before + 1 == int(node.rpc("eth_blockNumber"), 16)
    block = node.rpc("eth_getBlockByNumber", receipt["blockNumber"], False)
    assert block["transactions"] == [tx]
    assert abs(int(block["timestamp"], 16) - time.time()) < 30  # the wall clock, as anvil's


def test_it_answers_at_the_root_and_at_v3_with_no_key_over_http_and_websocket(
        node: NodeProcess) -> None:
    for path in ("/", "/v3/ethread-node"):
        assert node.rpc("eth_chainId", path=path) == hex(31337)
    status, _, answer = post(node.url + "/v3/someone-else", call("eth_chainId"))
    assert status == 401 and "error" in answer
    with connect(f"ws://127.0.0.1:{node.port}/") as socket:
        socket.send(json.dumps(call("eth_subscribe", ["newHeads"])))
        subscription = json.loads(socket.recv(timeout=10))["result"]
        node.rpc("evm_mine")
        mined = node.rpc("eth_blockNumber")
        heads = []
        while mined not in heads:  # (a block mined before may be announced first)
            note = json.loads(socket.recv(timeout=10))
            assert note["params"]["subscription"] == subscription
            heads.append(note["params"]["result"]["number"])


def test_flags_shape_the_chain(tmp_path: Path) -> None:
    mnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"
    args = ["--accounts", "3", "--balance", "5.5", "--chain-id", "99", "--mnemonic", mnemonic,
            "--derivation-path", "m/44'/60'/1'/0/", "--gas-limit", "40000000", "--base-fee",
            "7", "--timestamp", "1700000000", "--hardfork", "cancun"]
    with NodeProcess(args) as node:
        accounts = node.rpc("eth_accounts")
        assert len(accounts) == 3 and accounts[0] != FIRST.lower()
        assert [a.lower() for a, _ in banner_accounts(node.banner)] == accounts
        assert banner_accounts(node.banner)[0][1] == "5.500000000000000000 ETH"
        assert int(node.rpc("eth_getBalance", accounts[2], "latest"), 16) == 55 * ETHER // 10
        assert node.rpc("eth_chainId") == hex(99)
        genesis = node.rpc("eth_getBlockByNumber", "0x0", False)
        assert genesis["gasLimit"] == hex(40_000_000)
        assert genesis["baseFeePerGas"] == "0x7"
        assert genesis["timestamp"] == hex(1_700_000_000)
        assert "excessBlobGas" in genesis and "requestsHash" not in genesis  # cancun, not prague
    Account.enable_unaudited_hdwallet_features()
    expected = Account.from_mnemonic(mnemonic, account_path="m/44'/60'/1'/0/0")
    assert accounts[0] == expected.address.lower()


def test_no_mining_leaves_transactions_for_evm_mine() -> None:
    with NodeProcess(["--no-mining"]) as node:
        tx = node.rpc("eth_sendTransaction", {"from": FIRST, "to": SECOND, "value": "0x1"})
        assert node.rpc("eth_getTransactionReceipt", tx) is None
        assert node.rpc("eth_blockNumber") == "0x0"
        assert node.rpc("anvil_getAutomine") is False
        node.rpc("evm_mine")
        assert node.rpc("eth_getTransactionReceipt", tx)["blockNumber"] == "0x1"


def test_block_time_mines_on_an_interval() -> None:
    with NodeProcess(["--block-time", "1"]) as node:
        tx = node.rpc("eth_sendTransaction", {"from": FIRST, "to": SECOND, "value": "0x1"})
        deadline = time.monotonic() + 20
        while node.rpc("eth_getTransactionReceipt", tx) is None:
            assert time.monotonic() < deadline, "no block came on the interval"
            time.sleep(0.2)
        while int(node.rpc("eth_blockNumber"), 16) < 3:  # empty blocks keep coming
            assert time.monotonic() < deadline, "the interval miner stopped"
            time.sleep(0.2)


def test_state_dump_and_load_round_trip(tmp_path: Path) -> None:
    dumped = tmp_path / "state.json"
    with NodeProcess(["--dump-state", str(dumped)]) as node:
        node.rpc("eth_sendTransaction", {"from": FIRST, "to": SECOND, "value": hex(3 * ETHER)})
        node.rpc("anvil_setCode", "0x" + "ab" * 20, "0x6001600055")
        node.rpc("anvil_setStorageAt", "0x" + "ab" * 20, "0x5", "0x" + "00" * 31 + "09")
        code, _ = node.stop()
    assert code == 0
    state = json.loads(dumped.read_text())
    assert int(state["accounts"][SECOND.lower()]["balance"], 16) == 10_003 * ETHER
    with NodeProcess(["--load-state", str(dumped)]) as node:
        assert int(node.rpc("eth_getBalance", SECOND, "latest"), 16) == 10_003 * ETHER
        assert node.rpc("eth_getCode", "0x" + "ab" * 20, "latest") == "0x6001600055"
        assert int(node.rpc("eth_getStorageAt", "0x" + "ab" * 20, "0x5", "latest"), 16) == 9
    both = tmp_path / "both.json"
    with NodeProcess(["--state", str(both)]) as node:  # absent: a fresh chain, dumped at exit
        node.rpc("anvil_setBalance", SECOND, hex(12345))
    with NodeProcess(["--state", str(both)]) as node:
        assert node.rpc("eth_getBalance", SECOND, "latest") == hex(12345)


def test_an_api_key_closes_the_root(tmp_path: Path) -> None:
    with NodeProcess(["--api-key", "k-1", "--silent"]) as node:
        status, _, _ = post(node.url + "/", call("eth_chainId"))
        assert status == 404
        assert node.rpc("eth_chainId", path="/v3/k-1") == hex(31337)
        assert node.banner == ""  # --silent: no banner


def test_steps_tracing_answers_the_mined_transactions_traces() -> None:
    with NodeProcess(["--steps-tracing"]) as node:
        tx = node.rpc("eth_sendTransaction", {"from": FIRST, "to": SECOND, "value": "0x1"})
        trace = node.rpc("debug_traceTransaction", tx)
        assert trace["gas"] == 21_000 and trace["failed"] is False


@pytest.mark.parametrize(("args", "message"), [
    (["--hardfork", "foo"], "unknown hardfork 'foo'"),
    (["--hardfork", "bpo2"], "runs forks up to osaka"),
    (["--accounts", "0"], "--accounts must be between"),
    (["--balance", "lots"], "--balance: not a number"),
    (["--balance", "-1"], "--balance"),
    (["--block-time", "0"], "--block-time must be more than 0"),
    (["--block-time", "2", "--no-mining"], "cannot both be given"),
    (["--chain-id", "0"], "--chain-id must be a positive integer"),
    (["--load-state", "/nonexistent/state.json"], "--load-state: no file"),
    (["--state", "a.json", "--dump-state", "b.json"], "give it alone"),
    (["--fork-block-number", "5"], "needs --fork-url"),
    (["--mnemonic", "not a real mnemonic at all"], "--mnemonic"),
    (["--derivation-path", "44/60"], "--derivation-path must start with m/"),
    (["--port", "70000"], "--port must be 0..65535"),
    (["--no-such-flag"], "unrecognized arguments"),
    (["--accounts", "ten"], "invalid int value"),
])
def test_bad_flags_exit_2_with_a_clear_message(args: list[str], message: str) -> None:
    done = subprocess.run([*ethread_command(), "node", *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done
    assert message in done.stderr
    assert "Traceback" not in done.stderr
