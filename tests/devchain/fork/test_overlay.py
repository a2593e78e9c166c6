"""devchain/fork/overlay.py: a forked chain's own writes over the forked block's state. Which
trie is the word on an account or slot depends on the block read (from the first block that
wrote it on); a wiped storage counts for every slot; a revert forgets what the dropped blocks
wrote. Through a forked dev chain: writes stay local, reads before them are the node's, a
value sent to a node's account adds to its balance, snapshots and reset forget."""

from __future__ import annotations

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.fork.overlay import ForkOverlay
from ethread.devchain.fork.source import BLANK_ROOT, ForkSource
from tests.support.inprocess_node import InProcessNode, NodeChain, local_call, remote_call
from tests.support.server_harness import shared_demo

A, B, C = b"\x0a" * 20, b"\x0b" * 20, b"\x0c" * 20


def _overlay(node_chain: NodeChain) -> ForkOverlay:
    return ForkOverlay(ForkSource.connect(InProcessNode(node_chain.chain)))


def test_the_forked_blocks_state_is_an_empty_local_trie(node_chain: NodeChain) -> None:
    overlay = _overlay(node_chain)
    head = node_chain.chain.head
    assert overlay.fork_root == head.state_root and overlay.fork_number == head.number
    assert overlay.local_root(head.state_root) == BLANK_ROOT
    assert overlay.local_root(b"\x01" * 32) == b"\x01" * 32
    assert overlay.number_at(head.state_root) == head.number and overlay.number_at(b"\x01" * 32) is None
    assert not overlay.account_is_local(A, None) and not overlay.in_local_trie(A, None)
    assert overlay.remote_slot(node_chain.storage, 2) == 22
    account = overlay.remote_account(node_chain.storage)
    assert account is not None and overlay.remote_code(account.code_hash) == node_chain.chain.code(
        node_chain.storage)


def test_what_a_block_wrote_is_local_from_that_block_on(node_chain: NodeChain) -> None:
    overlay = _overlay(node_chain)
    n = overlay.fork_number
    overlay.note({C}, set(), set())  # not recording: nothing kept
    with overlay.recording() as writes:
        overlay.note({A}, {(B, 1)}, set())
        overlay.note(set(), {(B, 2)}, {C})
    assert writes.accounts == {A} and writes.slots == {(B, 1), (B, 2)} and writes.wiped == {C}
    overlay.commit(writes, n + 2, b"\x02" * 32)
    assert overlay.number_at(b"\x02" * 32) == n + 2
    assert not overlay.account_is_local(A, n + 1) and overlay.account_is_local(A, n + 2)
    assert overlay.account_is_local(A, None)
    assert overlay.slot_is_local(B, 1, n + 2) and not overlay.slot_is_local(B, 3, n + 2)
    assert overlay.slot_is_local(C, 12345, n + 2)  # a wiped storage: every slot is local
    assert not overlay.account_is_local(B, None) and overlay.in_local_trie(B, n + 2)
    assert not overlay.in_local_trie(B, n + 1) and overlay.in_local_trie(C, None)
    with overlay.recording() as later:
        overlay.note({A}, set(), set())
    overlay.commit(later, n + 3, b"\x03" * 32)
    assert not overlay.account_is_local(A, n + 1)  # the first block that wrote it counts
    overlay.rewind(n + 1)
    assert not overlay.account_is_local(A, None) and not overlay.in_local_trie(C, None)
    assert overlay.number_at(b"\x02" * 32) is None and overlay.number_at(overlay.fork_root) == n


def test_writes_stay_local_and_history_reads_the_fork(remote: str) -> None:
    demo = shared_demo()
    chain = DevChain.fork(remote, backend=ethread.MemoryBackend())
    store = demo.storage
    before = chain.head.number
    chain.send(chain.accounts[0], store, data=contracts.store_calldata({1: 99, 2: 0, 77: 5}))
    written = chain.mine().number
    assert chain.storage(store, 1) == 99 and chain.storage(store, 2) == 0
    assert chain.storage(store, 77) == 5
    assert chain.storage(store, 1, at=before) == demo.chain.storage(store, 1)
    assert chain.storage(store, 2, at=before) == demo.chain.storage(store, 2)
    where = "0x" + store.hex()
    assert local_call(chain, "eth_getStorageAt", where, "0x2", hex(before)) == \
        "0x" + demo.chain.storage(store, 2).to_bytes(32, "big").hex()
    assert local_call(chain, "eth_getStorageAt", where, "0x2", hex(written)) == "0x" + "00" * 32
    # the remote chain is untouched
    assert int(remote_call(remote, "eth_getStorageAt", where, "0x1", "latest"), 16) != 99
    # a value sent to a remote account adds to its remote balance
    rich = demo.chain.accounts[3].address
    remote_balance = chain.balance(rich)
    chain.send(chain.accounts[1], rich, value=7)
    chain.mine()
    assert chain.balance(rich) == remote_balance + 7
    # snapshots and revert forget local writes
    snapshot = chain.snapshot()
    chain.send(chain.accounts[0], store, data=contracts.store_calldata({1: 0}))
    chain.mine()
    assert chain.storage(store, 1) == 0
    chain.revert(snapshot)
    assert chain.storage(store, 1) == 99
    chain.reset()
    assert chain.head.number == before
    assert chain.storage(store, 1) == demo.chain.storage(store, 1)
    assert chain.balance(chain.accounts[0].address) == 10**24

