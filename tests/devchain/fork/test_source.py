"""devchain/fork/source.py: the forked block's state read from a node and believed only once
checked: headers against their hashes and their children's parent hashes, accounts against
the block's state root, slots against the account's storage root, code against its hash, and
each value an eth_getProof answer claims against its own proof; what was checked is kept, so
a second read asks the node nothing. The node is a dev chain in this process (conftest), or
ethread's server over HTTP behind a proxy that alters its answers."""

from __future__ import annotations

from typing import Any

import pytest
from eth_utils import keccak

import ethread
from ethread.devchain import DevChain
from ethread.devchain.fork.cache import MemoryCache
from ethread.devchain.fork.remote import RemoteError
from ethread.devchain.fork.source import (
    BLANK_ROOT,
    EMPTY_CODE_HASH,
    ForkSource,
    RemoteAccount,
    check_claims,
    header_from_json,
)
from tests.support.fork_proxy import CountingProxy
from tests.support.inprocess_node import InProcessNode, NodeChain


def test_connect_takes_the_latest_block_or_the_one_asked(node_chain: NodeChain) -> None:
    chain = node_chain.chain
    latest = ForkSource.connect(InProcessNode(chain))
    assert latest.point.number == chain.head.number and latest.point.chain_id == chain.chain_id
    assert latest.point.header == chain.head and latest.point.url == "in-process"
    earlier = ForkSource.connect(InProcessNode(chain), 1)
    assert earlier.point.header == chain.block(1).header
    with pytest.raises(RemoteError, match=f"latest block is {chain.head.number}"):
        ForkSource.connect(InProcessNode(chain), 99)
    with pytest.raises(RemoteError, match="not negative"):
        ForkSource.connect(InProcessNode(chain), -1)


def test_a_cached_header_leaves_only_the_chain_id_to_ask(node_chain: NodeChain) -> None:
    cache = MemoryCache()
    ForkSource.connect(InProcessNode(node_chain.chain), 2, cache)
    node = InProcessNode(node_chain.chain)
    again = ForkSource.connect(node, 2, cache)
    assert node.asked == ["eth_chainId"] and again.point.header == node_chain.chain.block(2).header


def test_accounts_slots_and_code_are_the_nodes_and_fetched_once(node_chain: NodeChain) -> None:
    chain, store = node_chain.chain, node_chain.storage
    node = InProcessNode(chain)
    source = ForkSource.connect(node)
    account = source.account(store)
    assert account is not None and account.nonce == chain.nonce(store)
    assert account.code_hash == keccak(chain.code(store)) and account.storage_root != BLANK_ROOT
    assert source.code(account.code_hash) == chain.code(store)
    assert source.storage_many(store, [1, 2, 3, 4]) == {1: 11, 2: 22, 3: 33, 4: 0}
    rich = source.account(node_chain.rich)
    assert rich == RemoteAccount(0, 10**18, BLANK_ROOT, EMPTY_CODE_HASH)
    assert source.account(b"\x99" * 20) is None and source.storage(b"\x99" * 20, 1) == 0
    fetched, asked = source.fetched, len(node.asked)
    assert source.storage(store, 2) == 22 and source.account(store) == account
    assert (source.fetched, len(node.asked)) == (fetched, asked)  # all from the cache


def test_ancestors_are_checked_parent_by_parent(node_chain: NodeChain) -> None:
    chain = node_chain.chain
    source = ForkSource.connect(InProcessNode(chain))
    headers = source.ancestors()
    assert [h.number for h in headers] == list(range(chain.head.number - 1, -1, -1))
    assert headers == [chain.block(n).header for n in range(chain.head.number - 1, -1, -1)]
    assert [h.number for h in source.ancestors(2)] == [chain.head.number - 1, chain.head.number - 2]

    def other_parent(method: str, params: list[Any], result: Any) -> Any:
        if method == "eth_getBlockByNumber" and params[0] == "0x1":
            return _block_json(chain, 0)  # a valid block, but not block 2's parent
        return result

    lying = ForkSource.connect(InProcessNode(chain, other_parent), 2)
    with pytest.raises(RemoteError, match="block 0 is not the parent of its block 2"):
        lying.ancestors()


def _block_json(chain: DevChain, number: int) -> Any:
    return InProcessNode(chain).call("eth_getBlockByNumber", [hex(number), False])


def test_a_header_is_checked_against_its_hash(node_chain: NodeChain) -> None:
    block = _block_json(node_chain.chain, 2)
    assert header_from_json(block) == node_chain.chain.block(2).header
    with pytest.raises(RemoteError, match="does not hash to the hash it claims"):
        header_from_json({**block, "gasUsed": "0x1"})
    with pytest.raises(RemoteError, match="has no stateRoot"):
        header_from_json({k: v for k, v in block.items() if k != "stateRoot"})
    with pytest.raises(RemoteError, match="does not hold the block"):
        header_from_json(None)


def test_values_a_proof_does_not_hold_are_refused(node_chain: NodeChain) -> None:
    chain, store = node_chain.chain, node_chain.storage

    def slot_value(method: str, params: list[Any], result: Any) -> Any:
        if method == "eth_getProof" and params[1]:
            result["storageProof"][0]["proof"] = result["storageProof"][0]["proof"][:-1]
        return result

    with pytest.raises(RemoteError, match=r"proof of slot 0x1 of 0x[0-9a-f]{40} does not hold"):
        ForkSource.connect(InProcessNode(chain, slot_value)).storage(store, 1)

    def other_code(method: str, params: list[Any], result: Any) -> Any:
        return "0x00" if method == "eth_getCode" else result

    with pytest.raises(RemoteError, match="does not match the code hash"):
        ForkSource.connect(InProcessNode(chain, other_code)).account(store)

    def no_proof(method: str, params: list[Any], result: Any) -> Any:
        return {} if method == "eth_getProof" else result

    with pytest.raises(RemoteError, match="is not a proof"):
        ForkSource.connect(InProcessNode(chain, no_proof)).account(store)


def test_a_proof_answer_is_checked_slot_by_slot(node_chain: NodeChain) -> None:
    chain, store = node_chain.chain, node_chain.storage
    head = chain.head
    source = ForkSource.connect(InProcessNode(chain))
    key = (2).to_bytes(32, "big")
    answer = source.proof(store, [key], head.number, head.state_root)
    assert int(answer["storageProof"][0]["value"], 16) == 22

    def claims_more(method: str, params: list[Any], result: Any) -> Any:
        if method == "eth_getProof":
            result["storageProof"][0]["value"] = "0x17"
        return result

    with pytest.raises(RemoteError, match="claims a value its proof does not hold"):
        ForkSource.connect(InProcessNode(chain, claims_more)).proof(store, [key], head.number,
                                                                     head.state_root)


def test_claims_are_compared_with_what_the_proof_holds() -> None:
    held = RemoteAccount(nonce=1, balance=5, storage_root=BLANK_ROOT, code_hash=EMPTY_CODE_HASH)
    check_claims(b"\x01" * 20, {"balance": "0x5", "nonce": "0x1"}, held, 7)
    with pytest.raises(RemoteError, match=r"claims balance 0x6, but its proof against block 7's "
                                          r"state root holds 5"):
        check_claims(b"\x01" * 20, {"balance": "0x6"}, held, 7)
    # geth answers zero hashes for an account that does not exist
    check_claims(b"\x01" * 20, {"balance": "0x0", "codeHash": "0x" + "00" * 32}, None, 7)


# --------------------------------------------------------------------------------------------
# Over HTTP, through a proxy that alters the node's answers


def _tamper(request: dict[str, Any], answer: dict[str, Any]) -> None:
    """Changes a byte in an eth_getProof answer's last account proof node."""
    result = answer.get("result")
    if isinstance(result, dict) and result.get("accountProof"):
        last = result["accountProof"][-1]
        result["accountProof"][-1] = last[:-2] + ("00" if last[-2:] != "00" else "01")


def test_a_proof_that_does_not_hold_is_refused(remote: str) -> None:
    with CountingProxy(remote, _tamper) as proxy, \
            pytest.raises(RemoteError, match="does not hold against block"):
        DevChain.fork(proxy.url, backend=ethread.MemoryBackend())


def test_a_node_that_alters_a_balance_is_refused_naming_the_account(remote: str) -> None:
    victim = DevChain(ethread.MemoryBackend()).accounts[2].address  # a dev account the fork funds
    victim_hex = "0x" + victim.hex()

    def alter(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if request.get("method") == "eth_getProof" and request["params"][0].lower() == victim_hex:
            result = answer["result"]
            result["balance"] = hex(int(result["balance"], 16) + 10**18)

    with CountingProxy(remote, alter) as proxy:
        with pytest.raises(RemoteError, match=f"account {victim_hex} claims balance") as raised:
            DevChain.fork(proxy.url, backend=ethread.MemoryBackend())
        assert "its proof against block" in raised.value.message
