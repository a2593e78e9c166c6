"""``ethread.forks.validity``: the intrinsic gas of each fork against execution-specs, the
words each refusal is given (geth's state transition's, and its pool's through
``devchain.pool.pool_words``), and which rules a call's message skips."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ethread.devchain.pool import pool_words
from ethread.forks import FORK_BY_NAME
from ethread.forks.table import BLOB, DYNAMIC_FEE, LEGACY
from ethread.forks.validity import (
    BLOCK,
    CALL,
    BlockContext,
    FeeCapBelowBaseFee,
    GasCapExceeded,
    InitcodeTooLarge,
    InsufficientFunds,
    IntrinsicGasTooLow,
    InvalidTransaction,
    NonceTooHigh,
    NonceTooLow,
    SenderAccount,
    SenderNotEOA,
    TipAboveFeeCap,
    TxFields,
    TypeNotSupported,
    fields_of,
    floor_data_gas,
    intrinsic_gas,
    introduced,
    upfront_cost,
    validate_transaction,
)
from ethread.models import AccessListEntry, AccessListTransaction
from tests.support.spec_oracle import SENDER, account, fill, legacy

SENDER_HEX = "0x" + SENDER.address.hex()
WHO = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
MIXED = bytes([0, 1, 0, 0, 0xFF, 7, 0, 9])
"""Calldata of zero and non-zero bytes."""


def access_list_tx(gas: int) -> AccessListTransaction:
    entries = (AccessListEntry(address=b"\x22" * 20, storage_keys=(bytes(32), b"\x01" * 32)),
               AccessListEntry(address=b"\x33" * 20, storage_keys=(b"\x02" * 32,)))
    return AccessListTransaction(chain_id=1, nonce=0, gas_price=10, gas=gas, to=b"\x11" * 20,
                                 value=0, data=MIXED, access_list=entries, y_parity=0, r=0, s=0)


@pytest.mark.parametrize(("shape", "forks"), [
    ("call", ("Frontier", "Homestead", "Istanbul", "Berlin", "Shanghai", "Prague")),
    ("create", ("Frontier", "Homestead", "Istanbul", "Shanghai", "Cancun")),
    ("access_list", ("Berlin", "London", "Prague")),
])
def test_intrinsic_gas_is_execution_specs(shape: str, forks: tuple[str, ...]) -> None:
    """Each fork's intrinsic gas (EIP-2 creation cost, EIP-2028 calldata, EIP-2930 access
    lists, EIP-3860 initcode words; from Prague at least EIP-7623's floor): a transaction
    with exactly that gas is valid for execution-specs, one with a unit less is refused, on
    every fork named."""
    for title in forks:
        fork = FORK_BY_NAME[title.lower()]
        if shape == "call":
            tx = legacy(data=MIXED)
        elif shape == "create":
            tx = legacy(to=None, data=bytes(70))
        else:
            tx = access_list_tx(0)
        needed = intrinsic_gas(fork, fields_of(tx))
        if fork.calldata_floor:
            needed = max(needed, floor_data_gas(tx.data))
        pre = {SENDER_HEX: account(10**18)}
        for gas, refused in ((needed, False), (needed - 1, True)):
            test = fill(pre, replace(tx, gas=gas), (title,))
            entry = test["post"][title][0]
            assert ("expectException" in entry) is refused, (title, shape, gas)


def call(**changes: object) -> TxFields:
    base: dict[str, object] = dict(kind=DYNAMIC_FEE, nonce=3, gas=30_000_000, to=b"\x11" * 20,
                                   value=5, data=b"", fee_cap=0, tip_cap=0)
    return TxFields(**{**base, **changes})  # type: ignore[arg-type]


def test_a_call_skips_the_nonce_the_sender_code_and_the_gas_cap() -> None:
    """geth checks an eth_call's message without its nonce, its sender's code or EIP-7825's
    cap, and lets fee caps of zero through; a block checks all of them."""
    osaka = FORK_BY_NAME["osaka"]
    contract = SenderAccount(nonce=0, balance=10**18, code=b"\x60\x00")
    block = BlockContext(base_fee=7)
    assert validate_transaction(osaka, call(), block, contract, checks=CALL) == 21_000
    with pytest.raises(NonceTooHigh):
        validate_transaction(osaka, call(), block, contract, checks=BLOCK)
    with pytest.raises(GasCapExceeded):
        validate_transaction(osaka, call(nonce=0), block, contract, checks=BLOCK)
    with pytest.raises(SenderNotEOA):
        validate_transaction(osaka, call(nonce=0, gas=21_000), block, contract, checks=BLOCK)
    with pytest.raises(FeeCapBelowBaseFee):
        validate_transaction(osaka, call(fee_cap=1), block, contract, checks=CALL)


def test_the_upfront_cost_counts_value_and_blob_gas_at_the_blob_fee_cap() -> None:
    """EIP-4844: gas x fee cap + value + blob gas x blob fee cap (not the blob base fee)."""
    tx = call(kind=BLOB, gas=21_000, fee_cap=10, blob_hashes=(b"\x01" + bytes(31),) * 2,
              blob_fee_cap=3)
    assert upfront_cost(tx) == 21_000 * 10 + 5 + 2 * 131_072 * 3


REFUSALS: list[tuple[InvalidTransaction, str, str]] = [
    (NonceTooLow(1, 2, sender=SENDER.address), f"nonce too low: address {WHO}, tx: 1 state: 2",
     "nonce too low: next nonce 2, tx nonce 1"),
    (IntrinsicGasTooLow(21_000, 22_600), "intrinsic gas too low: have 21000, want 22600",
     "intrinsic gas too low: gas 21000, minimum needed 22600"),
    (InitcodeTooLarge(49_153, 49_152), "max initcode size exceeded: code size 49153 limit 49152",
     "max initcode size exceeded: code size 49153, limit 49152"),
    (InsufficientFunds(0, 7, sender=SENDER.address),
     f"insufficient funds for gas * price + value: address {WHO} have 0 want 7",
     "insufficient funds for gas * price + value: balance 0, tx cost 7, overshot 7"),
    (SenderNotEOA(2, sender=SENDER.address), f"sender not an eoa: address {WHO}, len(code): 2",
     f"sender not an eoa: address {WHO}"),
    (TipAboveFeeCap(2, 1, sender=SENDER.address),
     f"max priority fee per gas higher than max fee per gas: address {WHO}, "
     "maxPriorityFeePerGas: 2, maxFeePerGas: 1",
     "max priority fee per gas higher than max fee per gas"),
    (TypeNotSupported(BLOB, introduced(BLOB)), "transaction type not supported",
     "transaction type not supported: type 3 rejected, pool not yet in Cancun"),
    (GasCapExceeded(2**24 + 1, 2**24), "transaction gas limit too high (cap: 16777216, tx: 16777217)",
     "transaction gas limit too high (cap: 16777216, tx: 16777217)"),
]


@pytest.mark.parametrize(("error", "core", "pool"), REFUSALS)
def test_each_refusal_in_geths_words(error: InvalidTransaction, core: str, pool: str) -> None:
    """geth words a refusal one way in its state transition (eth_call, block building) and
    another in its pool (eth_sendRawTransaction): both from the one typed error."""
    assert str(error) == core
    assert pool_words(error) == pool


def test_the_fork_that_introduced_each_type() -> None:
    assert [introduced(kind).title for kind in range(5)] == [  # type: ignore[union-attr]
        "Frontier", "Berlin", "London", "Cancun", "Prague"]
    assert introduced(LEGACY + 9) is None
