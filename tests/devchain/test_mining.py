"""devchain/mining.py: blocks made from the pending transactions, executed once and stored as
the import path makes them; a block that cannot be built stores nothing and drops what it was
given; uncles and withdrawals only in their forks; account edits as blocks of their own;
mining up to a number or a fork."""

from __future__ import annotations

import pytest
import rlp

import ethread
from ethread.backends.memory import MemoryBackend
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import PRAGUE_FORKS, RPC_COMPAT_FORKS, DevChain, DevChainError, ForkSchedule, contracts
from ethread.devchain.core import StateEdit
from ethread.devchain.signing import versioned_hash
from ethread.rlpcodec.blocks import block_item


def test_kinds_uncles_and_withdrawals_are_refused_before_their_fork() -> None:
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("london"), accounts=2)
    a = chain.accounts
    with pytest.raises(DevChainError, match="cancun"):
        chain.send(a[0], a[1].address, kind="blob", blob_hashes=[versioned_hash(b"")])
    with pytest.raises(DevChainError, match="Shanghai"):
        chain.mine(withdrawals=[(a[0].address, 1)])
    chain.send(a[0], a[1].address, value=1)
    chain.mine()
    chain.mine(uncles=[chain.sibling(1)])
    merged = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("paris"), accounts=1)
    merged.mine()
    with pytest.raises(DevChainError, match="merge"):
        merged.sibling()


def test_a_failed_block_drops_the_pending_transactions() -> None:
    chain = DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
    chain.deploy(chain.accounts[0], "0x60006000fd")  # a constructor that reverts
    with pytest.raises(DevChainError, match="deployment"):
        chain.mine()
    assert chain.pending == () and chain.head.number == 0
    chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
    assert chain.mine().number == 1


def test_a_failed_creation_raises_and_stores_nothing(chain: DevChain) -> None:
    owner = chain.accounts[0]
    chain.deploy(owner, "0x60006000fd")  # PUSH1 0 PUSH1 0 REVERT
    with pytest.raises(DevChainError, match=r"the deployment of 0x[0-9a-f]{40} .* failed"):
        chain.mine()
    assert chain.head.number == 0 and chain.pending == ()


def test_blocks_stored_without_a_second_execution_reimport_block_for_block() -> None:
    """A test chain executes each block once (``revalidate=False``, the default); what it
    stores is still exactly what the full import path makes of the same block."""
    chain = DevChain(ethread.MemoryBackend(), accounts=3)
    a, b, c = chain.accounts
    emitter = chain.deploy_runtime(a, contracts.LOG_EMITTER)
    chain.send(b, c.address, value=5, kind="legacy")
    chain.mine()
    chain.send(a, emitter, data=contracts.log_calldata([b"\x01" * 32], b"x"), kind="access-list")
    chain.send(c, a.address, value=1, delegations=[(b, emitter)], kind="set-code")
    chain.mine()
    again = ethread.MemoryBackend()
    replay = ChainImporter(again, parse_genesis(chain.genesis), verify_seals=False)
    for number in range(1, chain.head.number + 1):
        assert replay.import_block(rlp.encode(block_item(
            chain.block(number).header, [t.transaction for t in chain.block(number).transactions],
            chain.block(number).uncles, chain.block(number).withdrawals)))
        original, copy = chain.block(number), again.block_by_hash(chain.block(number).hash)
        assert copy == original
        assert again.receipts(original.hash) == chain.backend.receipts(original.hash)


def test_a_genesis_base_fee_is_the_first_blocks() -> None:
    chain = DevChain(MemoryBackend(), accounts=1, base_fee=7)
    assert chain.head.base_fee_per_gas == 7
    chain.mine()  # empty: EIP-1559 takes 7 // 8 = 0 off
    assert chain.head.number == 1 and chain.head.base_fee_per_gas == 7



def test_mining_takes_the_pending_transactions_and_withdrawals_run_on(chain: DevChain) -> None:
    a, b, c = chain.accounts
    sent = [chain.send(a, b.address, value=1), chain.send(c, b.address, value=2)]
    assert len(chain.pending) == 2
    block = chain.mine(withdrawals=[(a.address, 5), (b.address, 6)], extra_data=b"hi",
                       coinbase=b"\x0c" * 20)
    assert sorted(t.hash for t in block.transactions) == sorted(sent) and chain.pending == ()
    assert block.header.extra_data == b"hi" and block.header.coinbase == b"\x0c" * 20
    assert block.withdrawals is not None and [w.index for w in block.withdrawals] == [0, 1]
    following = chain.mine(withdrawals=[(c.address, 1)])
    assert following.withdrawals is not None and following.withdrawals[0].index == 2
    assert following.transactions == () and following.header.parent_hash == block.hash


def test_mine_until_a_number_and_until_a_fork() -> None:
    chain = DevChain(MemoryBackend(), forks=RPC_COMPAT_FORKS, accounts=1)
    assert chain.mine_until(3).number == 3 == chain.head.number
    assert chain.mine_until(2).number == 3  # already past: nothing mined
    head = chain.mine_until_fork("shanghai")
    assert chain.next_fork() == "shanghai" and head.number == chain.head.number
    assert chain.config.fork_at(head.number, head.header.timestamp) == "paris"


def test_an_edit_is_a_block_of_its_own_and_leaves_the_pool(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    target = b"\x55" * 20
    chain.send(a, b.address, value=1)
    block = chain.edit(StateEdit(target, balance=9, nonce=4, code=b"\x00", storage=((1, 2),)))
    assert block.number == 1 and block.transactions == ()
    assert (chain.balance(target), chain.nonce(target), chain.code(target)) == (9, 4, b"\x00")
    assert chain.storage(target, 1) == 2 and len(chain.pending) == 1
    kept = chain.edit(StateEdit(target, nonce=5))
    assert chain.balance(target) == 9 and chain.nonce(target) == 5 and kept.number == 2


def test_siblings_differ_and_become_uncles_of_a_later_block() -> None:
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("london"), accounts=1)
    with pytest.raises(DevChainError, match="genesis block has no siblings"):
        chain.sibling()
    chain.mine()
    chain.mine()
    one, two = chain.sibling(1), chain.sibling(1)
    assert one.hash != two.hash and one.number == two.number == 1
    assert one.hash != chain.block(1).hash and one.parent_hash == chain.block(0).hash
    block = chain.mine(uncles=[one, two])
    assert [u.hash for u in block.uncles] == [one.hash, two.hash]
