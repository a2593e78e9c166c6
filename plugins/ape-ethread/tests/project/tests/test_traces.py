"""Traces: a receipt's call tree, what show_trace prints, return values and gas reports read
from it."""

import io

import ape
import pytest

pytestmark = pytest.mark.traces


def token_label(token):
    """How Ape names the token in traces: by its symbol, but by its name while `ape test
    --gas` tracks gas (a gas table must not mix the two)."""
    runner = ape.chain.provider._test_runner
    return token.contract_type.name if runner.gas_tracker.enabled else token.symbol()


def test_receipt_trace_is_the_call_tree(token, timelock, owner):
    token.approve(timelock, 500, sender=owner)
    receipt = timelock.lock(500, 60, sender=owner)
    tree = receipt.trace.get_calltree()
    assert tree.address.hex().lower().removeprefix("0x") == timelock.address[2:].lower()
    (inner,) = tree.calls
    assert inner.address.hex().lower().removeprefix("0x") == token.address[2:].lower()
    assert inner.gas_cost and inner.gas_cost < tree.gas_cost


def test_show_trace_names_contracts_and_methods(token, timelock, owner):
    token.approve(timelock, 500, sender=owner)
    receipt = timelock.lock(500, 60, sender=owner)
    shown = io.StringIO()
    receipt.show_trace(file=shown)
    text = shown.getvalue()
    assert "TimeLock.lock(amount=500, duration=60)" in text
    # (a token is named by its symbol, except in `ape test --gas` runs, where by its name)
    assert f"{token_label(token)}.transferFrom(from=tx.origin, to=TimeLock, value=500) -> 1" \
        in text
    assert "log Locked(" in text
    assert text.count("gas]") == 2


def test_a_failed_transaction_trace_has_its_revert(token, alice, bob):
    receipt = token.transfer(bob, 1, sender=alice, raise_on_revert=False, gas=100_000)
    assert receipt.failed
    assert receipt.trace.get_calltree().failed
    assert receipt.trace.revert_message is not None


def test_gas_report_counts_every_contract_called(token, timelock, owner):
    token.approve(timelock, 500, sender=owner)
    receipt = timelock.lock(500, 60, sender=owner)
    report = receipt.trace.get_gas_report()
    label = token_label(token)
    assert set(report) == {"TimeLock", label}
    assert list(report["TimeLock"]) == ["lock"]
    assert list(report[label]) == ["transferFrom"]
    (cost,) = report[label]["transferFrom"]
    assert 0 < cost < receipt.gas_used


def test_return_value_comes_from_the_trace(token, owner, alice):
    receipt = token.approve(alice, 1, sender=owner)
    assert receipt.return_value is True


def test_call_with_show_trace(token, owner, capfd):
    assert token.balanceOf(owner, show_trace=True) == token.totalSupply()
    assert f"{token_label(token)}.balanceOf({owner.address}) -> {token.totalSupply()}" in capfd.readouterr().out


def test_contract_at_an_address_reads_the_same(token):
    again = ape.Contract(token.address)
    assert again.totalSupply() == token.totalSupply()


def test_console_log_lines_are_read_from_the_trace(project, owner):
    logger = owner.deploy(project.Logger)
    receipt = logger.ping(7, sender=owner)
    assert list(receipt.debug_logs_typed) == [("ping", 7)]
    assert logger.pings() == 1
