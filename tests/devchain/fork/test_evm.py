"""devchain/fork/evm.py: py-evm on a forked chain. The chain config of a fork is the public
network's schedule when ethread knows the chain id, else the schedule given; every VM it gives
reads what the chain has not written from the forked block (made once per VM class); a block's
writes are noted for the overlay (an account's too, which py-evm writes past the wrapped
tries), and a write a transaction reverts never reaches it."""

from __future__ import annotations

import pytest

import ethread
from ethread.devchain import DevChain, ForkSchedule, contracts
from ethread.devchain.fork.evm import ForkChainConfig, fork_chain_config
from ethread.devchain.fork.overlay import ForkOverlay
from ethread.devchain.fork.source import ForkSource
from tests.support.contracts import load_calldata
from tests.support.inprocess_node import InProcessNode, NodeChain


@pytest.fixture
def forked(node_chain: NodeChain) -> DevChain:
    return DevChain(ethread.MemoryBackend(), fork=ForkSource.connect(InProcessNode(node_chain.chain)))


def _overlay(chain: DevChain) -> ForkOverlay:
    config = chain.config
    assert isinstance(config, ForkChainConfig) and config.overlay is not None
    return config.overlay


def test_a_known_chain_id_takes_its_networks_schedule(node_chain: NodeChain) -> None:
    overlay = ForkOverlay(ForkSource.connect(InProcessNode(node_chain.chain)))
    mainnet = fork_chain_config(1, ForkSchedule.from_genesis("london"), overlay)
    assert mainnet.chain_id == 1 and mainnet.fork_at(15_537_393, 0) == "gray_glacier"
    assert mainnet.fork_at(15_537_394, 1_681_338_454) == "paris"
    own = fork_chain_config(1337, ForkSchedule.from_genesis("london"), overlay)
    assert own.chain_id == 1337 and own.fork_at(10**6, 10**10) == "london"
    assert own.overlay is overlay


def test_each_vm_class_is_made_once_and_keeps_its_name(node_chain: NodeChain) -> None:
    overlay = ForkOverlay(ForkSource.connect(InProcessNode(node_chain.chain)))
    config = fork_chain_config(1337, ForkSchedule.from_genesis("prague"), overlay)
    made = config.vm_class(5, 100)
    assert config.vm_class(6, 200) is made and made in overlay.vm_classes.values()
    plain = ForkChainConfig(**{k: getattr(config, k) for k in ("chain_id",)} | {
        f: getattr(config, f) for f in config.__dataclass_fields__ if f not in ("chain_id", "overlay")})
    assert plain.vm_class(5, 100) is not made
    assert made.__name__ == plain.vm_class(5, 100).__name__
    assert issubclass(made, plain.vm_class(5, 100))


def test_a_vm_reads_the_forked_state_below_the_chains_writes(node_chain: NodeChain,
                                                             forked: DevChain) -> None:
    store, node = node_chain.storage, node_chain.chain
    assert forked.storage(store, 2) == 22 and forked.code(store) == node.code(store)
    assert forked.balance(node_chain.rich) == 10**18
    call = forked.call(store, load_calldata(3))
    assert call.success and int.from_bytes(call.output, "big") == 33
    forked.send(forked.accounts[0], store, data=contracts.store_calldata({2: 5}))
    forked.send(forked.accounts[1], node_chain.rich, value=3)
    block = forked.mine()
    overlay = _overlay(forked)
    assert overlay.slot_is_local(store, 2, block.number) and not overlay.slot_is_local(store, 3, None)
    assert overlay.account_is_local(node_chain.rich, block.number)
    assert forked.storage(store, 2) == 5 and forked.storage(store, 3) == 33
    assert forked.balance(node_chain.rich) == 10**18 + 3
    # written (its balance only): the local block's proof holds it, not the node's
    assert forked.fork_proof(node_chain.rich, [], "latest") is None


def test_a_write_the_transaction_reverts_never_reaches_the_overlay(node_chain: NodeChain,
                                                                   forked: DevChain) -> None:
    store = node_chain.storage
    # enough for the calldata, not for setting a fresh slot (22,100 gas): out of gas
    tx_hash = forked.send(forked.accounts[0], store, data=contracts.store_calldata({9: 1}),
                          gas=31_000)
    block = forked.mine()
    receipt = forked.receipt(tx_hash)
    assert receipt is not None and receipt.status == 0
    overlay = _overlay(forked)
    assert not overlay.slot_is_local(store, 9, None) and not overlay.in_local_trie(store, None)
    assert overlay.account_is_local(forked.accounts[0].address, block.number)  # its nonce and fee
    assert forked.storage(store, 9) == 0 and forked.storage(store, 1) == 11


def test_an_account_a_block_deleted_is_not_read_from_the_node_again() -> None:
    from eth_typing import Address as EvmAddress

    empty = b"\xee" * 20  # held by the node's state, empty: a touch deletes it (EIP-161)
    node = DevChain(ethread.MemoryBackend(), accounts=1, alloc={"0x" + empty.hex(): {"balance": "0x0"}})
    node.mine()
    forked = DevChain(ethread.MemoryBackend(), fork=ForkSource.connect(InProcessNode(node)),
                      accounts=1)
    assert forked._vm_at(None).state.account_exists(EvmAddress(empty))
    tx_hash = forked.send(forked.accounts[0], empty, value=0)
    forked.mine()
    receipt = forked.receipt(tx_hash)
    assert receipt is not None and receipt.status == 1
    assert _overlay(forked).account_is_local(empty, None)
    assert not forked._vm_at(None).state.account_exists(EvmAddress(empty))
