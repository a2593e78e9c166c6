"""The bounds of a fork's reads of its node (issue 38): one deadline per exchange, retries
included, that a node sleeping or dripping its answer cannot stretch; the execution's own time
limit over its reads; a bound on the node calls one execution may cause; no read on a server's
event loop (work tried there under a budget hands back before its first request); and code a
node lied about once is asked for again at the next read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.fork.remote import RemoteError, RemoteLimits, RemoteNode
from ethread.evm import time_limit
from ethread.web3 import EthreadProvider
from tests.support.fake_upstream import FakeUpstream, wait_seconds
from tests.support.fork_proxy import CountingProxy
from tests.support.server_harness import KEY, demo_network, post, serve_in_thread, shared_demo

BALANCE_LOOP = "0x60005b803150600101600256"
"""Creation code reading BALANCE of address 0, 1, 2, ... until it is stopped: every step a new
account, so every step a read of the forked node."""


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with serve_in_thread(networks=[demo_network()]) as thread:
        yield f"http://127.0.0.1:{thread.port}/v3/{KEY}"


def rpc(chain: DevChain, method: str, *params: Any) -> dict[str, Any]:
    return EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("mode", ["sleep", "drip", "drip_status"])
def test_an_exchange_ends_at_its_deadline_whatever_the_node_does(remote: str, mode: str) -> None:
    with FakeUpstream(remote, pause=0.4 if mode != "sleep" else 30) as upstream:
        upstream.mode = mode
        node = RemoteNode(upstream.url, RemoteLimits(timeout=1.0, retries=3, backoff=0.05))
        seconds, raised = wait_seconds(lambda: node.call("eth_chainId"))
    assert isinstance(raised, RemoteError), raised
    assert "did not answer within 1 s" in raised.message
    # one deadline for the exchange: not four tries of it, nor a byte every 0.4 s for ever
    assert seconds < 3.0
    assert upstream.requests <= 2


def test_a_read_under_a_loop_budget_hands_back_before_any_request(remote: str) -> None:
    with FakeUpstream(remote) as upstream:
        node = RemoteNode(upstream.url)
        with time_limit.budget(10.0), pytest.raises(time_limit.BudgetSpent):
            node.call("eth_chainId")
        assert upstream.requests == 0
        assert node.call("eth_chainId") == hex(1337)  # off the budget it reads
        assert upstream.requests == 1


def test_the_calls_one_execution_makes_to_the_node_are_bounded(remote: str) -> None:
    with CountingProxy(remote) as proxy:
        chain = DevChain.fork(proxy.url, backend=ethread.MemoryBackend(),
                              limits=RemoteLimits(max_calls_per_execution=25))
        proxy.reset()
        answer = rpc(chain, "eth_call", {"data": BALANCE_LOOP, "gas": hex(10**9)}, "latest")
        assert answer["error"]["code"] == -32000
        assert "more than 25 values of the forked node" in answer["error"]["message"]
        assert 0 < proxy.total <= 25
        # the bound is per execution: the next call starts afresh, and reads what it needs
        demo = shared_demo()
        assert "result" in rpc(chain, "eth_getCode", "0x" + demo.storage.hex(), "latest")


def test_an_execution_waits_for_the_node_no_longer_than_its_time_limit(remote: str) -> None:
    with FakeUpstream(remote, pause=60) as upstream:
        chain = DevChain.fork(upstream.url, backend=ethread.MemoryBackend(),
                              limits=RemoteLimits(timeout=60))
        assert "result" in rpc(chain, "eth_call", {"data": "0x00"}, "latest")  # sender read
        upstream.mode = "sleep"
        balance_of_a_new_account = "0x73" + "77" * 20 + "3150"  # PUSH20 0x77.. BALANCE POP
        seconds, answer = wait_seconds(
            lambda: rpc(chain, "eth_call", {"data": balance_of_a_new_account}, "latest"))
    assert answer["error"]["message"].startswith("execution aborted (timeout = 5s)"), answer
    assert seconds < 15  # the call's 5 s, not the node's 60


def test_code_a_node_lied_about_is_fetched_again(remote: str) -> None:
    demo = shared_demo()
    target = "0x" + demo.reverter.hex()
    asked = []

    def lie_once(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if request.get("method") == "eth_getCode" and request["params"][0].lower() == target:
            asked.append(answer["result"])
            if len(asked) == 1:
                answer["result"] = "0x6001"

    with CountingProxy(remote, lie_once) as proxy:
        chain = DevChain.fork(proxy.url, backend=ethread.MemoryBackend())
        call = {"to": target, "data": "0x" + contracts.ERROR_CALL.hex()}
        first = rpc(chain, "eth_call", call, "latest")
        assert "does not match the code hash" in first["error"]["message"]
        second = rpc(chain, "eth_call", call, "latest")
        theirs = post(remote, {"jsonrpc": "2.0", "id": 1, "method": "eth_call",
                               "params": [call, "latest"]})[2]
        assert second["error"] == theirs["error"]  # the reverter's revert, as the node gives it
        assert rpc(chain, "eth_getCode", target, "latest")["result"] == post(
            remote, {"jsonrpc": "2.0", "id": 1, "method": "eth_getCode",
                     "params": [target, "latest"]})[2]["result"]
        assert len(asked) == 2  # the lie, then the honest answer, kept
