"""eth_sendTransaction on a dev chain: a transaction object (as ``eth_call`` takes it) made
into a signed transaction of the dev account it names, with what it leaves out filled in as
geth fills it: the next nonce, fees from the next block's base fee, gas estimated."""

from __future__ import annotations

from typing import Protocol

from eth_utils import to_checksum_address

from ..backend import Backend
from ..errors import TransactionRejected
from ..forks import FORK_BY_NAME
from ..models import (
    AccessListTransaction,
    Address,
    BlobTransaction,
    CallRequest,
    DynamicFeeTransaction,
    Header,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from .pool import placeholder_signature
from .signing import DevAccount, sign_transaction


class TransactionSource(Protocol):
    """Where a request's left-out fields are filled in from: what filling in a request reads of
    the chain (:class:`.builder.DevChain` is one)."""

    chain_id: int

    @property
    def backend(self) -> Backend:
        """The backend holding the chain."""
        ...

    @property
    def head(self) -> Header:
        """The header of the latest block."""
        ...

    def account(self, address: Address) -> DevAccount | None:
        """The dev account (with its key) at ``address``, or None if it is not one."""
        ...

    def is_impersonated(self, address: Address) -> bool:
        """Whether transactions from ``address`` are accepted without a signature."""
        ...

    def next_fork(self) -> str:
        """The fork the next block will run under."""
        ...

    def next_base_fee(self) -> int | None:
        """The base fee of the next block, or None before London."""
        ...

    def next_nonce(self, address: Address) -> int:
        """The nonce the next transaction of ``address`` needs, pending transactions counted."""
        ...

DEFAULT_TIP = 10**9
"""The priority fee a request that names none pays (1 gwei, as geth suggests on a quiet chain)."""


def transaction_for(chain: TransactionSource, request: CallRequest) -> Transaction:
    """The transaction ``request`` asks ``chain`` to send, signed by its dev account (or, for
    an impersonated sender, unsigned: the chain takes it from that address)."""
    if request.conflicts is not None:
        raise TransactionRejected(request.conflicts)
    if request.sender is None:
        raise TransactionRejected("from: missing (eth_sendTransaction needs the sending account)")
    account = chain.account(request.sender)
    if account is None and not chain.is_impersonated(request.sender):
        raise TransactionRejected(f"unknown account {to_checksum_address(request.sender)}")
    head = chain.head
    fork = chain.next_fork()
    base_fee = chain.next_base_fee()
    nonce = request.nonce if request.nonce is not None else chain.next_nonce(request.sender)
    gas = request.gas if request.gas is not None else estimate_gas(chain, request, head.gas_limit)
    access_list = request.access_list or ()
    common = dict(nonce=nonce, gas=gas, to=request.to, value=request.value, data=request.data,
                  y_parity=0, r=0, s=0)
    tip = request.max_priority_fee_per_gas
    if tip is None:
        tip = min(DEFAULT_TIP, request.max_fee_per_gas) if request.max_fee_per_gas is not None else DEFAULT_TIP
    max_fee = request.max_fee_per_gas
    if max_fee is None:
        max_fee = 2 * (base_fee or 0) + tip
    tx: Transaction
    if request.authorization_list is not None:
        if request.to is None:
            raise TransactionRejected("set-code transaction cannot create a contract")
        tx = SetCodeTransaction(chain_id=chain.chain_id, max_priority_fee_per_gas=tip,
                                max_fee_per_gas=max_fee, access_list=access_list,
                                authorization_list=request.authorization_list, **common)  # type: ignore[arg-type]
    elif request.blob_versioned_hashes is not None:
        if request.to is None:
            raise TransactionRejected("blob transaction cannot create a contract")
        tx = BlobTransaction(chain_id=chain.chain_id, max_priority_fee_per_gas=tip,
                             max_fee_per_gas=max_fee, access_list=access_list,
                             max_fee_per_blob_gas=request.max_fee_per_blob_gas or 10**9,
                             blob_versioned_hashes=request.blob_versioned_hashes, **common)  # type: ignore[arg-type]
    elif request.gas_price is not None or not FORK_BY_NAME[fork].base_fee:
        gas_price = request.gas_price if request.gas_price is not None else (base_fee or 0) + tip
        if request.access_list is not None:
            tx = AccessListTransaction(chain_id=chain.chain_id, gas_price=gas_price,
                                       access_list=access_list, **common)  # type: ignore[arg-type]
        else:
            legacy = {k: v for k, v in common.items() if k != "y_parity"}
            tx = LegacyTransaction(gas_price=gas_price, v=0, **legacy)  # type: ignore[arg-type]
    else:
        tx = DynamicFeeTransaction(chain_id=chain.chain_id, max_priority_fee_per_gas=tip,
                                   max_fee_per_gas=max_fee, access_list=access_list, **common)  # type: ignore[arg-type]
    if account is None:
        return placeholder_signature(tx, chain.chain_id)
    protect = FORK_BY_NAME[fork].replay_protection
    return sign_transaction(tx, account, chain.chain_id if protect else None)


def estimate_gas(chain: TransactionSource, request: CallRequest, cap: int) -> int:
    """The gas geth would fill in: eth_estimateGas on the head's state (a revert raises its
    error, code 3 with its reason and data, as geth's eth_sendTransaction answers it)."""
    from ..methods.estimate import estimate_gas as estimate

    return estimate(chain.backend, _with_gas(request, None), "latest")


def _with_gas(request: CallRequest, gas: int | None) -> CallRequest:
    from dataclasses import replace

    return replace(request, gas=gas, nonce=None)
