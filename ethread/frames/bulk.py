"""Tables straight from stored records: the fast path of :mod:`ethread.frames`.

A store that hands out raw records (``raw_blocks``) is read without a model per row: each
block's RLP is decoded once by :mod:`ethread.rlpcodec.items` into one list per column, and the
per-row work (hex strings, big-endian numbers) is done on whole columns with numpy. The tables
equal those of the model path (:func:`ethread.frames.tables.collect`); ``tests/frames/
test_bulk.py`` holds them to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from ..backends.history import RawBlock
from ..era1.ere import logs_bloom
from ..forks import BLOB_GAS_PER_BLOB, NO_SCHEDULE, ChainConfig
from ..keccak import keccak256 as keccak
from ..rlpcodec.items import (
    DecodeError,
    count_items,
    decode_nested,
    encode_nested,
    item_spans,
    payload_span,
    shallow_items,
    string_at,
)
from . import columns as c
from .block_arrays import Batch, batches
from .columns import decimal_column, hex_column, uint_column
from .extra import pyarrow
from .logs_arrays import logs_table
from .receipts_arrays import receipts_table
from .rlp_arrays import Irregular
from .transactions_arrays import transactions_table


@runtime_checkable
class RawBlockSource(Protocol):
    """A backend that hands out its blocks' stored records in order."""

    def raw_blocks(self, start: int, stop: int, *, receipts: bool = True
                   ) -> Iterator[RawBlock]:
        """The records of blocks ``range(start, stop)`` in order, undecoded; a block the
        backend lacks raises :class:`~ethread.errors.MissingBlocks`."""

    def chain_config(self) -> ChainConfig | None:
        """Chain id and fork schedule, when the backend knows them."""


def _int(value: bytes) -> int:
    return int.from_bytes(value, "big")


# -- the columns of each table -------------------------------------------------------------------

_BLOCK_SPEC = {
    "number": "int", "hash": 32, "parent_hash": 32, "timestamp": "time", "miner": 20,
    "gas_limit": "uint", "gas_used": "uint", "base_fee_per_gas": "wide", "difficulty": "wide",
    "size": "int", "transaction_count": "int", "uncle_count": "int", "withdrawal_count": "int",
    "state_root": 32, "transactions_root": 32, "receipts_root": 32, "uncles_hash": 32,
    "logs_bloom": "bin", "extra_data": "bin", "mix_hash": 32, "nonce": 8,
    "withdrawals_root": 32, "blob_gas_used": "uint", "excess_blob_gas": "uint",
    "parent_beacon_block_root": 32, "requests_hash": 32,
}
_KEY_SPEC = {
    "block_number": "int", "block_hash": 32, "timestamp": "time", "transaction_index": "int",
    "hash": 32, "type": "int", "from": 20, "to": 20, "value": "wide",
}
_TRANSACTION_SPEC = {
    **_KEY_SPEC, "nonce": "uint", "gas": "uint", "gas_price": "wide_int",
    "max_fee_per_gas": "wide", "max_priority_fee_per_gas": "wide",
    "max_fee_per_blob_gas": "wide", "input": "bin", "chain_id": "int", "v": "int",
    "r": "word", "s": "word", "access_list_size": "int", "blob_versioned_hashes": "hexlist",
    "authorization_count": "int",
}
_RECEIPT_SPEC = {
    **_KEY_SPEC, "status": "int", "root": 32, "gas_used": "int", "cumulative_gas_used": "int",
    "effective_gas_price": "wide_int", "contract_address": 20, "log_count": "int",
    "blob_gas_used": "int", "blob_gas_price": "wide_int", "logs_bloom": "bin",
}
_LOG_SPEC = {
    "block_number": "int", "block_hash": 32, "timestamp": "time", "transaction_index": "int",
    "transaction_hash": 32, "log_index": "int", "address": 20, "topic0": 32, "topic1": 32,
    "topic2": 32, "topic3": 32, "data": "bin",
}
_WITHDRAWAL_SPEC = {
    "block_number": "int", "block_hash": 32, "timestamp": "time", "index": "uint",
    "validator_index": "uint", "address": 20, "amount_gwei": "uint",
}
_UNCLE_SPEC = {
    "block_number": "int", "block_hash": 32, "uncle_index": "int", "number": "uint",
    "hash": 32, "parent_hash": 32, "miner": 20, "timestamp": "utime", "difficulty": "wide",
    "gas_limit": "uint", "gas_used": "uint",
}
SPECS: dict[str, dict[str, Any]] = {
    "blocks": _BLOCK_SPEC, "transactions": _TRANSACTION_SPEC, "receipts": _RECEIPT_SPEC,
    "logs": _LOG_SPEC, "withdrawals": _WITHDRAWAL_SPEC, "uncles": _UNCLE_SPEC,
}


def _array(kind: Any, values: list[Any]) -> Any:
    """One Arrow array of a column kind from its raw values."""
    pa = pyarrow()
    if isinstance(kind, int):
        return hex_column(values, kind)
    if kind == "int":
        return c.uint64(values)
    if kind == "uint":
        return uint_column(values)
    if kind == "wide":
        return decimal_column(values)
    if kind == "wide_int":
        return decimal_column([None if v is None else v.to_bytes((v.bit_length() + 7) // 8, "big")
                               for v in values])
    if kind == "time":
        return c.timestamp(values)
    if kind == "utime":
        return c.timestamp([None if v is None else _int(v) for v in values])
    if kind == "bin":
        return pa.array(values, pa.binary())
    if kind == "word":
        return hex_column([v.rjust(32, b"\x00") if len(v) <= 32 else v for v in values], 32)
    if kind == "hexlist":
        return c.hex_list(values)
    raise AssertionError(kind)


def _table(spec: dict[str, Any], columns: dict[str, list[Any]]) -> Any:
    pa = pyarrow()
    return pa.table({name: _array(kind, columns[name]) for name, kind in spec.items()})


# -- decoding --------------------------------------------------------------------------------------


def tables_of_records(records: Iterable[RawBlock], names: Sequence[str],
                      config: ChainConfig | None, on_block: Any = None, *,
                      whole_bodies: bool = False, arrays: bool = True) -> dict[str, Any]:
    """The tables ``names`` of the blocks ``records`` (in order) as Arrow tables.

    A body or receipt list is decoded whole only when a table needs it; otherwise its items are
    counted from their length prefixes (:func:`_counted_body`, :func:`_counted_receipts`).
    ``whole_bodies`` decodes everything whole (the plain path tests hold these to). The
    transactions, receipts and logs tables are read with numpy over batches of blocks unless
    ``arrays`` is false or ``whole_bodies`` true. ``on_block`` is called after each block."""
    wanted = set(names)
    if wanted & WALKED.keys() and arrays and not whole_bodies:
        return _walked(records, names, config, on_block)
    cols: dict[str, dict[str, list[Any]]] = {name: {col: [] for col in SPECS[name]}
                                             for name in wanted}
    schedule = config if config is not None else NO_SCHEDULE
    txs_needed = bool(wanted & {"transactions", "receipts", "logs"})
    decode_body = whole_bodies or bool(wanted & {"transactions", "receipts", "uncles"})
    whole_receipts = whole_bodies or "logs" in wanted
    for raw in records:
        try:
            _decode_block(raw, cols, wanted, txs_needed, decode_body, whole_receipts, schedule)
        except (ValueError, IndexError, TypeError) as exc:
            raise DecodeError(f"block {raw.number}: {exc}") from None
        if on_block is not None:
            on_block()
    return {name: _table(SPECS[name], cols[name]) for name in names}


WALKED: dict[str, Callable[[Batch, ChainConfig], Any]] = {
    "logs": lambda batch, config: logs_table(batch),
    "transactions": lambda batch, config: transactions_table(batch),
    "receipts": receipts_table,
}
"""The tables read by an array walk, and each one's walk of a batch (given the chain's
schedule): a table, None for a batch without a row, or :class:`.rlp_arrays.Irregular` for a
batch of another shape; the plain path reads the batch in the last two cases."""


def _walked(records: Iterable[RawBlock], names: Sequence[str], config: ChainConfig | None,
            on_block: Any) -> dict[str, Any]:
    """:func:`tables_of_records` with the tables of :data:`WALKED` read by their array walks,
    batch by batch (each batch's other tables read the plain way beside them)."""
    pa = pyarrow()
    schedule = config if config is not None else NO_SCHEDULE
    rest = [name for name in names if name not in WALKED]
    parts: dict[str, list[Any]] = {name: [] for name in names}

    for batch in batches(records):
        walks = Batch(batch)  # each walk made once for all the tables
        if rest:
            for name, table in tables_of_records(batch, rest, config, arrays=False).items():
                parts[name].append(table)
        for name in names:
            if name in WALKED:
                try:
                    table = WALKED[name](walks, schedule)
                except Irregular:
                    table = None
                if table is None:
                    table = tables_of_records(batch, [name], config, arrays=False)[name]
                parts[name].append(table)
        if on_block is not None:
            for _ in batch:
                on_block()
    if not any(parts.values()):
        return tables_of_records([], names, config, arrays=False)
    return {name: tables[0] if len(tables) == 1 else pa.concat_tables(tables)
            for name, tables in parts.items()}


def _counted_body(body_rlp: bytes, withdrawals_wanted: bool
                  ) -> tuple[int, int, int | None, list[Any] | None]:
    """The transaction, uncle and withdrawal counts of a body (None: before withdrawals), read
    from its items' length prefixes, and its withdrawals decoded when they are wanted."""
    lists = item_spans(body_rlp, *payload_span(body_rlp))
    if len(lists) not in (2, 3):
        raise ValueError("a block body is [transactions, uncles] or with withdrawals")
    counts = [count_items(body_rlp, *payload_span(body_rlp, lo)) for lo, _ in lists]
    withdrawals: list[Any] | None = None
    if len(lists) == 3 and withdrawals_wanted:
        lo, hi = lists[2]
        withdrawals = decode_nested(body_rlp[lo:hi])  # type: ignore[assignment]
    return counts[0], counts[1], counts[2] if len(lists) == 3 else None, withdrawals


def _decode_block(raw: RawBlock, cols: dict[str, dict[str, list[Any]]], wanted: set[str],
                  txs_needed: bool, decode_body: bool, whole_receipts: bool,
                  config: ChainConfig) -> None:
    header_rlp, body_rlp = raw.header_rlp, raw.body_rlp
    h = decode_nested(header_rlp)
    assert isinstance(h, list)
    count = len(h)
    number = _int(h[8])  # type: ignore[arg-type]
    timestamp = _int(h[11])  # type: ignore[arg-type]
    block_hash = keccak(header_rlp)
    base_fee = _int(h[15]) if count > 15 else None  # type: ignore[arg-type]
    items: list[Any] = []
    uncles: list[Any] = []
    withdrawals: list[Any] | None
    if decode_body:
        body = decode_nested(body_rlp)
        if not isinstance(body, list) or len(body) not in (2, 3):
            raise ValueError("a block body is [transactions, uncles] or with withdrawals")
        items, uncles = body[0], body[1]  # type: ignore[assignment]
        withdrawals = body[2] if len(body) == 3 else None  # type: ignore[assignment]
        assert isinstance(items, list) and isinstance(uncles, list)
        tx_count, uncle_count = len(items), len(uncles)
        withdrawal_count = None if withdrawals is None else len(withdrawals)
    else:
        tx_count, uncle_count, withdrawal_count, withdrawals = _counted_body(
            body_rlp, "withdrawals" in wanted)
    if "blocks" in wanted:
        start, end = payload_span(body_rlp)
        payload = len(header_rlp) + end - start
        size = payload + (1 if payload < 56 else 1 + (payload.bit_length() + 7) // 8)
        b = cols["blocks"]
        for name, value in (
            ("number", number), ("hash", block_hash), ("parent_hash", h[0]),
            ("timestamp", timestamp), ("miner", h[2]), ("gas_limit", h[9]),
            ("gas_used", h[10]), ("base_fee_per_gas", h[15] if count > 15 else None),
            ("difficulty", h[7]), ("size", size), ("transaction_count", tx_count),
            ("uncle_count", uncle_count), ("withdrawal_count", withdrawal_count),
            ("state_root", h[3]), ("transactions_root", h[4]), ("receipts_root", h[5]),
            ("uncles_hash", h[1]), ("logs_bloom", h[6]), ("extra_data", h[12]),
            ("mix_hash", h[13]), ("nonce", h[14]),
            ("withdrawals_root", h[16] if count > 16 else None),
            ("blob_gas_used", h[17] if count > 17 else None),
            ("excess_blob_gas", h[18] if count > 18 else None),
            ("parent_beacon_block_root", h[19] if count > 19 else None),
            ("requests_hash", h[20] if count > 20 else None),
        ):
            b[name].append(value)
    if "withdrawals" in wanted and withdrawals:  # (index, validator index, address, amount)
        _extend(cols["withdrawals"], _WITHDRAWAL_SPEC,
                [(number, block_hash, timestamp, e[0], e[1], e[2], e[3]) for e in withdrawals])
    if "uncles" in wanted and uncles:
        _uncles(body_rlp, uncles, number, block_hash, cols["uncles"])
    if not txs_needed or not tx_count:
        return
    senders = raw.senders
    if len(senders) != 20 * tx_count:
        raise ValueError(f"{tx_count} transactions stored with {len(senders) // 20} senders")
    start, end = payload_span(body_rlp)
    spans = item_spans(body_rlp, *payload_span(body_rlp, start))
    receipts: list[Any] | None = None
    f: list[Any]
    if "receipts" in wanted or "logs" in wanted:
        if raw.receipts_rlp is None:
            raise ValueError("the store holds no receipts for it")
        decoded = (decode_nested(raw.receipts_rlp) if whole_receipts or raw.slim
                   else _counted_receipts(raw.receipts_rlp))
        assert isinstance(decoded, list)
        if len(decoded) != tx_count:
            raise ValueError(f"{tx_count} transactions but {len(decoded)} receipts")
        receipts = decoded
    tx_cols = cols.get("transactions")
    rc_cols = cols.get("receipts")
    log_cols = cols.get("logs")
    # This block's rows as tuples, put into the columns once at the end (see _extend).
    tx_rows: list[tuple[Any, ...]] | None = None if tx_cols is None else []
    rc_rows: list[tuple[Any, ...]] | None = None if rc_cols is None else []
    log_rows: list[tuple[Any, ...]] | None = None if log_cols is None else []
    slim = raw.slim
    previous = 0
    log_index = 0
    blob_price: int | None = None
    excess = _int(h[18]) if count > 18 else None  # type: ignore[arg-type]
    base = base_fee or 0
    for index, (lo, hi) in enumerate(spans):
        sender = senders[20 * index:20 * index + 20]
        if not decode_body:  # the logs alone: a transaction's hash is all they need of it
            tx_hash = keccak(body_rlp[lo:hi] if body_rlp[lo] >= 0xC0
                             else string_at(body_rlp, lo, hi))
            kind = 0
            recipient = value = nonce = price = blob_hashes = None
        elif type(item := items[index]) is list:
            # legacy: [nonce, gas price, gas, to, value, data, v, r, s]
            kind = 0
            tx_hash = keccak(body_rlp[lo:hi])
            nonce, price_raw, gas, to, value, data, v_raw, r, s = item
            v = _int(v_raw)  # type: ignore[arg-type]
            chain_id = (v - 35) // 2 if v >= 35 else None
            tip = cap = blob_cap = access = blob_hashes = authorizations = None
            price = _int(price_raw)  # type: ignore[arg-type]
        else:
            kind = item[0]  # type: ignore[index]
            tx_hash = keccak(item)  # type: ignore[arg-type]
            f = decode_nested(item[1:])  # type: ignore[assignment]
            assert isinstance(f, list)
            chain_id = _int(f[0])  # type: ignore[arg-type]
            nonce = f[1]
            blob_cap = blob_hashes = authorizations = None
            if kind == 1:
                price_raw, gas, to, value, data, access = f[2], f[3], f[4], f[5], f[6], f[7]
                tip = cap = None
                price = _int(price_raw)  # type: ignore[arg-type]
            else:
                tip, cap, gas, to, value, data, access = f[2], f[3], f[4], f[5], f[6], f[7], f[8]
                if kind == 3:
                    blob_cap, blob_hashes = f[9], f[10]
                elif kind == 4:
                    authorizations = f[9]
                price = min(_int(cap), base + _int(tip))  # type: ignore[arg-type]
            v = _int(f[-3])  # type: ignore[arg-type]
            r, s = f[-2], f[-1]
        if decode_body:
            recipient = to if to else None
        if tx_rows is not None:
            tx_rows.append((
                number, block_hash, timestamp, index, tx_hash, kind, sender, recipient, value,
                nonce, gas, price, cap, tip, blob_cap, data, chain_id, v, r, s,
                None if access is None else len(access),  # type: ignore[arg-type]
                None if blob_hashes is None else list(blob_hashes),  # type: ignore[arg-type]
                None if authorizations is None else len(authorizations),  # type: ignore[arg-type]
            ))
        if receipts is None:
            continue
        entry = receipts[index]
        if slim:
            assert isinstance(entry, list)
            _, first, cumulative_raw, raw_logs = entry
            bloom = None
        elif not whole_receipts:  # counted: (status or root, cumulative gas, bloom, logs)
            first, cumulative_raw, bloom, log_count = entry
            raw_logs = []
        else:
            fields = entry if type(entry) is list else decode_nested(entry[1:])  # type: ignore[index]
            assert isinstance(fields, list)
            first, cumulative_raw, bloom, raw_logs = fields
        cumulative = _int(cumulative_raw)  # type: ignore[arg-type]
        assert isinstance(raw_logs, list)
        if slim or whole_receipts:
            log_count = len(raw_logs)
        if rc_rows is not None:
            if len(first) == 32:
                status, root = None, first
            else:
                status, root = (1 if first == b"\x01" else 0), None
            contract = (keccak(encode_nested([sender, nonce]))[12:]
                        if recipient is None else None)
            blob_gas = None
            if blob_hashes is not None:
                blob_gas = BLOB_GAS_PER_BLOB * len(blob_hashes)  # type: ignore[arg-type]
                if blob_price is None and excess is not None:
                    blob_price = config.blob_base_fee(number, timestamp, excess)
            if bloom is None:
                bloom = logs_bloom(raw_logs)
            rc_rows.append((
                number, block_hash, timestamp, index, tx_hash, kind, sender, recipient, value,
                status, root, cumulative - previous, cumulative, price, contract,
                log_count, blob_gas, blob_price if blob_gas is not None else None, bloom,
            ))
        previous = cumulative
        if log_rows is not None:
            for log in raw_logs:
                address, topics, data_ = log  # type: ignore[misc]
                n = len(topics)
                log_rows.append((
                    number, block_hash, timestamp, index, tx_hash, log_index, address,
                    topics[0] if n > 0 else None, topics[1] if n > 1 else None,
                    topics[2] if n > 2 else None, topics[3] if n > 3 else None, data_,
                ))
                log_index += 1
        else:
            log_index += log_count
    _extend(tx_cols, _TRANSACTION_SPEC, tx_rows)
    _extend(rc_cols, _RECEIPT_SPEC, rc_rows)
    _extend(log_cols, _LOG_SPEC, log_rows)


def _counted_receipts(raw: bytes) -> list[tuple[bytes, bytes, bytes, int]]:
    """Each receipt of a block's consensus receipts RLP as its status or root, cumulative gas,
    bloom and its log count, read from length prefixes without decoding a log."""
    counted = []
    for entry in shallow_items(raw, *payload_span(raw)):
        if type(entry) is tuple:  # a legacy receipt: a list
            record, (lo, hi) = raw, entry
        else:  # a typed receipt: its type byte, then a list
            record = entry  # type: ignore[assignment]
            lo, hi = payload_span(record, 1)
        fields = shallow_items(record, lo, hi)
        if len(fields) != 4 or type(fields[3]) is not tuple or tuple in map(type, fields[:3]):
            raise ValueError("a receipt is [status or root, cumulative gas, bloom, logs]")
        counted.append((fields[0], fields[1], fields[2], count_items(record, *fields[3])))
    return counted  # type: ignore[return-value]


def _extend(cols: dict[str, list[Any]] | None, spec: dict[str, Any],
            rows: list[tuple[Any, ...]] | None) -> None:
    """A block's rows (tuples in the spec's order) added to the column lists."""
    if cols is None or not rows:
        return
    for name, values in zip(spec, zip(*rows, strict=True), strict=True):
        cols[name].extend(values)


def _uncles(body_rlp: bytes, uncles: list[Any], number: int, block_hash: bytes,
            u: dict[str, list[Any]]) -> None:
    parts = item_spans(body_rlp, *payload_span(body_rlp))
    spans = item_spans(body_rlp, *payload_span(body_rlp, parts[1][0]))
    for position, (header, (lo, hi)) in enumerate(zip(uncles, spans, strict=True)):
        for name, value in (
            ("block_number", number), ("block_hash", block_hash), ("uncle_index", position),
            ("number", header[8]), ("hash", keccak(body_rlp[lo:hi])), ("parent_hash", header[0]),
            ("miner", header[2]), ("timestamp", header[11]), ("difficulty", header[7]),
            ("gas_limit", header[9]), ("gas_used", header[10]),
        ):
            u[name].append(value)
