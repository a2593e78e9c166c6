"""eth_sendTransaction on a dev chain: a request signed, what it leaves out filled in as geth does."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from eth_utils import to_checksum_address

from ..backend import Backend
from ..errors import TransactionRejected
from ..forks import FORK_BY_NAME
from ..models import Address, CallRequest, Transaction
from .pool import placeholder_signature
from .signing import DevAccount, Draft, Fees, TxKind, sign_transaction


class TransactionSource(Protocol):
    """What filling in a request reads of the chain (:class:`.builder.DevChain`'s members)."""

    chain_id: int

    @property
    def backend(self) -> Backend:
        """The backend holding the chain."""

    def account(self, address: Address) -> DevAccount | None:
        """The dev account (with its key) at ``address``, or None if it is not one."""

    def is_impersonated(self, address: Address) -> bool:
        """Whether transactions from ``address`` are accepted without a signature."""

    def next_fork(self) -> str:
        """The fork the next block will run under."""

    def next_base_fee(self) -> int | None:
        """The base fee of the next block, or None before London."""

    def next_nonce(self, address: Address) -> int:
        """The nonce the next transaction of ``address`` needs, pending transactions counted."""


DEFAULT_TIP = 10**9
"""The priority fee a request that names none pays (1 gwei, as geth suggests on a quiet chain)."""


def transaction_for(chain: TransactionSource, request: CallRequest) -> Transaction:
    """The transaction ``request`` asks ``chain`` to send, signed (an impersonated sender's: not)."""
    if request.conflicts is not None:
        raise TransactionRejected(request.conflicts)
    if request.sender is None:
        raise TransactionRejected("from: missing (eth_sendTransaction needs the sending account)")
    account = chain.account(request.sender)
    if account is None and not chain.is_impersonated(request.sender):
        raise TransactionRejected(f"unknown account {to_checksum_address(request.sender)}")
    fork = chain.next_fork()
    base_fee = chain.next_base_fee()
    nonce = request.nonce if request.nonce is not None else chain.next_nonce(request.sender)
    gas = request.gas if request.gas is not None else estimate_gas(chain, request)
    tip = request.max_priority_fee_per_gas
    if tip is None:
        tip = min(DEFAULT_TIP, request.max_fee_per_gas) if request.max_fee_per_gas is not None else DEFAULT_TIP
    max_fee = request.max_fee_per_gas
    if max_fee is None:
        max_fee = 2 * (base_fee or 0) + tip
    kind: TxKind
    if request.authorization_list is not None:
        kind = "set-code"
    elif request.blob_versioned_hashes is not None:
        kind = "blob"
    elif request.gas_price is not None or not FORK_BY_NAME[fork].base_fee:
        kind = "access-list" if request.access_list is not None else "legacy"
    else:
        kind = "dynamic-fee"
    if request.to is None and kind in ("set-code", "blob"):
        raise TransactionRejected(f"{kind} transaction cannot create a contract")
    gas_price = request.gas_price if request.gas_price is not None else (base_fee or 0) + tip
    fees = Fees(gas_price=gas_price, max_fee_per_gas=max_fee, max_priority_fee_per_gas=tip,
                max_fee_per_blob_gas=request.max_fee_per_blob_gas or 10**9)
    draft = Draft(nonce, request.to, request.value, request.data, gas, request.access_list or (),
                  request.blob_versioned_hashes or (), request.authorization_list or ())
    tx = draft.unsigned(kind, chain.chain_id, fees)
    if account is None:
        return placeholder_signature(tx, chain.chain_id)
    protect = FORK_BY_NAME[fork].replay_protection
    return sign_transaction(tx, account, chain.chain_id if protect else None)


def estimate_gas(chain: TransactionSource, request: CallRequest) -> int:
    """The gas geth would fill in: eth_estimateGas on the head's state (a revert raises code 3)."""
    from ..methods.estimate import estimate_gas as estimate

    return estimate(chain.backend, replace(request, gas=None, nonce=None), "latest")
