"""execution-specs (the ``ethereum-execution`` package) as an oracle for state tests.

:func:`fill` writes a state test in the execution-spec-tests JSON format (what ``ethread
statetest`` reads) for a pre-state and one transaction under several forks: the post-state
root, the logs hash and whether the transaction is refused come from execution-specs' own
state-test runner (its ``t8n`` tool applying the transaction with the fork's
``process_transaction``), the transaction's bytes from ethread's signer. Running ethread on
the filled test then compares the two implementations vector by vector.
"""

from __future__ import annotations

from typing import Any

from ethread.devchain.signing import DevAccount, sign_transaction
from ethread.models import (
    AccessListTransaction,
    BlobTransaction,
    DynamicFeeTransaction,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from ethread.rlpcodec.transactions import encode_transaction

SENDER = DevAccount(0)
"""The account every filled transaction is signed by."""

ENV: dict[str, str] = {
    "currentCoinbase": "0x2adc25665018aa1fe0e6bc666dac8fc2697ff9ba",
    "currentGasLimit": "0x055d4a80",
    "currentNumber": "0x01",
    "currentTimestamp": "0x03e8",
    "currentRandom": "0x" + "00" * 32,
    "currentDifficulty": "0x020000",
    "currentBaseFee": "0x07",
    "currentExcessBlobGas": "0x00",
}
"""The block every filled transaction runs in (base fee 7, blob base fee 1)."""


def _hex(value: int | bytes) -> str:
    return hex(value) if isinstance(value, int) else "0x" + value.hex()


def account(balance: int = 0, nonce: int = 0, code: bytes = b"",
            storage: dict[int, int] | None = None) -> dict[str, Any]:
    """A pre-state account in the fixture format."""
    return {"balance": _hex(balance), "nonce": _hex(nonce), "code": _hex(code),
            "storage": {_hex(k): _hex(v) for k, v in (storage or {}).items()}}


def spec_transaction(tx: Transaction) -> dict[str, Any]:
    """``tx`` as a state test's ``transaction`` entry (signed by execution-specs with the
    sender's key; a legacy one without replay protection, valid on every fork)."""
    entry: dict[str, Any] = {
        "nonce": _hex(tx.nonce), "gasLimit": [_hex(tx.gas)], "value": [_hex(tx.value)],
        "data": [_hex(tx.data)], "to": _hex(tx.to) if tx.to is not None else "",
        "sender": _hex(SENDER.address), "secretKey": _hex(SENDER.private_key),
    }
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        entry["gasPrice"] = _hex(tx.gas_price)
    else:
        entry["maxFeePerGas"] = _hex(tx.max_fee_per_gas)
        entry["maxPriorityFeePerGas"] = _hex(tx.max_priority_fee_per_gas)
    if isinstance(tx, LegacyTransaction):
        entry["protected"] = False
    else:
        entry["accessLists"] = [[{"address": _hex(e.address),
                                  "storageKeys": [_hex(k) for k in e.storage_keys]}
                                 for e in tx.access_list]]
    if isinstance(tx, BlobTransaction):
        entry["maxFeePerBlobGas"] = _hex(tx.max_fee_per_blob_gas)
        entry["blobVersionedHashes"] = [_hex(h) for h in tx.blob_versioned_hashes]
    if isinstance(tx, SetCodeTransaction):
        entry["authorizationList"] = [
            {"chainId": _hex(a.chain_id), "address": _hex(a.address), "nonce": _hex(a.nonce),
             "v": _hex(a.y_parity), "r": _hex(a.r), "s": _hex(a.s)}
            for a in tx.authorization_list]
    return entry


def signed_bytes(tx: Transaction) -> bytes:
    """``tx`` signed by :data:`SENDER` (a legacy one unprotected), encoded."""
    return bytes(encode_transaction(sign_transaction(tx, SENDER)))


def spec_run(fork: str, pre: dict[str, Any], transaction: dict[str, Any]) -> tuple[str, str, bool]:
    """(post-state root, logs hash, refused) of ``transaction`` on ``pre`` under ``fork`` (a
    fixture title), by execution-specs."""
    from ethereum_spec_tools.evm_tools.statetest import TestCase, run_test_case
    from ethereum_spec_tools.evm_tools.t8n import ForkCache

    case = TestCase(path="", key="oracle", index=0, fork_name=fork,
                    post={"indexes": {"data": 0, "gas": 0, "value": 0}},
                    pre=pre, env=dict(ENV), transaction=transaction)
    with ForkCache() as cache:
        result = run_test_case(case, cache)
    return "0x" + bytes(result.state_root).hex(), "0x" + bytes(result.logs_hash).hex(), \
        bool(result.rejected)


def fill(pre: dict[str, Any], tx: Transaction, forks: tuple[str, ...]) -> dict[str, Any]:
    """One state test: ``tx`` from :data:`SENDER` on ``pre``, a vector per fork, each post
    entry as execution-specs computes it (``expectException`` when it refuses the
    transaction)."""
    transaction = spec_transaction(tx)
    txbytes = _hex(signed_bytes(tx))
    post: dict[str, list[dict[str, Any]]] = {}
    for fork in forks:
        root, logs, refused = spec_run(fork, pre, transaction)
        entry: dict[str, Any] = {"hash": root, "logs": logs, "txbytes": txbytes,
                                 "indexes": {"data": 0, "gas": 0, "value": 0}}
        if refused:
            entry["expectException"] = "TransactionException (execution-specs refuses it)"
        post[fork] = [entry]
    return {"env": dict(ENV), "pre": pre, "transaction": transaction, "post": post}


def legacy(**fields: Any) -> LegacyTransaction:
    """A legacy transaction (gas price 10, above :data:`ENV`'s base fee) with ``fields``."""
    base: dict[str, Any] = dict(nonce=0, gas_price=10, gas=100_000, to=b"\x11" * 20, value=0,
                                data=b"", v=0, r=0, s=0)
    return LegacyTransaction(**{**base, **fields})


def blob(**fields: Any) -> BlobTransaction:
    """A blob transaction (fee cap 10, tip 1, blob fee cap 1, one blob) with ``fields``."""
    base: dict[str, Any] = dict(
        chain_id=1, nonce=0, max_priority_fee_per_gas=1, max_fee_per_gas=10, gas=21_000,
        to=b"\x11" * 20, value=1, data=b"", access_list=(), max_fee_per_blob_gas=1,
        blob_versioned_hashes=(b"\x01" + bytes(31),), y_parity=0, r=0, s=0)
    return BlobTransaction(**{**base, **fields})


def dynamic(**fields: Any) -> DynamicFeeTransaction:
    """A dynamic-fee transaction (fee cap 10, tip 1) with ``fields``."""
    base: dict[str, Any] = dict(chain_id=1, nonce=0, max_priority_fee_per_gas=1,
                                max_fee_per_gas=10, gas=100_000, to=b"\x11" * 20, value=0,
                                data=b"", access_list=(), y_parity=0, r=0, s=0)
    return DynamicFeeTransaction(**{**base, **fields})


__all__ = ["ENV", "SENDER", "account", "blob", "dynamic", "fill", "legacy",
           "signed_bytes", "spec_run", "spec_transaction"]
