"""geth's ``testing_buildBlockV1``: a block on the head, from the pool or given transactions, not inserted.

It is built twice over a throwaway overlay: transaction by transaction, to choose what fits and
refuse what does not in geth's words; then whole, by py-evm's import, which fills in the roots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

import rlp
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash
from eth_utils import ValidationError

from ..errors import ServerError, TransactionRejected
from ..evm.block_vm import scratch_chaindb, vm_at
from ..forks import ChainConfig, Fork
from ..forks.validity import (
    TX_GAS,
    BlockContext,
    InvalidTransaction,
    SenderAccount,
    fields_of,
    validate_transaction,
)
from ..models import (
    Address,
    BlobTransaction,
    Hash32,
    Header,
    Transaction,
    Withdrawal,
)
from ..rlpcodec.blocks import block_item
from ..rlpcodec.headers import decode_header
from ..rlpcodec.transactions import encode_transaction
from .genesis import ZERO_NONCE
from .pool import evm_transaction, recover_sender
from .txpool import BlobSidecar, Pooled, TxPool, decode_submission, effective_tip, fee_cap

GAS_CEIL = 60_000_000
"""The gas limit geth's miner steers blocks towards (``--miner.gaslimit``)."""
MIN_GAS_LIMIT = 5000
"""The protocol's smallest block gas limit."""
MAX_BUILD_TRANSACTIONS = 10_000
"""The most transactions one testing_buildBlockV1 call may hand over."""


@dataclass(frozen=True, slots=True)
class PayloadAttributes:
    """The engine API's payload attributes: what the consensus layer fixes of a new block."""

    timestamp: int
    prev_randao: Hash32
    fee_recipient: Address
    withdrawals: tuple[Withdrawal, ...] | None
    beacon_root: Hash32 | None


class BuildFailed(ServerError):
    """A block could not be built (geth's -32000 with its reason)."""


@dataclass(frozen=True, slots=True)
class BuiltPayload:
    """A built block as the engine API hands it out."""

    header: Header
    transactions: tuple[bytes, ...]
    """Each transaction's canonical encoding (a blob transaction without its blobs)."""
    withdrawals: tuple[Withdrawal, ...] | None
    block_value: int
    """What the fee recipient earns: each transaction's effective tip times its gas used."""
    sidecars: tuple[BlobSidecar, ...]
    requests: tuple[bytes, ...] | None
    """The execution-layer requests, empty ones left out (Prague on)."""


def calc_gas_limit(parent_gas_limit: int, desired: int) -> int:
    """geth's ``CalcGasLimit``: one step (1/1024 of the parent's, less one) towards ``desired``."""
    delta = parent_gas_limit // 1024 - 1
    desired = max(desired, MIN_GAS_LIMIT)
    if parent_gas_limit < desired:
        return min(parent_gas_limit + delta, desired)
    if parent_gas_limit > desired:
        return max(parent_gas_limit - delta, desired)
    return parent_gas_limit


def build_payload(backend: Any, config: ChainConfig, head: Header, attributes: PayloadAttributes,
                  transactions: Sequence[bytes] | None, extra_data: bytes,
                  pool: TxPool | None = None) -> BuiltPayload:
    """A block on ``head``: ``transactions`` (each must apply) when given, else the pool's best."""
    number, timestamp = head.number + 1, attributes.timestamp
    if timestamp <= head.timestamp:
        raise BuildFailed(f"invalid timestamp, parent {head.timestamp} given {timestamp}")
    rules = config.rules(number, timestamp)
    if rules.withdrawals and attributes.withdrawals is None:
        withdrawals: tuple[Withdrawal, ...] | None = ()
    elif not rules.withdrawals and attributes.withdrawals is not None:
        raise BuildFailed("unexpected withdrawals before shanghai")
    else:
        withdrawals = attributes.withdrawals
    given: list[tuple[Transaction, BlobSidecar | None]] | None = None
    if transactions is not None:
        if len(transactions) > MAX_BUILD_TRANSACTIONS:
            raise BuildFailed(f"too many transactions: at most {MAX_BUILD_TRANSACTIONS}")
        given = []
        for index, raw in enumerate(transactions):
            try:
                given.append(decode_submission(raw))
            except TransactionRejected as exc:
                raise BuildFailed(f"invalid transaction {index}: {exc.message}") from None

    vm_class = config.vm_class(number, timestamp)
    parent = backend.evm_database().get_block_header_by_hash(EvmHash(head.hash))
    params: dict[str, Any] = {
        "timestamp": timestamp, "coinbase": attributes.fee_recipient, "extra_data": extra_data,
        "nonce": ZERO_NONCE, "mix_hash": attributes.prev_randao,
        "gas_limit": calc_gas_limit(head.gas_limit, GAS_CEIL),
    }
    if rules.base_fee and head.base_fee_per_gas is None:
        params["gas_limit"] = calc_gas_limit(head.gas_limit * 2, GAS_CEIL)
    if rules.beacon_root:
        params["parent_beacon_block_root"] = attributes.beacon_root or b"\x00" * 32
    start = vm_class.create_header_from_parent(parent, **params)

    chosen = _choose(backend, config, vm_class, start, rules, given, pool)
    template_header = decode_header(rlp.encode(start))
    txs = [tx for tx, _ in chosen]
    template = rlp.decode(rlp.encode(block_item(template_header, txs, (), withdrawals)),
                          sedes=vm_class.get_block_class())
    vm = vm_at(vm_class, start, scratch_chaindb(backend.evm_database()), config.chain_id)
    try:
        result = vm.import_block(template)
    except (ValidationError, ValueError) as exc:
        raise BuildFailed(f"block {number} cannot be built: {exc}") from None
    block = result.block
    header = decode_header(rlp.encode(block.header))
    receipts = block.get_receipts(vm.chaindb)
    value, used_before = 0, 0
    for tx, receipt in zip(txs, receipts, strict=True):
        value += max(effective_tip(tx, header.base_fee_per_gas), 0) * (receipt.gas_used - used_before)
        used_before = receipt.gas_used
    requests = None
    if rules.requests:
        requests = tuple(bytes(r) for r in getattr(block, "block_requests", ()) if len(r) > 1)
    return BuiltPayload(
        header=header,
        transactions=tuple(encode_transaction(tx) for tx in txs),
        withdrawals=withdrawals,
        block_value=value,
        sidecars=tuple(sidecar for _, sidecar in chosen if sidecar is not None),
        requests=requests,
    )


def _choose(backend: Any, config: ChainConfig, vm_class: Any, start: Any, rules: Any,
            given: list[tuple[Transaction, BlobSidecar | None]] | None,
            pool: TxPool | None) -> list[tuple[Transaction, BlobSidecar | None]]:
    """The transactions (with sidecars) applied one by one: the given ones (the first to fail is
    the error), or the pool's best that fit (a failure drops its sender's line)."""
    vm = vm_at(vm_class, start, scratch_chaindb(backend.evm_database()), config.chain_id)
    vm.block_preprocessing(vm.get_block())
    state = vm.state
    header = start.copy(gas_used=0)
    max_blobs = rules.blob.max if rules.blob is not None else 0
    blob_base_fee = (config.blob_base_fee(start.block_number, start.timestamp, start.excess_blob_gas)
                     if rules.blob is not None else None)
    base_fee = getattr(start, "base_fee_per_gas", None)
    chosen: list[tuple[Transaction, BlobSidecar | None]] = []
    blobs = 0

    def apply(tx: Transaction, sidecar: BlobSidecar | None) -> None:
        nonlocal header, blobs
        have = tx.chain_id
        if have is not None and have != config.chain_id:
            raise TransactionRejected(f"invalid chain id for signer: have {have} want {config.chain_id}")
        evm_tx = evm_transaction(vm_class, tx)
        sender = recover_sender(evm_tx)
        blob_count = len(tx.blob_versioned_hashes) if isinstance(tx, BlobTransaction) else 0
        if isinstance(tx, BlobTransaction):
            if sidecar is None:
                raise TransactionRejected("blob transaction without blobs in miner")
            if blobs + blob_count > max_blobs:
                raise TransactionRejected("max data blobs reached")
        _pre_check(tx, sender, state, rules, base_fee, blob_base_fee,
                   start.gas_limit - header.gas_used)
        snapshot = state.snapshot()
        try:
            receipt, _ = vm.apply_transaction(header, evm_tx)
        except (ValidationError, ValueError) as exc:
            state.revert(snapshot)
            raise TransactionRejected(str(exc)) from None
        header = vm.add_receipt_to_header(header, receipt)
        blobs += blob_count
        chosen.append((tx, sidecar))

    if given is not None:
        for tx, sidecar in given:
            try:
                apply(tx, sidecar)
            except TransactionRejected as exc:
                raise BuildFailed(exc.message) from None
        return chosen
    if pool is None:
        return chosen
    min_tip = pool.limits.build_min_tip
    lines = {sender: kept for sender, line in pool.executable().items()
             if (kept := _payable_prefix(line, base_fee, blob_base_fee, min_tip, rules))}
    arrival = {p.hash: i for i, p in enumerate(p for line in lines.values() for p in line)}
    while lines:
        if start.gas_limit - header.gas_used < TX_GAS:
            break
        sender, best = max(((s, line[0]) for s, line in lines.items()),
                           key=lambda item: (effective_tip(item[1].tx, base_fee), -arrival[item[1].hash]))
        if best.tx.gas > start.gas_limit - header.gas_used or (
                isinstance(best.tx, BlobTransaction)
                and blobs + len(best.tx.blob_versioned_hashes) > max_blobs):
            del lines[sender]
            continue
        try:
            apply(best.tx, best.sidecar)
        except TransactionRejected as exc:
            if not exc.message.startswith("nonce too low"):  # (a stale one is only skipped)
                del lines[sender]
                continue
        lines[sender].pop(0)
        if not lines[sender]:
            del lines[sender]
    return chosen


def _payable_prefix(line: list[Pooled], base_fee: int | None, blob_base_fee: int | None,
                    min_tip: int, rules: Any) -> list[Pooled]:
    """A sender's transactions up to the first the miner's fee and gas filter leaves out."""
    def payable(pooled: Pooled) -> bool:
        tx = pooled.tx
        blob_fee_low = (isinstance(tx, BlobTransaction) and blob_base_fee is not None
                        and tx.max_fee_per_blob_gas < blob_base_fee)
        return ((base_fee is None or fee_cap(tx) >= base_fee) and effective_tip(tx, base_fee) >= min_tip
                and not blob_fee_low and (rules.tx_gas_cap is None or tx.gas <= rules.tx_gas_cap))

    return list(takewhile(payable, line))


def _pre_check(tx: Transaction, sender: bytes, state: Any, rules: Fork, base_fee: int | None,
               blob_base_fee: int | None, gas_left: int) -> None:
    """geth's state transition pre-checks (:func:`~ethread.forks.validity.validate_transaction`)."""
    address = EvmAddress(sender)
    account = SenderAccount(state.get_nonce(address), state.get_balance(address),
                            state.get_code(address))
    block = BlockContext(base_fee=base_fee, blob_base_fee=blob_base_fee, gas_available=gas_left)
    try:
        validate_transaction(rules, fields_of(tx), block, account, sender=sender)
    except InvalidTransaction as exc:
        raise TransactionRejected(str(exc)) from None


__all__ = ["GAS_CEIL", "BuildFailed", "BuiltPayload", "build_payload", "calc_gas_limit"]
