"""Build the models of a block (transactions with senders, receipts with their logs) from its
decoded parts and what execution produced or a store kept: what the RPC answer adds to the
canonical bytes (senders, block-wide log indexes, per-transaction gas, contract addresses,
effective gas prices, blob fees) is derived here, in one place, for every backend."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from eth._utils.address import generate_contract_address
from eth_typing import Address as EvmAddress

from ..forks import BLOB_GAS_PER_BLOB, ChainConfig
from ..models import (
    AccessListTransaction,
    Address,
    BlobTransaction,
    Block,
    Hash32,
    Header,
    IncludedTransaction,
    LegacyTransaction,
    Log,
    Receipt,
    Transaction,
    Withdrawal,
    trusted_maker,
)


def effective_gas_price(tx: Transaction, base_fee: int | None) -> int:
    """What the sender paid per gas: the gas price, or base fee plus the capped tip."""
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        return tx.gas_price
    if base_fee is None:
        return tx.max_fee_per_gas
    return min(tx.max_fee_per_gas, base_fee + tx.max_priority_fee_per_gas)


def assemble_block(header: Header, transactions: Sequence[tuple[Transaction, bytes]],
                   senders: Sequence[Address], uncles: tuple[Header, ...],
                   withdrawals: tuple[Withdrawal, ...] | None, size: int) -> Block:
    """A block model from its decoded header, its transactions with their hashes, their
    senders, its uncles and withdrawals (None before Shanghai) and its size in bytes."""
    block_hash, number, base_fee = header.hash, header.number, header.base_fee_per_gas
    timestamp = header.timestamp
    txs = tuple(
        _INCLUDED(tx, tx_hash, sender, block_hash, number, timestamp, index,
                  effective_gas_price(tx, base_fee))
        for index, ((tx, tx_hash), sender) in enumerate(zip(transactions, senders, strict=True))
    )
    return _BLOCK(header=header, transactions=txs, uncles=uncles, withdrawals=withdrawals,
                  size=size)


_BLOCK = trusted_maker(Block, by_keyword=True)
_INCLUDED = trusted_maker(IncludedTransaction, "transaction hash sender block_hash block_number "
                                               "block_timestamp index gas_price")


ReceiptRow = tuple[bytes, int, bytes, Iterable[tuple[bytes, tuple[Hash32, ...], bytes]]]
"""A receipt's consensus fields: status byte or state root, cumulative gas, 256-byte bloom, and
its logs as (address, topics, data)."""

_LOG = trusted_maker(Log, "address topics data block_number transaction_hash transaction_index "
                          "block_hash block_timestamp log_index removed")
_RECEIPT = trusted_maker(Receipt, "type status root cumulative_gas_used logs_bloom logs "
                                  "transaction_hash transaction_index block_hash block_number "
                                  "sender to gas_used effective_gas_price contract_address "
                                  "blob_gas_used blob_gas_price")


def build_receipts(block: Block, evm_receipts: Sequence[Any], config: ChainConfig) -> tuple[Receipt, ...]:
    """Receipt models with block-wide log indexes, per-transaction gas and blob fees, from the
    receipts py-evm produced (integer topics and bloom)."""
    return receipts_of_rows(block, (
        (r.state_root, r.gas_used, r.bloom.to_bytes(256, "big"),
         [(log.address, tuple(t.to_bytes(32, "big") for t in log.topics), log.data)
          for log in r.logs])
        for r in evm_receipts), config)


TxFacts = tuple[Hash32, Address, Address | None, int, int, int, int | None]
"""What a receipt takes from its transaction: hash, sender, ``to``, type, nonce, effective gas
price and, for a blob transaction, how many blobs it carries (None for the other types)."""


def transaction_facts(block: Block) -> list[TxFacts]:
    """The :data:`TxFacts` of each transaction of ``block``, in order."""
    facts: list[TxFacts] = []
    for itx in block.transactions:
        tx = itx.transaction
        blobs = len(tx.blob_versioned_hashes) if isinstance(tx, BlobTransaction) else None
        facts.append((itx.hash, itx.sender, tx.to, tx.type, tx.nonce, itx.gas_price, blobs))
    return facts


def receipts_of_rows(block: Block, rows: Iterable[ReceiptRow], config: ChainConfig
                     ) -> tuple[Receipt, ...]:
    """Receipt models of ``block`` from its receipts' consensus fields (one row a transaction)."""
    header: Header = block.header
    return receipts_of_facts(header.hash, header.number, header.timestamp,
                             header.excess_blob_gas, transaction_facts(block), rows, config)


def receipts_of_facts(block_hash: Hash32, number: int, timestamp: int,
                      excess_blob_gas: int | None, facts: Sequence[TxFacts],
                      rows: Iterable[ReceiptRow], config: ChainConfig) -> tuple[Receipt, ...]:
    """Receipt models of the block ``block_hash`` from its header's facts, each transaction's
    facts and its receipt's consensus fields (in order), with what the RPC answer adds
    (block-wide log indexes, per-transaction gas, contract addresses, prices, blob fees)."""
    blob_price = None  # worked out for the first blob transaction: most blocks have none
    receipts = []
    log_index = 0
    previous_cumulative = 0
    for index, ((tx_hash, sender, to, kind, nonce, gas_price, blobs),
                (state_root, cumulative, bloom, raw_logs)) in enumerate(zip(facts, rows,
                                                                             strict=True)):
        logs = []
        for address, topics, data in raw_logs:
            logs.append(_LOG(address, topics, data, number, tx_hash, index, block_hash,
                             timestamp, log_index, False))
            log_index += 1
        if len(state_root) == 32:
            status, root = None, state_root
        else:
            status, root = (1 if state_root == b"\x01" else 0), None
        contract = generate_contract_address(EvmAddress(sender), nonce) if to is None else None
        blob_gas = None
        if blobs is not None:
            blob_gas = BLOB_GAS_PER_BLOB * blobs
            if blob_price is None and excess_blob_gas is not None:
                blob_price = config.blob_base_fee(number, timestamp, excess_blob_gas)
        receipts.append(_RECEIPT(
            kind, status, root, cumulative, bloom, tuple(logs), tx_hash, index, block_hash,
            number, sender, to, cumulative - previous_cumulative, gas_price, contract,
            blob_gas, blob_price if blob_gas is not None else None,
        ))
        previous_cumulative = cumulative
    return tuple(receipts)
