"""Isolation between tests, mining, time travel, automine, and the chain edits Ape's test
provider API offers (balance, code, storage, impersonation)."""

import ape
import pytest
from eth_utils import to_checksum_address


def test_isolation_first_writes(token, owner, alice):
    token.transfer(alice, 123, sender=owner)
    assert token.balanceOf(alice) == 123


def test_isolation_then_sees_nothing_of_it(token, alice):
    assert token.balanceOf(alice) == 0


def test_chain_isolate_rolls_back_by_hand(token, owner, bob):
    height = ape.chain.blocks.height
    with ape.chain.isolate():
        token.transfer(bob, 9, sender=owner)
        assert token.balanceOf(bob) == 9
    assert token.balanceOf(bob) == 0
    assert ape.chain.blocks.height == height


def test_mine_counts_blocks():
    height = ape.chain.blocks.height
    ape.chain.mine(5)
    assert ape.chain.blocks.height == height + 5


@pytest.mark.chain_edits
def test_mine_with_a_time_delta():
    head = ape.chain.blocks.head
    ape.chain.mine(3, deltatime=3600)
    mined = ape.chain.blocks.head
    assert mined.number == head.number + 3
    assert mined.timestamp >= head.timestamp + 3600


def test_pending_timestamp_moves_the_clock():
    now = ape.chain.pending_timestamp
    ape.chain.pending_timestamp = now + 86_400
    assert ape.chain.pending_timestamp == now + 86_400
    ape.chain.mine()
    assert ape.chain.blocks.head.timestamp == now + 86_400


def test_time_lock_releases_only_after_its_time(token, timelock, owner):
    token.approve(timelock, 1_000, sender=owner)
    receipt = timelock.lock(1_000, 7 * 86_400, sender=owner)
    (locked,) = receipt.events.filter(timelock.Locked)
    assert locked.amount == 1_000
    with ape.reverts(timelock.StillLocked):
        timelock.release(sender=owner)
    ape.chain.pending_timestamp = locked.unlockAt
    receipt = timelock.release(sender=owner)
    assert receipt.events.filter(timelock.Released)[0].amount == 1_000
    assert token.balanceOf(timelock) == 0
    with ape.reverts("nothing locked"):
        timelock.release(sender=owner)


@pytest.mark.chain_edits
def test_automine_off_keeps_transactions_pending(token, owner, alice):
    provider = ape.chain.provider
    height = ape.chain.blocks.height
    provider.auto_mine = False
    try:
        assert provider.auto_mine is False
        # (Ape's local network sends with the most gas a transaction may take unless told:
        # two such would not fit in one block)
        token.transfer(alice, 5, sender=owner, gas=100_000)
        token.transfer(alice, 6, sender=owner, gas=100_000, nonce=owner.nonce + 1)
        assert token.balanceOf(alice) == 0
        ape.chain.mine()
    finally:
        provider.auto_mine = True
    assert ape.chain.blocks.height == height + 1
    assert len(ape.chain.blocks.head.transactions) == 2
    assert token.balanceOf(alice) == 11


@pytest.mark.chain_edits
def test_set_balance(alice):
    ape.chain.set_balance(alice, "5 ether")
    assert alice.balance == 5 * 10**18


@pytest.mark.chain_edits
def test_impersonated_account_sends_without_a_key(token, owner):
    stranger = ape.accounts["0x000000000000000000000000000000000000dEaD"]
    ape.chain.set_balance(stranger, "1 ether")
    token.transfer(stranger, 50, sender=owner)
    token.transfer(owner, 20, sender=stranger)
    assert token.balanceOf(stranger) == 30


@pytest.mark.chain_edits
def test_set_code_and_storage(token, alice):
    provider = ape.chain.provider
    code = ape.chain.provider.get_code(token.address)
    target = to_checksum_address("0x" + "c0de".rjust(40, "0"))
    assert provider.set_code(target, code)
    copy = ape.Contract(target, contract_type=token.contract_type)
    # slot 2 is totalSupply (after name and symbol: tests/contracts/Token.sol's layout)
    provider.set_storage(target, 2, (77).to_bytes(32, "big"))
    assert copy.totalSupply() == 77
    assert int.from_bytes(provider.get_storage(target, 2), "big") == 77


def test_snapshot_and_restore_by_hand(token, owner, bob):
    snapshot = ape.chain.snapshot()
    token.transfer(bob, 1, sender=owner)
    ape.chain.restore(snapshot)
    assert token.balanceOf(bob) == 0


@pytest.mark.parametrize("blocks", [1, 10])
def test_mine_many_then_roll_back(blocks):
    height = ape.chain.blocks.height
    ape.chain.mine(blocks)
    assert ape.chain.blocks.height == height + blocks
