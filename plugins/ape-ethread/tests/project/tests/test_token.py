"""Deploying, transferring, events and their queries, and failures: reason strings, custom
errors and the compiler's panics, as Ape reports them."""

import ape
import pytest

SUPPLY = 1_000_000 * 10**18


def test_deploy_sets_the_supply_and_the_owner(token, owner):
    assert token.name() == "Test Token"
    assert token.symbol() == "TST"
    assert token.decimals() == 18
    assert token.totalSupply() == SUPPLY
    assert token.balanceOf(owner) == SUPPLY
    assert token.owner() == owner.address


def test_transfer_moves_tokens_and_logs(token, owner, alice):
    receipt = token.transfer(alice, 250, sender=owner)
    assert not receipt.failed
    assert receipt.return_value is True
    assert token.balanceOf(alice) == 250
    assert token.balanceOf(owner) == SUPPLY - 250
    assert receipt.events == [token.Transfer(owner, alice, 250)]
    (log,) = receipt.events.filter(token.Transfer)
    assert log["from"] == owner.address and log.to == alice.address and log.value == 250


def test_events_are_queried_over_blocks(token, owner, alice, bob):
    start = ape.chain.blocks.head.number + 1
    token.transfer(alice, 10, sender=owner)
    token.transfer(bob, 20, sender=owner)
    token.approve(bob, 5, sender=alice)
    token.transferFrom(alice, bob, 5, sender=bob)
    logs = list(token.Transfer.range(start, ape.chain.blocks.head.number + 1))
    assert [(log.to, log.value) for log in logs] == [
        (alice.address, 10), (bob.address, 20), (bob.address, 5)]
    frame = token.Transfer.query("block_number", "event_arguments", start_block=start)
    assert [args["value"] for args in frame["event_arguments"]] == [10, 20, 5]
    assert list(frame["block_number"]) == [log.block_number for log in logs]
    approvals = token.Approval.query("*", start_block=start)
    assert len(approvals) == 1 and approvals["event_arguments"][0]["spender"] == bob.address


def test_a_reason_string_reverts_the_transaction(token, owner, alice, bob):
    with ape.reverts("Token: allowance exceeded"):
        token.transferFrom(owner, bob, 1, sender=alice)
    assert token.balanceOf(bob) == 0


def test_a_custom_error_reverts_with_its_inputs(token, alice, bob):
    with ape.reverts(token.InsufficientBalance, account=alice.address, balance=0, needed=7):
        token.transfer(bob, 7, sender=alice)


def test_a_custom_error_is_raised_as_its_own_class(token, alice):
    with pytest.raises(token.NotOwner) as failure:
        token.mint(alice, 1, sender=alice)
    assert failure.value.inputs == {"caller": alice.address}
    assert isinstance(failure.value, ape.exceptions.ContractLogicError)


def test_a_call_reverts_with_the_compilers_panic(project, owner):
    logger = owner.deploy(project.Logger)
    with pytest.raises(ape.exceptions.ContractLogicError) as failure:
        logger.share(10, 0)
    # Panic(0x12) in geth's words, which ethread answers with (anvil has "panic: division or
    # modulo by zero (0x12)", eth-tester web3.py's "Panic error 0x12: Division by zero.")
    assert failure.value.revert_message in ("division or modulo by zero",
                                            "panic: division or modulo by zero (0x12)",
                                            "Panic error 0x12: Division by zero.")


def test_a_transaction_that_fails_can_be_kept(token, alice, bob):
    receipt = token.transfer(bob, 1, sender=alice, raise_on_revert=False, gas=100_000)
    assert receipt.failed
    assert token.balanceOf(bob) == 0


def test_ether_moves_between_accounts(owner, alice):
    before = alice.balance
    receipt = owner.transfer(alice, "1 ether")
    assert not receipt.failed
    assert alice.balance == before + 10**18


def test_the_test_accounts_are_funded_as_configured(accounts):
    assert len(accounts) == 5
    assert accounts[0].address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    for account in accounts:
        assert account.balance >= 99_990 * 10**18  # 100,000 ether less what fees earlier tests paid


@pytest.mark.parametrize("amount", [1, 5, 10, 50, 100, 10**6, 123_456_789, 10**18, 2**64, 10**23])
def test_transfer_approve_and_transfer_from(token, owner, alice, bob, amount):
    token.transfer(alice, amount, sender=owner)
    token.approve(bob, amount, sender=alice)
    receipt = token.transferFrom(alice, bob, amount, sender=bob)
    assert receipt.events == [token.Transfer(alice, bob, amount)]
    assert token.balanceOf(bob) == amount
    assert token.allowance(alice, bob) == 0
