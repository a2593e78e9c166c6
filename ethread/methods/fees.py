"""Fees: eth_feeHistory, eth_gasPrice, eth_maxPriorityFeePerGas and eth_blobBaseFee, with
geth's rules (``eth/gasprice``). The next base fee follows EIP-1559 (1 gwei for the first
London block), the blob base fee EIP-4844 with the fork's blob schedule.

The suggested tip samples the three lowest tips of at least 2 wei in each of the last 20
blocks (from senders other than the block's miner), reaching back up to 40 blocks when blocks
give one sample or none, and answers the 60th percentile, capped at 500 gwei. A block with no
usable tip stands for the last price suggested (at first, 0.001 gwei).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..backend import BlockSource, ChainPointers, ConfigSource, HeaderSource, ReceiptSource
from ..errors import ServerError
from ..evm.blobs import blob_base_fee as price_blob_gas
from ..evm.blobs import excess_blob_gas_after
from ..forks import BLOB_GAS_PER_BLOB, NO_SCHEDULE, ChainConfig
from ..forks.base_fee import next_base_fee
from ..models import Block, Header, Tag
from ..results import EMPTY_HISTORY, FeeHistory
from .resolve import header_at, resolve_number

MAX_PERCENTILES = 100
"""Reward percentiles one eth_feeHistory call may ask for."""


class FeeReader(HeaderSource, BlockSource, ReceiptSource, ChainPointers, ConfigSource, Protocol):
    """What the fee methods read: blocks by number, their receipts, the fork schedule."""


class FeeHistoryError(ServerError):
    """A fee history request geth refuses (a bad percentile, a block past the head)."""


@dataclass(frozen=True, slots=True)
class OracleSettings:
    """The gas price oracle's settings, geth's defaults."""

    blocks: int = 20
    percentile: int = 60
    max_price: int = 500 * 10**9
    ignore_price: int = 2
    start_price: int = 10**6
    """The price assumed before any was suggested (geth's default miner tip, 0.001 gwei)."""
    max_history: int = 1024
    """Blocks one eth_feeHistory call may cover (more are cut to this many)."""
    samples_per_block: int = 3


DEFAULT_ORACLE = OracleSettings()


# --------------------------------------------------------------------------------------------
# Per-block fee rules


def blob_base_fee(config: ChainConfig, header: Header) -> int | None:
    """The blob base fee of ``header``'s block, or None before Cancun."""
    schedule = config.rules(header.number, header.timestamp).blob
    if header.excess_blob_gas is None or schedule is None:
        return None
    return price_blob_gas(schedule, header.excess_blob_gas)


def _next_blob_base_fee(config: ChainConfig, header: Header) -> int:
    """The blob base fee after ``header`` in geth's fee history (priced at ``header``'s fork)."""
    rules = config.rules(header.number, header.timestamp)
    schedule = rules.blob
    if schedule is None or header.excess_blob_gas is None:
        return 0
    excess = excess_blob_gas_after(schedule, rules.blob_reserve_price, header.excess_blob_gas,
                                   header.blob_gas_used or 0, header.base_fee_per_gas or 0)
    return price_blob_gas(schedule, excess)


def effective_tip(block: Block, gas_price: int) -> int:
    """What a transaction of ``block`` paying ``gas_price`` in all gave its miner per gas."""
    base_fee = block.header.base_fee_per_gas
    return gas_price if base_fee is None else gas_price - base_fee


# --------------------------------------------------------------------------------------------
# eth_feeHistory


def _config(backend: FeeReader) -> ChainConfig:
    config = backend.chain_config()
    return NO_SCHEDULE if config is None else config


def _blob_gas_used_ratio(config: ChainConfig, header: Header) -> float:
    schedule = config.rules(header.number, header.timestamp).blob
    max_blob_gas = schedule.max * BLOB_GAS_PER_BLOB if schedule else 0
    return header.blob_gas_used / max_blob_gas if header.blob_gas_used is not None and max_blob_gas else 0.0


def _rewards(block: Block, receipts: Sequence[object] | None,
             percentiles: Sequence[float]) -> tuple[int, ...]:
    """The tip at each gas-weighted percentile of the block's transactions, as geth has them."""
    if not block.transactions:
        return tuple(0 for _ in percentiles)
    gas_used = [getattr(r, "gas_used", 0) for r in receipts or ()]
    rows = sorted(
        ((effective_tip(block, tx.gas_price), gas_used[i] if i < len(gas_used) else 0)
         for i, tx in enumerate(block.transactions)),
        key=lambda row: row[0],
    )
    out = []
    index = 0
    total = rows[0][1]
    for p in percentiles:
        threshold = int(block.header.gas_used * p / 100)
        while total < threshold and index < len(rows) - 1:
            index += 1
            total += rows[index][1]
        out.append(rows[index][0])
    return tuple(out)


def check_percentiles(percentiles: Sequence[float]) -> None:
    """Refuse reward percentiles too many, out of [0, 100] or not increasing, as geth does."""
    if len(percentiles) > MAX_PERCENTILES:
        raise FeeHistoryError(f"invalid reward percentile: over the query limit {MAX_PERCENTILES}")
    for i, p in enumerate(percentiles):
        if p < 0 or p > 100:
            raise FeeHistoryError(f"invalid reward percentile: {p:f}")  # (Go's %f)
        if i > 0 and p <= percentiles[i - 1]:
            raise FeeHistoryError(
                f"invalid reward percentile: #{i - 1}:{percentiles[i - 1]:f} >= #{i}:{p:f}")


def fee_history(backend: FeeReader, block_count: int, newest: int | Tag,
                percentiles: Sequence[float] = (),
                settings: OracleSettings = DEFAULT_ORACLE) -> FeeHistory:
    """Base fees, gas used ratios, blob fees and tips of ``block_count`` blocks up to ``newest``."""
    if block_count < 1:
        return EMPTY_HISTORY
    check_percentiles(percentiles)
    block_count = min(block_count, settings.max_history)
    head = backend.pointer("latest")
    if head is None:
        return EMPTY_HISTORY
    if isinstance(newest, int):
        if newest > head:
            raise FeeHistoryError(f"request beyond head block: requested {newest}, head {head}")
        last = newest
    elif newest == "pending":
        # No pending block here: geth then covers the blocks up to the head, one fewer.
        block_count -= 1
        last = head
    else:
        number = resolve_number(backend, newest)
        if number is None:
            return EMPTY_HISTORY
        last = number
    if block_count == 0:
        return EMPTY_HISTORY
    block_count = min(block_count, last + 1)
    oldest = last + 1 - block_count
    config = _config(backend)
    blocks: list[Block] = []
    for number in range(oldest, last + 1):
        block = _block_at(backend, number)
        if block is None:
            break
        blocks.append(block)
    if not blocks:
        return EMPTY_HISTORY
    headers = [block.header for block in blocks]
    newest_header = headers[-1]
    london_next = config.rules(newest_header.number + 1, newest_header.timestamp).base_fee
    return FeeHistory(
        oldest_block=oldest,
        reward=(tuple(_rewards(block, backend.receipts(block.hash), percentiles) for block in blocks)
                if percentiles else None),
        base_fee_per_gas=(*(h.base_fee_per_gas or 0 for h in headers),
                          next_base_fee(config, newest_header) if london_next else 0),
        gas_used_ratio=tuple(h.gas_used / h.gas_limit for h in headers),
        base_fee_per_blob_gas=(*(blob_base_fee(config, h) or 0 for h in headers),
                               _next_blob_base_fee(config, newest_header)),
        blob_gas_used_ratio=tuple(_blob_gas_used_ratio(config, h) for h in headers),
    )


# --------------------------------------------------------------------------------------------
# eth_gasPrice, eth_maxPriorityFeePerGas, eth_blobBaseFee


def _block_tips(block: Block, settings: OracleSettings) -> list[int]:
    """The lowest tips the oracle samples from ``block`` (see the module docstring)."""
    tips = sorted(
        (effective_tip(block, tx.gas_price), tx.sender) for tx in block.transactions
    )
    out: list[int] = []
    for tip, sender in tips:
        if tip < settings.ignore_price or sender == block.header.coinbase:
            continue
        out.append(tip)
        if len(out) >= settings.samples_per_block:
            break
    return out


def suggest_tip_cap(backend: FeeReader, last_price: int | None = None,
                    settings: OracleSettings = DEFAULT_ORACLE) -> int:
    """The tip geth's oracle suggests at the head (``last_price``: its previous suggestion)."""
    fallback = settings.start_price if last_price is None else last_price
    head = backend.pointer("latest")
    if head is None:
        return fallback
    samples: list[int] = []
    number = head - min(settings.blocks, head)
    pending = list(range(head, number, -1))
    while pending:
        block = _block_at(backend, pending.pop(0))
        values = _block_tips(block, settings) if block is not None else []
        if not values:
            values = [fallback]
        if (len(values) == 1 and len(samples) + 1 + len(pending) < settings.blocks * 2
                and number > 0):
            pending.append(number)
            number -= 1
        samples.extend(values)
    price = fallback
    if samples:
        samples.sort()
        price = samples[(len(samples) - 1) * settings.percentile // 100]
    return min(price, settings.max_price)


def _block_at(backend: FeeReader, number: int) -> Block | None:
    block_hash = backend.canonical_hash(number)
    return None if block_hash is None else backend.block_by_hash(block_hash)


def _head_header(backend: FeeReader) -> Header | None:
    head = backend.pointer("latest")
    return None if head is None else header_at(backend, head)


def head_base_fee(backend: FeeReader) -> int | None:
    """The base fee of the head block, or None before London (or on an empty backend)."""
    header = _head_header(backend)
    return None if header is None else header.base_fee_per_gas


def gas_price(tip: int, base_fee: int | None) -> int:
    """eth_gasPrice: the suggested tip plus the head's base fee (when it has one)."""
    return tip + (base_fee or 0)


def get_blob_base_fee(backend: FeeReader) -> int | None:
    """The head block's blob base fee, None before Cancun (JSON null, as geth answers)."""
    header = _head_header(backend)
    if header is None:
        return None
    return blob_base_fee(_config(backend), header)


def get_base_fee(backend: FeeReader) -> int | None:
    """eth_baseFee: the base fee of the block after the head, None before London."""
    header = _head_header(backend)
    if header is None:
        return None
    config = _config(backend)
    if not config.rules(header.number + 1, header.timestamp).base_fee:
        return None
    return next_base_fee(config, header)


class TipOracle:
    """The oracle's memory between calls, as geth keeps it: the head last priced, its price."""

    def __init__(self, settings: OracleSettings = DEFAULT_ORACLE) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._head: bytes | None = None
        self._price: int | None = None

    def suggest_tip_cap(self, backend: FeeReader) -> int:
        """The suggested priority fee (eth_maxPriorityFeePerGas), kept until the head moves."""
        head = backend.pointer("latest")
        head_hash = backend.canonical_hash(head) if head is not None else None
        with self._lock:
            if head_hash is not None and head_hash == self._head and self._price is not None:
                return self._price
            price = suggest_tip_cap(backend, self._price, self.settings)
            self._head, self._price = head_hash, price
            return price
