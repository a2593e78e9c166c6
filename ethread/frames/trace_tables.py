"""Traces as Arrow tables: one row per call frame, and one per transfer of ether, for the
blocks of ``range(start, stop)``, read from the same parity-style traces ``trace_block``
answers (:mod:`ethread.methods.tracing.parity`). Each block is replayed on its parent's state,
so the backend must hold state (a memory backend, a LevelDB or LMDB store; not Era1).

    from ethread import frames
    calls = frames.traces(backend, 1, 1_000)
    moved = frames.native_transfers(backend, 1, 1_000).to_pandas()
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..iteration import check_range, iter_blocks
from ..methods.tracing import FlatCall
from ..methods.tracing.parity import block_traces
from ..methods.tracing.replay import TraceableChain
from . import columns as c
from .extra import pyarrow
from .tables import progress_bar, tracked

__all__ = ["TRACE_COLUMNS", "TRANSFER_COLUMNS", "native_transfers", "traces"]


def _positions(values: Sequence[tuple[int, ...]]) -> Any:
    """An Arrow list-of-``uint64`` column (trace addresses)."""
    pa = pyarrow()
    return pa.array([list(v) for v in values], pa.list_(pa.uint64()))


TRACE_COLUMNS: dict[str, c.Column] = {
    "block_number": c.uint64, "block_hash": c.hex_string, "transaction_index": c.uint64,
    "transaction_hash": c.hex_string, "trace_address": _positions,
    "depth": c.uint64, "type": c.string, "call_type": c.string, "from": c.hex_string,
    "to": c.hex_string, "value": c.wide, "gas": c.uint64, "gas_used": c.uint64,
    "input": c.binary, "output": c.binary, "error": c.string, "subtraces": c.uint64,
}
"""The columns of :func:`traces` (``trace_address`` is a list of ``uint64``)."""

TRANSFER_COLUMNS: dict[str, c.Column] = {
    "block_number": c.uint64, "block_hash": c.hex_string, "transaction_index": c.uint64,
    "transaction_hash": c.hex_string, "trace_address": _positions,
    "kind": c.string, "from": c.hex_string, "to": c.hex_string, "value": c.wide,
}
"""The columns of :func:`native_transfers`."""


def _addresses(call: FlatCall) -> tuple[bytes | None, bytes | None]:
    """Who a frame moves ether from and to: a create's recipient is the contract it made (null
    when it failed), a self-destruct's the refund address."""
    if call.type == "suicide":
        return call.address, call.refund_address
    if call.type == "create":
        return call.sender, call.address
    return call.sender, call.to


def _calls(backend: TraceableChain, start: int, stop: int, progress: bool) -> Iterator[FlatCall]:
    check_range(backend, start, stop)
    blocks = iter_blocks(backend, max(start, 1), stop)
    for block in tracked(blocks, progress_bar(stop - start, progress)):
        yield from (entry for entry in block_traces(backend, block) if isinstance(entry, FlatCall))


def _table(spec: dict[str, c.Column], rows: list[tuple[Any, ...]]) -> Any:
    pa = pyarrow()
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [() for _ in spec]
    return pa.table({name: build(list(values))
                     for (name, build), values in zip(spec.items(), columns, strict=True)})


def traces(backend: TraceableChain, start: int, stop: int, *, progress: bool = True) -> Any:
    """One row per call frame of the transactions of ``range(start, stop)`` (the genesis has
    none), in the order trace_block lists them: block_number, block_hash, transaction_index,
    transaction_hash, trace_address (the frame's place in its transaction's tree), depth (0 for
    the transaction's own frame), type (``call``, ``create`` or ``suicide``), call_type
    (``call``, ``delegatecall``, ``staticcall``, ``callcode``, ``create``, ``create2``), from,
    to (for a create, the contract made; for a self-destruct, the refund address), value,
    gas, gas_used (null for a frame that failed other than by reverting), input (a create's
    init code), output (a create's code), error (parity's words: ``Reverted``, ``Out of
    gas``...) and subtraces. Calls to precompiles are left out, as trace_block leaves them."""
    pyarrow()
    rows = []
    for call in _calls(backend, start, stop, progress):
        sender, receiver = _addresses(call)
        rows.append((call.block_number, call.block_hash, call.transaction_position,
                     call.transaction_hash, call.trace_address, len(call.trace_address), call.type,
                     call.call_type or call.creation_method, sender, receiver,
                     call.balance if call.type == "suicide" else call.value, call.gas,
                     call.gas_used, call.input, call.output, call.error, call.subtraces))
    return _table(TRACE_COLUMNS, rows)


def native_transfers(backend: TraceableChain, start: int, stop: int, *,
                     progress: bool = True) -> Any:
    """One row per transfer of ether that took effect in ``range(start, stop)``: a call,
    create or self-destruct moving a non-zero value, with no failed frame above it. Columns:
    block_number, block_hash, transaction_index, transaction_hash, trace_address, kind
    (``call``, ``create`` or ``suicide``), from, to, value. Block rewards are not listed."""
    pyarrow()
    rows = []
    failed: list[tuple[bytes | None, tuple[int, ...]]] = []
    for call in _calls(backend, start, stop, progress):
        if call.trace_address == ():
            failed = []
        if call.error is not None:
            failed.append((call.transaction_hash, call.trace_address))
        if any(h == call.transaction_hash and call.trace_address[:len(a)] == a for h, a in failed):
            continue
        value = call.balance if call.type == "suicide" else call.value
        if not value:
            continue
        sender, receiver = _addresses(call)
        rows.append((call.block_number, call.block_hash, call.transaction_position,
                     call.transaction_hash, call.trace_address, call.type, sender, receiver, value))
    return _table(TRANSFER_COLUMNS, rows)
