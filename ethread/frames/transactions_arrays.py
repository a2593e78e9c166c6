"""The transactions table read with numpy, many blocks at a time (:mod:`.rlp_arrays`).

The five shapes (legacy, types 1 to 4) are walked shape by shape and each column gathered
from the joined bodies by position; Python work is left per block (its header) and per
transaction (its hash). A batch the walk does not take is read by the plain path of
:mod:`.bulk`; ``tests/frames/test_transactions_arrays.py`` holds the two to the same table.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..keccak import keccak_spans
from .block_arrays import Batch, Blocks, Transactions
from .columns import (
    binary_ranges,
    decimal_rows,
    fits_decimal,
    hex_rows,
    uint64_rows,
)
from .extra import numpy, pyarrow
from .rlp_arrays import (
    Irregular,
    check_nested,
    children,
    fields,
    gather,
    heads,
    lists,
    right_aligned,
    strings,
)

LAYOUTS: dict[int, tuple[str, ...]] = {
    0: ("nonce", "gas_price", "gas", "to", "value", "input", "v", "r", "s"),
    1: ("chain_id", "nonce", "gas_price", "gas", "to", "value", "input", "access_list", "v",
        "r", "s"),
    2: ("chain_id", "nonce", "tip", "cap", "gas", "to", "value", "input", "access_list", "v",
        "r", "s"),
    3: ("chain_id", "nonce", "tip", "cap", "gas", "to", "value", "input", "access_list",
        "blob_cap", "blob_hashes", "v", "r", "s"),
    4: ("chain_id", "nonce", "tip", "cap", "gas", "to", "value", "input", "access_list",
        "authorizations", "v", "r", "s"),
}
"""The fields of each transaction type, in the order its list holds them."""
LISTS = {"access_list", "blob_hashes", "authorizations"}
"""The fields that are lists; every other one is a string."""


class Field(NamedTuple):
    """One field of every transaction of a batch: where its payload is, which transactions
    have it, and for a list field how many items each one's holds."""

    start: Any
    end: Any
    present: Any
    items: Any


class Walked(NamedTuple):
    """The transactions of a batch of blocks, walked."""

    blocks: Blocks
    txs: Transactions
    kind: Any
    """Each transaction's type (0: legacy)."""
    hashes: Any
    """A (transactions, 32) uint8 array of their hashes."""
    found: dict[str, Field]
    """Each field of :data:`LAYOUTS`, for every transaction that has it."""
    rows: int
    """How many transactions."""


def walk(batch: Batch) -> Walked | None:
    """The transactions of ``batch``, every field found; None when it holds none."""
    return batch.once("walked", lambda: _walk(batch))


def _walk(batch: Batch) -> Walked | None:
    np = numpy()
    blocks = batch.blocks
    txs = batch.transactions
    count = len(txs.items.position)
    if count == 0:
        return None
    data = txs.bodies.data
    position = txs.items.position
    item = heads(data, position, txs.lists.end[txs.items.parent])
    legacy = item.is_list
    start = item.start.copy()
    kind = np.zeros(count, np.int64)
    typed = ~legacy
    if typed.any():  # a typed transaction is a string: its type byte, then its list
        at = item.start[typed]
        if (at + 1 >= item.end[typed]).any():
            raise Irregular("a typed transaction without its list")
        kind[typed] = data[at]
        inner = lists(data, at + 1, item.end[typed])
        if not np.array_equal(inner.end, item.end[typed]):
            raise Irregular("a typed transaction that is not one list")
        start[typed] = inner.start
    if not np.isin(kind, list(LAYOUTS)).all():
        raise Irregular("a transaction type the walk does not know")
    hashes = keccak_spans(txs.bodies.blob, np.where(legacy, position, item.start).tolist(),
                          item.end.tolist())
    return Walked(blocks, txs, kind, np.frombuffer(hashes, np.uint8).reshape(count, 32),
                  _fields(data, kind, start, item.end), count)


def number(walked: Walked, name: str, width: int) -> tuple[Any, Any]:
    """Field ``name`` of every transaction as a (count, ``width``) array of big-endian numbers,
    and which transactions have it."""
    field = walked.found[name]
    return right_aligned(walked.txs.bodies.data, field.start, field.end, width), field.present


def wide(walked: Walked, name: str) -> Any:
    """Field ``name`` as a decimal128 column (null where a type has no such field)."""
    raw, present = number(walked, name, 16)
    if not fits_decimal(raw):
        raise Irregular("a number past decimal128")
    return decimal_rows(raw, present)


def recipients(walked: Walked) -> tuple[Any, Any]:
    """Where each transaction's recipient is, and which have one (not a contract creation)."""
    recipient = walked.found["to"]
    length = recipient.end - recipient.start
    if ((length != 0) & (length != 20)).any():
        raise Irregular("a recipient that is not 20 bytes")
    sent_to = length == 20
    return numpy().where(sent_to, recipient.start, 0), sent_to


def transactions_table(batch: Batch) -> Any:
    """The transactions table of ``batch``; None when it holds no transaction."""
    np, pa = numpy(), pyarrow()
    walked = walk(batch)
    if walked is None:
        return None
    txs, kind, found, count = walked.txs, walked.kind, walked.found, walked.rows
    legacy = kind == 0
    data = txs.bodies.data

    def uint(name: str) -> Any:
        return uint64_rows(*number(walked, name, 8))

    def word(name: str) -> Any:
        return hex_rows(*number(walked, name, 32))

    def counted(name: str) -> Any:
        field = found[name]
        return pa.array(field.items, pa.uint64(), mask=~field.present)

    v_raw, _ = number(walked, "v", 8)
    v = v_raw.copy().view(">u8").reshape(-1).astype(np.uint64)
    chain_raw, chain_present = number(walked, "chain_id", 8)
    chain_id = chain_raw.copy().view(">u8").reshape(-1).astype(np.uint64)
    replay_safe = legacy & (v >= 35)  # a legacy signature's v says its chain (EIP-155)
    chain_id[legacy] = np.where(replay_safe[legacy], (v[legacy] - 35) // 2, 0)
    chain_present = chain_present | replay_safe

    columns: dict[str, Any] = {
        **key_columns(walked),
        "nonce": uint("nonce"),
        "gas": uint("gas"),
        "gas_price": effective_price(walked),
        "max_fee_per_gas": wide(walked, "cap"),
        "max_priority_fee_per_gas": wide(walked, "tip"),
        "max_fee_per_blob_gas": wide(walked, "blob_cap"),
        "input": binary_ranges(data, found["input"].start, found["input"].end),
        "chain_id": pa.array(chain_id, pa.uint64(), mask=~chain_present),
        "v": pa.array(v, pa.uint64()),
        "r": word("r"),
        "s": word("s"),
        "access_list_size": counted("access_list"),
        "blob_versioned_hashes": _blob_hashes(data, found["blob_hashes"], count),
        "authorization_count": counted("authorizations"),
    }
    return pa.table(columns)


def _fields(data: Any, kind: Any, start: Any, end: Any) -> dict[str, Field]:
    """Every field of every transaction, type by type (absent where a type has none)."""
    np = numpy()
    count = len(kind)
    names = {name for layout in LAYOUTS.values() for name in layout}
    found = {name: Field(np.zeros(count, np.int64), np.zeros(count, np.int64),
                         np.zeros(count, bool), np.zeros(count, np.uint64)) for name in names}
    for code, layout in LAYOUTS.items():
        chosen = np.flatnonzero(kind == code)
        if not len(chosen):
            continue
        ends = end[chosen]
        for name, at in zip(layout, fields(data, start[chosen], ends, len(layout)),
                            strict=True):
            payload = (lists if name in LISTS else strings)(data, at, ends)
            field = found[name]
            field.start[chosen] = payload.start
            field.end[chosen] = payload.end
            field.present[chosen] = True
            if name in LISTS:  # counted; what is inside is not read but must decode
                field.items[chosen] = check_nested(data, payload.start, payload.end)
    return found


def key_columns(walked: Walked) -> dict[str, Any]:
    """The columns a transaction's row and its receipt's row both begin with: block number,
    hash and time, index, hash, type, from, to (null for a creation) and value."""
    np, pa = numpy(), pyarrow()
    blocks, txs = walked.blocks, walked.txs
    block = txs.items.parent
    to_at, sent_to = recipients(walked)
    return {
        "block_number": pa.array(blocks.numbers[block], pa.uint64()),
        "block_hash": hex_rows(blocks.hashes[block]),
        "timestamp": pa.array(blocks.times[block], pa.timestamp("s", tz="UTC")),
        "transaction_index": pa.array(txs.items.ordinal.astype(np.uint64), pa.uint64()),
        "hash": hex_rows(walked.hashes),
        "type": pa.array(walked.kind.astype(np.uint64), pa.uint64()),
        "from": hex_rows(txs.senders),
        "to": hex_rows(gather(txs.bodies.data, to_at, 20), sent_to),
        "value": wide(walked, "value"),
    }


def effective_price(walked: Walked) -> Any:
    """What each transaction paid a unit of gas: its gas price (legacy and type 1), else the
    lesser of its fee cap and the block's base fee plus its tip (as a decimal128 column)."""
    np = numpy()
    found, data, count = walked.found, walked.txs.bodies.data, walked.rows
    price = right_aligned(data, found["gas_price"].start, found["gas_price"].end, 16)
    dynamic = found["cap"].present
    if dynamic.any():
        cap = right_aligned(data, found["cap"].start, found["cap"].end, 8)
        tip = right_aligned(data, found["tip"].start, found["tip"].end, 8)
        cap_value = cap.copy().view(">u8").reshape(-1).astype(np.uint64)
        tip_value = tip.copy().view(">u8").reshape(-1).astype(np.uint64)
        if (tip_value[dynamic] >= 1 << 63).any():  # base fee (< 2^56) + tip must not wrap
            raise Irregular("a tip past 63 bits")
        base_fee = walked.blocks.base_fees[walked.txs.items.parent]
        paid = np.minimum(cap_value, base_fee + tip_value)
        low = paid.astype(">u8").view(np.uint8).reshape(count, 8)
        price[dynamic, :8] = 0
        price[dynamic, 8:] = low[dynamic]
    if not fits_decimal(price):
        raise Irregular("a gas price past decimal128")
    return decimal_rows(price)


def _blob_hashes(data: Any, field: Field, count: int) -> Any:
    """Each type-3 transaction's blob versioned hashes as a list of hex strings (else null)."""
    np, pa = numpy(), pyarrow()
    where = np.flatnonzero(field.present)
    inner = children(data, field.start[where], field.end[where])
    hashes = strings(data, inner.position, field.end[where][inner.parent], 32)
    sizes = np.zeros(count, np.int64)
    sizes[where] = inner.counts
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    values = hex_rows(gather(data, hashes.start, 32))
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32), pa.int32()), values,
                                    mask=pa.array(~field.present))
