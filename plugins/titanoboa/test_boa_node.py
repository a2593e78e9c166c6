"""titanoboa against ``ethread node``: network mode (``boa.set_network_env``) and fork mode
(``boa.fork``), checking what boa asks of the node as well as what it gets back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boa
import pytest
import requests
from boa.contracts.base_evm_contract import BoaError
from boa.rpc import RPCError
from eth_account import Account

COUNTER = str(Path(__file__).with_name("counter.vy"))
CALL_TRACER = {"tracer": "callTracer", "onlyTopCall": True}
MNEMONIC_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
"""The test mnemonic's first key (the node's first dev account)."""
SECOND_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
"""The test mnemonic's second key."""


def rpc(url: str, method: str, params: list[Any]) -> Any:
    answer = requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                      "params": params}, timeout=30).json()
    assert "error" not in answer, answer
    return answer["result"]


@pytest.fixture
def network(node_url: str) -> Any:
    """boa's network mode on the node, the node's first dev account as sender; boa's global
    environment put back after the test."""
    previous = boa.env
    boa.set_network_env(node_url)
    env = boa.env
    # boa probes for debug_traceTransaction with a transaction hash of zeros, which the node
    # answers as geth does ("transaction not found"): boa would take that for no tracing at
    # all (see test_debug_trace_transaction_with_call_tracer); tell it the tracer instead.
    env._tracer = CALL_TRACER
    boa.env.add_account(Account.from_key(MNEMONIC_KEY_0))
    yield env
    boa.set_env(previous)


def test_network_mode_deploys_calls_and_transacts(network: Any, node_url: str) -> None:
    counter = boa.load(COUNTER, 5)
    assert counter.count() == 5
    assert counter.owner() == Account.from_key(MNEMONIC_KEY_0).address
    assert counter.bump(3) == 8
    assert counter.count() == 8
    # the node holds it: an eth_call of count() outside boa
    selector = "0x06661abd"  # count()
    answer = rpc(node_url, "eth_call", [{"to": counter.address, "data": selector}, "latest"])
    assert int(answer, 16) == 8


def test_network_mode_revert_carries_the_reason(network: Any) -> None:
    counter = boa.load(COUNTER, 0)
    with pytest.raises(BoaError) as failure:
        counter.bump(1000)
    assert "too much" in str(failure.value)
    assert counter.count() == 0


def test_network_mode_logs(network: Any) -> None:
    counter = boa.load(COUNTER, 1)
    counter.bump(2)
    (log,) = counter.get_logs()
    assert type(log).__name__ == "Counted"
    assert log.count == 3
    assert log.by == Account.from_key(MNEMONIC_KEY_0).address


def test_anchor_uses_snapshot_and_revert(network: Any, requests_made: list[Any]) -> None:
    counter = boa.load(COUNTER, 10)
    with boa.env.anchor():
        counter.bump(5)
        assert counter.count() == 15
    assert counter.count() == 10
    asked = [method for method, _params, _batch in requests_made]
    assert "evm_snapshot" in asked and "evm_revert" in asked


def test_debug_trace_transaction_with_call_tracer(network: Any,
                                                  requests_made: list[Any]) -> None:
    # boa probes for a tracer with a transaction hash of zeros; the node answers it as geth
    # does ("transaction not found", -32000), which boa takes for "no tracer" (anvil answers an
    # empty trace). Told the tracer, boa reads each transaction's result from its trace:
    with pytest.raises(RPCError) as probe:
        boa.env._rpc.fetch("debug_traceTransaction", ["0x" + "00" * 32, CALL_TRACER])
    assert probe.value.code == -32000
    counter = boa.load(COUNTER, 7)
    assert counter.bump(4) == 11
    traced = [params for method, params, _batch in requests_made
              if method == "debug_traceTransaction" and params[1] == CALL_TRACER]
    assert traced, "boa asked for no trace"
    frame = boa.env._rpc.fetch("debug_traceTransaction", traced[-1])
    assert frame["type"] == "CALL"
    assert frame["to"].lower() == counter.address.lower()
    assert int(frame["output"], 16) == 11
    assert "calls" not in frame  # onlyTopCall


def test_network_mode_prefetches_state_with_prestate_tracer(
        network: Any, node_url: str, requests_made: list[Any]) -> None:
    # boa runs each call in its own EVM too, on state it first asks the node for with
    # debug_traceCall's prestateTracer (then compares the two results). (Deployed from the
    # second account: boa's own cache of answers, keyed by request, would otherwise answer
    # for an earlier test's identical call at the same address and block number, as boa's
    # pytest plugin rolls the node back after each test.)
    second = Account.from_key(SECOND_KEY)
    boa.env.add_account(second)
    with boa.env.prank(second.address):
        counter = boa.load(COUNTER, 21)
    assert counter.count() == 21
    prestate = [params for method, params, _batch in requests_made
                if method == "debug_traceCall" and params[2] == {"tracer": "prestateTracer"}]
    assert prestate
    trace = rpc(node_url, "debug_traceCall", prestate[-1])
    (account,) = [v for k, v in trace.items() if k.lower() == counter.address.lower()]
    assert int(account["storage"]["0x" + "00" * 32], 16) == 21
    assert account["code"].startswith("0x") and len(account["code"]) > 2


@pytest.fixture
def deployed(network: Any) -> str:
    """A counter at 40 on the node (deployed in network mode)."""
    return str(boa.load(COUNTER, 40).address)


@pytest.fixture
def forked(node_url: str, deployed: str) -> Any:
    previous = boa.env
    boa.fork(node_url, block_identifier="latest", allow_dirty=True, cache_dir=None)
    yield boa.env
    boa.set_env(previous)


def test_fork_reads_the_nodes_state(forked: Any, deployed: str, node_url: str,
                                    requests_made: list[Any]) -> None:
    counter = boa.load_partial(COUNTER).at(deployed)
    assert counter.count() == 40
    assert counter.bump(2) == 42  # run locally, in boa's own EVM
    assert counter.count() == 42
    on_node = rpc(node_url, "eth_call", [{"to": deployed, "data": "0x06661abd"}, "latest"])
    assert int(on_node, 16) == 40  # the node is untouched

    # an account is read in one batch of balance, nonce and code
    batches = {(method, batch) for method, _params, batch in requests_made if batch == 3}
    assert {method for method, _batch in batches} >= {
        "eth_getBalance", "eth_getTransactionCount", "eth_getCode"}
    # a slot nothing read yet comes from eth_getStorageAt
    assert boa.env.get_storage(deployed, 7) == 0
    assert any(method == "eth_getStorageAt" for method, _params, _batch in requests_made)
