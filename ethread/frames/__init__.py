"""Chain data as Arrow tables, for notebooks and data tools.

    from ethread import frames
    blocks = frames.blocks(backend, 0, 10_000)          # blocks 0..9,999: stop is excluded
    txs = frames.transactions(backend, 0, 10_000).to_pandas()
    transfers = frames.logs(backend, 0, 10_000, address=token, abi=erc20_abi)

Each function reads ``range(start, stop)`` of any backend (``start`` may be ``"earliest"``,
``stop`` ``"latest"``) and answers a ``pyarrow.Table`` with one row per item (block,
transaction, receipt, log, withdrawal, uncle). Column types are in :mod:`ethread.frames.columns`:
``uint64`` counts, ``decimal128(38, 0)`` wei amounts (exact decimal strings past 10^38 - 1),
``0x`` hex hashes and addresses, ``binary`` data, ``timestamp[s, UTC]`` timestamps.

A range holding a block the backend lacks raises :class:`~ethread.errors.MissingBlocks` before
any is read. ``workers=N`` shares the range among N processes (:mod:`ethread.frames.parallel`);
the table is the same. Backends that hold their records (Era1, ``ere``, LMDB, LevelDB) are
decoded in bulk, without a model per row (:mod:`ethread.frames.bulk`). Ranges of 2,048 blocks
or more show a tqdm progress bar (in a notebook or a terminal); ``progress=False`` turns it off.
``traces`` and ``native_transfers`` (:mod:`ethread.frames.trace_tables`) replay blocks.

Needs the ``frames`` extra (pyarrow); without it these functions raise
:class:`~ethread.frames.extra.MissingExtra`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..backend import LogQuery, LogSource
from ..iteration import ReceiptRangeSource, check_range
from ..models import Address, Hash32, TopicFilter
from . import columns as c
from .abi import decoded_columns, parse_abi
from .bulk import RawBlockSource
from .extra import MissingExtra, pyarrow
from .tables import LOG_COLUMNS, TABLES, Start, Stop, bounds, collect, log_row, progress_bar
from .trace_tables import native_transfers, traces

__all__ = [
    "TABLES",
    "MissingExtra",
    "blocks",
    "logs",
    "native_transfers",
    "receipts",
    "tables",
    "traces",
    "transactions",
    "uncles",
    "withdrawals",
]

LOG_CHUNK = 8192
"""Blocks per log query while :func:`logs` walks a range (the progress bar's step)."""


def tables(backend: ReceiptRangeSource, start: Start, stop: Stop,
           names: Iterable[str] = TABLES, *, progress: bool = True,
           workers: int = 1) -> dict[str, Any]:
    """Several tables of ``range(start, stop)`` from a single pass over its blocks: a dict
    from each name in ``names`` (any of ``blocks``, ``transactions``, ``receipts``, ``logs``,
    ``withdrawals``, ``uncles``) to its ``pyarrow.Table``."""
    return collect(backend, start, stop, names, progress=progress, workers=workers)


def blocks(backend: ReceiptRangeSource, start: Start, stop: Stop, *, progress: bool = True,
           workers: int = 1) -> Any:
    """One row per block of ``range(start, stop)``: number, hash, parent_hash, timestamp,
    miner, gas_limit, gas_used, base_fee_per_gas, difficulty, size, transaction_count,
    uncle_count, withdrawal_count, the roots, logs_bloom, extra_data and the fork-dependent
    header fields (null before their fork)."""
    return collect(backend, start, stop, ["blocks"], progress=progress,
                   workers=workers)["blocks"]


def transactions(backend: ReceiptRangeSource, start: Start, stop: Stop, *,
                 progress: bool = True, workers: int = 1) -> Any:
    """One row per transaction of ``range(start, stop)``, in chain order: block_number,
    block_hash, timestamp, transaction_index, hash, type, from, to (null for a contract
    creation), value, nonce, gas, gas_price (the effective price paid), the fee caps (null
    where the type has none), input, chain_id, v (``y_parity`` for typed transactions), r, s,
    access_list_size, blob_versioned_hashes and authorization_count."""
    return collect(backend, start, stop, ["transactions"], progress=progress,
                   workers=workers)["transactions"]


def receipts(backend: ReceiptRangeSource, start: Start, stop: Stop, *, progress: bool = True,
             workers: int = 1) -> Any:
    """One row per receipt of ``range(start, stop)``, with its transaction's hash, from, to
    and value beside status (null before Byzantium, where ``root`` is set instead), gas_used,
    cumulative_gas_used, effective_gas_price, contract_address, log_count, the blob gas
    fields and logs_bloom."""
    return collect(backend, start, stop, ["receipts"], progress=progress,
                   workers=workers)["receipts"]


def withdrawals(backend: ReceiptRangeSource, start: Start, stop: Stop, *,
                progress: bool = True, workers: int = 1) -> Any:
    """One row per validator withdrawal of ``range(start, stop)``: block_number, block_hash,
    timestamp, index, validator_index, address and amount_gwei."""
    return collect(backend, start, stop, ["withdrawals"], progress=progress,
                   workers=workers)["withdrawals"]


def uncles(backend: ReceiptRangeSource, start: Start, stop: Stop, *, progress: bool = True,
           workers: int = 1) -> Any:
    """One row per uncle header included by a block of ``range(start, stop)``: the
    including block's number and hash, uncle_index, and the uncle's number, hash,
    parent_hash, miner, timestamp, difficulty, gas_limit and gas_used."""
    return collect(backend, start, stop, ["uncles"], progress=progress,
                   workers=workers)["uncles"]


class _LogRangeSource(ReceiptRangeSource, LogSource):
    """What :func:`logs` reads."""


def logs(
    backend: _LogRangeSource,
    start: Start,
    stop: Stop,
    *,
    address: Address | str | Sequence[Address | str] | None = None,
    topics: Sequence[TopicFilter | Hash32 | str | None] = (),
    abi: Any = None,
    progress: bool = True,
    workers: int = 1,
) -> Any:
    """One row per log of ``range(start, stop)`` matching ``address`` and ``topics`` (as in
    eth_getLogs: a list of positions, each None, a topic, or a list of alternatives), read
    through the backend's log index so that a selective query skips blocks without a match.

    Columns: block_number, block_hash, timestamp, transaction_index, transaction_hash,
    log_index (within the block), address, topic0..topic3 (null past the log's topics), data.

    ``abi`` (a contract ABI as a list or JSON text, or one event entry) decodes the logs with
    eth-abi: unless ``topics`` is given, only logs whose topic0 is one of the ABI's events are
    kept, and the table gains ``event``, ``decoded`` and one column per event argument (see
    :mod:`ethread.frames.abi`).
    """
    pyarrow()  # say what to install before any work
    start, stop = bounds(backend, start, stop)
    events = parse_abi(abi) if abi is not None else None
    addresses = _addresses(address)
    wanted: list[TopicFilter] = [_topic_filter(t) for t in topics]
    if events is not None and not topics:
        wanted = [tuple(e.topic0 for e in events)]
    if len(wanted) > 4:
        raise ValueError("a log has at most 4 topics")
    if not addresses and not any(wanted) and events is None and isinstance(backend,
                                                                         RawBlockSource):
        # Every log: the blocks' receipts read in bulk beat the log index's lookups.
        return collect(backend, start, stop, ["logs"], progress=progress,
                       workers=workers)["logs"]
    check_range(backend, start, stop)
    cols: dict[str, tuple[c.Column, list[Any]]] = {name: (kind, []) for name, kind in LOG_COLUMNS}
    raw: list[tuple[bytes | None, Sequence[bytes], bytes]] = []
    bar = progress_bar(stop - start, progress)
    try:
        for lo in range(start, stop, LOG_CHUNK):
            hi = min(stop, lo + LOG_CHUNK)
            query = LogQuery(from_number=lo, to_number=hi - 1, addresses=addresses,
                             topics=tuple(wanted))
            for log in backend.logs(query):
                for (_, values), value in zip(cols.values(), log_row(log), strict=True):
                    values.append(value)
                if events is not None:
                    raw.append((log.topics[0] if log.topics else None, log.topics, log.data))
            if bar is not None:
                bar.update(hi - lo)
    finally:
        if bar is not None:
            bar.close()
    if events is not None:
        cols.update(decoded_columns(events, set(cols), raw))
    return c.with_pandas_types(c.table(cols))


def _bytes(value: bytes | str, size: int, what: str) -> bytes:
    if isinstance(value, str):
        text = value[2:] if value.startswith(("0x", "0X")) else value
        try:
            value = bytes.fromhex(text)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not hex") from None
    if len(value) != size:
        raise ValueError(f"{what} must be {size} bytes, got {len(value)}")
    return value


def _each(value: bytes | str | Sequence[bytes | str], size: int, what: str) -> tuple[bytes, ...]:
    """One value or several, each as ``size`` bytes."""
    if isinstance(value, (bytes, str)):
        return (_bytes(value, size, what),)
    return tuple(_bytes(one, size, what) for one in value)


def _addresses(address: Address | str | Sequence[Address | str] | None) -> tuple[Address, ...]:
    return () if address is None else _each(address, 20, "address")


def _topic_filter(topic: TopicFilter | Hash32 | str | None) -> TopicFilter:
    return None if topic is None else _each(topic, 32, "topic")
