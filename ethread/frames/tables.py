"""One pass over a block range fills the columns of every table asked for.

Each table is a set of column lists appended to row by row while the blocks are read (the
part that costs), then turned into Arrow arrays in bulk (:mod:`.columns`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from ..backend import ChainPointers
from ..iteration import ReceiptRangeSource, check_range, iter_blocks, iter_blocks_with_receipts
from ..models import Block, IncludedTransaction, LegacyTransaction, Receipt
from ..progress import shows_bars
from . import columns as c
from .extra import pyarrow, tqdm

TABLES = ("blocks", "transactions", "receipts", "logs", "withdrawals", "uncles")
"""The tables a range can be read into, in the order :func:`collect` returns them."""

PROGRESS_FROM = 2048
"""Ranges of at least this many blocks show a progress bar (unless asked not to)."""

Columns = dict[str, tuple[c.Column, list[Any]]]

Start = int | Literal["earliest"]
"""The first block of a range: a number, or ``"earliest"`` (the backend's first block)."""
Stop = int | Literal["latest"]
"""The end of a range, excluded: a number, or ``"latest"`` (through the backend's head)."""


def bounds(backend: ChainPointers, start: Start, stop: Stop) -> tuple[int, int]:
    """``(start, stop)`` as block numbers (a backend without blocks has the range ``(0, 0)``)."""
    if start == "earliest":
        start = backend.pointer("earliest") or 0
    if stop == "latest":
        head = backend.pointer("latest")
        stop = 0 if head is None else head + 1
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, int):
            allowed = '"earliest"' if name == "start" else '"latest"'
            raise ValueError(f"{name} must be a block number or {allowed}, not {value!r}")
    assert isinstance(start, int) and isinstance(stop, int)
    return start, stop


def _columns(spec: Iterable[tuple[str, c.Column]]) -> Columns:
    return {name: (kind, []) for name, kind in spec}


BLOCK_COLUMNS = (
    ("number", c.uint64), ("hash", c.hex_string), ("parent_hash", c.hex_string),
    ("timestamp", c.timestamp), ("miner", c.hex_string), ("gas_limit", c.uint64),
    ("gas_used", c.uint64), ("base_fee_per_gas", c.wide), ("difficulty", c.wide),
    ("size", c.uint64), ("transaction_count", c.uint64), ("uncle_count", c.uint64),
    ("withdrawal_count", c.uint64), ("state_root", c.hex_string),
    ("transactions_root", c.hex_string), ("receipts_root", c.hex_string),
    ("uncles_hash", c.hex_string), ("logs_bloom", c.binary), ("extra_data", c.binary),
    ("mix_hash", c.hex_string), ("nonce", c.hex_string), ("withdrawals_root", c.hex_string),
    ("blob_gas_used", c.uint64), ("excess_blob_gas", c.uint64),
    ("parent_beacon_block_root", c.hex_string), ("requests_hash", c.hex_string),
)

_TRANSACTION_KEY_COLUMNS = (
    ("block_number", c.uint64), ("block_hash", c.hex_string), ("timestamp", c.timestamp),
    ("transaction_index", c.uint64), ("hash", c.hex_string), ("type", c.uint64),
    ("from", c.hex_string), ("to", c.hex_string), ("value", c.wide),
)
"""The columns that open both the transactions and the receipts table (see :func:`_key_row`)."""

TRANSACTION_COLUMNS = (
    *_TRANSACTION_KEY_COLUMNS, ("nonce", c.uint64),
    ("gas", c.uint64), ("gas_price", c.wide), ("max_fee_per_gas", c.wide),
    ("max_priority_fee_per_gas", c.wide), ("max_fee_per_blob_gas", c.wide),
    ("input", c.binary), ("chain_id", c.uint64), ("v", c.uint64), ("r", c.hex_string),
    ("s", c.hex_string), ("access_list_size", c.uint64), ("blob_versioned_hashes", c.hex_list),
    ("authorization_count", c.uint64),
)

RECEIPT_COLUMNS = (
    *_TRANSACTION_KEY_COLUMNS, ("status", c.uint64),
    ("root", c.hex_string), ("gas_used", c.uint64), ("cumulative_gas_used", c.uint64),
    ("effective_gas_price", c.wide), ("contract_address", c.hex_string),
    ("log_count", c.uint64), ("blob_gas_used", c.uint64), ("blob_gas_price", c.wide),
    ("logs_bloom", c.binary),
)

LOG_COLUMNS = (
    ("block_number", c.uint64), ("block_hash", c.hex_string), ("timestamp", c.timestamp),
    ("transaction_index", c.uint64), ("transaction_hash", c.hex_string),
    ("log_index", c.uint64), ("address", c.hex_string), ("topic0", c.hex_string),
    ("topic1", c.hex_string), ("topic2", c.hex_string), ("topic3", c.hex_string),
    ("data", c.binary),
)

WITHDRAWAL_COLUMNS = (
    ("block_number", c.uint64), ("block_hash", c.hex_string), ("timestamp", c.timestamp),
    ("index", c.uint64), ("validator_index", c.uint64), ("address", c.hex_string),
    ("amount_gwei", c.uint64),
)

UNCLE_COLUMNS = (
    ("block_number", c.uint64), ("block_hash", c.hex_string), ("uncle_index", c.uint64),
    ("number", c.uint64), ("hash", c.hex_string), ("parent_hash", c.hex_string),
    ("miner", c.hex_string), ("timestamp", c.timestamp), ("difficulty", c.wide),
    ("gas_limit", c.uint64), ("gas_used", c.uint64),
)

SPECS = {
    "blocks": BLOCK_COLUMNS, "transactions": TRANSACTION_COLUMNS, "receipts": RECEIPT_COLUMNS,
    "logs": LOG_COLUMNS, "withdrawals": WITHDRAWAL_COLUMNS, "uncles": UNCLE_COLUMNS,
}


def _append(cols: Columns, row: tuple[Any, ...]) -> None:
    for (_, values), value in zip(cols.values(), row, strict=True):
        values.append(value)


def _block_row(block: Block) -> tuple[Any, ...]:
    h = block.header
    return (h.number, h.hash, h.parent_hash, h.timestamp, h.coinbase, h.gas_limit, h.gas_used,
            h.base_fee_per_gas, h.difficulty, block.size, len(block.transactions),
            len(block.uncles), None if block.withdrawals is None else len(block.withdrawals),
            h.state_root, h.transactions_root, h.receipts_root, h.uncles_hash, h.logs_bloom,
            h.extra_data, h.mix_hash, h.nonce, h.withdrawals_root, h.blob_gas_used,
            h.excess_blob_gas, h.parent_beacon_block_root, h.requests_hash)


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big") if value < 2**256 else value.to_bytes((value.bit_length() + 7) // 8, "big")


def _key_row(block: Block, included: IncludedTransaction) -> tuple[Any, ...]:
    """The columns of ``_TRANSACTION_KEY_COLUMNS``."""
    tx = included.transaction
    return (block.number, block.hash, block.header.timestamp, included.index, included.hash,
            tx.type, included.sender, tx.to, tx.value)


def _transaction_row(block: Block, included: IncludedTransaction) -> tuple[Any, ...]:
    tx = included.transaction
    legacy = isinstance(tx, LegacyTransaction)
    return (
        *_key_row(block, included), tx.nonce, tx.gas, included.gas_price,
        getattr(tx, "max_fee_per_gas", None), getattr(tx, "max_priority_fee_per_gas", None),
        getattr(tx, "max_fee_per_blob_gas", None), tx.data, tx.chain_id,
        tx.v if isinstance(tx, LegacyTransaction) else tx.y_parity, _word(tx.r), _word(tx.s),
        None if legacy else len(getattr(tx, "access_list", ())),
        getattr(tx, "blob_versioned_hashes", None),
        len(tx.authorization_list) if hasattr(tx, "authorization_list") else None)


def _receipt_row(block: Block, included: IncludedTransaction, r: Receipt) -> tuple[Any, ...]:
    return (
        *_key_row(block, included), r.status, r.root, r.gas_used, r.cumulative_gas_used, r.effective_gas_price,
        r.contract_address, len(r.logs), r.blob_gas_used, r.blob_gas_price, r.logs_bloom)


def log_row(log: Any) -> tuple[Any, ...]:
    """The columns of :data:`LOG_COLUMNS` for one :class:`~ethread.models.Log`."""
    topics = log.topics
    n = len(topics)
    return (log.block_number, log.block_hash, log.block_timestamp, log.transaction_index,
            log.transaction_hash, log.log_index, log.address,
            topics[0] if n > 0 else None, topics[1] if n > 1 else None,
            topics[2] if n > 2 else None, topics[3] if n > 3 else None, log.data)


def progress_bar(total: int, wanted: bool, unit: str = "blocks") -> Any:
    """A tqdm bar over ``total`` blocks when wanted, the range long and someone watching."""
    if not wanted or total < PROGRESS_FROM or not shows_bars():
        return None
    return tqdm().tqdm(total=total, unit=unit, unit_scale=True, desc="ethread.frames",
                       leave=False)


def tracked(items: Iterator[Any], bar: Any) -> Iterator[Any]:
    """``items``, the progress ``bar`` (None: none) moved on after each and closed at the end."""
    if bar is None:
        yield from items
        return
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()


def collect(backend: ReceiptRangeSource, start: Start, stop: Stop, names: Iterable[str],
            *, progress: bool = True, workers: int = 1) -> dict[str, Any]:
    """Arrow tables ``names`` (any of :data:`TABLES`) of ``range(start, stop)`` in one pass.

    A backend that hands out its stored records is read by the bulk path (:mod:`.bulk`),
    shared among ``workers`` processes when the range is worth it (:mod:`.parallel`); others
    through their models. A missing block raises :class:`~ethread.errors.MissingBlocks` first.
    """
    pyarrow()  # say what to install before any work
    start, stop = bounds(backend, start, stop)
    wanted = list(dict.fromkeys([names] if isinstance(names, str) else names))  # "logs": one
    for name in wanted:
        if name not in SPECS:
            raise ValueError(f"no table {name!r}; the tables are {', '.join(TABLES)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, not {workers!r}")
    check_range(backend, start, stop)
    needs_receipts = "receipts" in wanted or "logs" in wanted
    from .bulk import RawBlockSource, tables_of_records

    if isinstance(backend, RawBlockSource):
        bar = progress_bar(stop - start, progress)
        try:
            if workers > 1 and stop > start and _worth_workers(backend, start, stop):
                from .parallel import collect_parallel

                made = collect_parallel(backend, start, stop, wanted, workers, bar)
            else:
                records = backend.raw_blocks(start, stop, receipts=needs_receipts)
                made = tables_of_records(records, wanted, backend.chain_config(),
                                         None if bar is None else lambda: bar.update(1))
        finally:
            if bar is not None:
                bar.close()
        return {name: c.with_pandas_types(table) for name, table in made.items()}
    if workers > 1:
        from .parallel import opener

        opener(backend)  # says why this backend is read in one process
    return collect_models(backend, start, stop, wanted, progress=progress)


def _worth_workers(backend: Any, start: int, stop: int) -> bool:
    from .parallel import worth_workers

    return worth_workers(backend, start, stop)


def collect_models(backend: ReceiptRangeSource, start: Start, stop: Stop, names: Iterable[str],
                   *, progress: bool = True) -> dict[str, Any]:
    """The tables of :func:`collect` built from the backend's models, row by row (the yardstick
    the bulk path is tested against)."""
    start, stop = bounds(backend, start, stop)
    wanted = list(dict.fromkeys(names))
    check_range(backend, start, stop)
    needs_receipts = "receipts" in wanted or "logs" in wanted
    tables = {name: _columns(SPECS[name]) for name in wanted}
    bar = progress_bar(stop - start, progress)
    rows: Iterator[tuple[Block, tuple[Receipt, ...] | None]]
    if needs_receipts:
        rows = iter_blocks_with_receipts(backend, start, stop)
    else:
        rows = ((block, None) for block in iter_blocks(backend, start, stop))
    fills = [(name, _FILLERS[name], cols) for name, cols in tables.items()]
    for block, receipts in tracked(rows, bar):
        for _, fill, cols in fills:
            fill(cols, block, receipts)
    return {name: c.with_pandas_types(c.table(cols)) for name, cols in tables.items()}


def _fill_blocks(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    _append(cols, _block_row(block))


def _fill_transactions(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    for included in block.transactions:
        _append(cols, _transaction_row(block, included))


def _fill_receipts(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    assert receipts is not None
    for included, receipt in zip(block.transactions, receipts, strict=True):
        _append(cols, _receipt_row(block, included, receipt))


def _fill_logs(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    assert receipts is not None
    for receipt in receipts:
        for log in receipt.logs:
            _append(cols, log_row(log))


def _fill_withdrawals(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    for w in block.withdrawals or ():
        _append(cols, (block.number, block.hash, block.header.timestamp, w.index,
                       w.validator_index, w.address, w.amount))


def _fill_uncles(cols: Columns, block: Block, receipts: tuple[Receipt, ...] | None) -> None:
    for i, u in enumerate(block.uncles):
        _append(cols, (block.number, block.hash, i, u.number, u.hash, u.parent_hash, u.coinbase,
                       u.timestamp, u.difficulty, u.gas_limit, u.gas_used))


_FILLERS: dict[str, Callable[[Columns, Block, tuple[Receipt, ...] | None], None]] = {
    "blocks": _fill_blocks, "transactions": _fill_transactions, "receipts": _fill_receipts,
    "logs": _fill_logs, "withdrawals": _fill_withdrawals, "uncles": _fill_uncles,
}
