"""devchain/core.py: what every part of the dev chain stands on: a store reopened continues its
chain; the clock the next block's time follows; reads of balances, nonces, code and storage at
the head or after an earlier block; calls run and forgotten (through a delegation too); the
accounts; errors for blocks the chain does not hold."""

from __future__ import annotations

import pytest

import ethread
from ethread.backends.memory import MemoryBackend
from ethread.devchain import PRAGUE_FORKS, DevChain, DevChainError, ForkSchedule, contracts
from ethread.devchain.core import CallOutcome
from tests.support.contracts import load_calldata


def test_reopening_a_store_continues_the_chain() -> None:
    backend = MemoryBackend()
    first = DevChain(backend, forks=PRAGUE_FORKS, accounts=2)
    first.mine(withdrawals=[(first.accounts[0].address, 1)])
    again = DevChain(backend, forks=PRAGUE_FORKS, accounts=2)
    block = again.mine(withdrawals=[(again.accounts[1].address, 1)])
    assert block.number == 2 and block.withdrawals is not None
    assert block.withdrawals[0].index == 1


def test_the_newest_fork_from_genesis(chain: DevChain) -> None:
    assert chain.next_fork() == "osaka"
    assert chain.config.fork_at(0, 0) == "osaka"


def test_with_a_clock_blocks_follow_it_and_its_jumps_last() -> None:
    now = [5_000]
    chain = DevChain(MemoryBackend(), accounts=1, genesis_timestamp=4_000,
                     clock=lambda: now[0])
    assert chain.mine().header.timestamp == 5_000
    assert chain.mine().header.timestamp == 5_001  # at least one second after its parent
    chain.increase_time(100)
    assert chain.mine().header.timestamp == 5_100
    now[0] = 5_050
    assert chain.mine().header.timestamp == 5_150  # the jump stays
    chain.set_next_block_timestamp(9_000)
    assert chain.mine().header.timestamp == 9_000
    now[0] = 5_060
    assert chain.mine().header.timestamp == 9_010  # the clock runs on from the time set



def test_reads_at_the_head_and_after_an_earlier_block(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    start = chain.balance(b.address)
    store = chain.deploy_runtime(a, contracts.STORAGE)
    chain.mine()
    chain.send(a, b.address, value=11)
    chain.send(a, store, data=contracts.store_calldata({3: 99}))
    chain.mine()
    assert chain.balance(b.address) == start + 11 and chain.balance(b.address, at=1) == start
    assert chain.nonce(a.address) == 3 and chain.nonce(a.address, at=1) == 1
    assert chain.code(store) != b"" and chain.code(store, at=0) == b""
    assert chain.storage(store, 3) == 99 and chain.storage(store, 3, at=1) == 0
    with pytest.raises(DevChainError, match="no block 7"):
        chain.balance(a.address, at=7)
    with pytest.raises(DevChainError, match="no block 7"):
        chain.block(7)


def test_a_call_is_run_and_forgotten_and_follows_a_delegation(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    store = chain.deploy_runtime(a, contracts.STORAGE)
    chain.mine()
    chain.send(a, store, data=contracts.store_calldata({1: 5}))
    chain.mine()
    read = chain.call(store, load_calldata(1))
    assert read == CallOutcome(output=(5).to_bytes(32, "big"), success=True, gas_used=read.gas_used)
    assert read.gas_used > 0
    written = chain.call(store, contracts.store_calldata({1: 6}), sender=a.address)
    assert written.success and chain.storage(store, 1) == 5  # the call's write is forgotten
    assert chain.call(store, load_calldata(1), at=1).output == bytes(32)
    chain.send(b, b.address, kind="set-code", delegations=[(b, store)])
    chain.mine()
    assert chain.code(b.address) == b"\xef\x01\x00" + store
    assert chain.call(b.address, load_calldata(1)).output == bytes(32)  # b's storage


def test_accounts_the_receipt_of_nothing_and_the_next_blocks_fields() -> None:
    chain = DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=2, gas_limit=20_000_000)
    first = chain.accounts[0]
    assert chain.account(first.address) is first and chain.account("0x" + "00" * 20) is None
    assert [bytes(x.key) for x in chain.local_accounts] == [a.private_key for a in chain.accounts]
    assert chain.receipt(b"\x00" * 32) is None
    assert chain.next_gas_limit() == 20_000_000 == chain.head.gas_limit
    assert chain.head.base_fee_per_gas == 10**9
    assert chain.next_base_fee() == 10**9 * 7 // 8  # an empty parent: an eighth off (EIP-1559)
    berlin = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("berlin"), accounts=1)
    assert berlin.next_base_fee() is None
    assert chain.head.number == 0 and chain.block(0).hash == chain.head.hash


def test_a_block_time_under_a_second_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one second"):
        DevChain(ethread.MemoryBackend(), block_time=0)
