"""A forked dev chain's history before the fork, as JSON-RPC shows it: blocks, transactions,
receipts, uncles and logs at or below the fork block are the forked node's answers
(:mod:`ethread.devchain.fork.history`); ``eth_getLogs`` across the fork block joins the node's
logs and the chain's. Each read (a row's :attr:`~ethread.rpc.row.Method.history`) answers
:data:`NOT_HISTORY` when the question is the chain's own (a block above the fork, a hash the
chain made, a parameter that does not parse).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backend import Backend
from ..codec.hex import parse_hash_param
from ..codec.params import parse_block_ref, parse_bool, parse_index, parse_log_filter, parse_number_or_tag
from ..errors import InvalidParams, LimitExceeded, UnknownBlock
from ..models import BlockHashRef, Hash32

if TYPE_CHECKING:
    from ..devchain.fork.history import ForkHistory


@dataclass(frozen=True, slots=True)
class Local:
    """The chain's own side of a read: its backend, its own answer, eth_getLogs' bounds."""

    backend: Backend
    answer: Callable[[list[Any]], Any]
    max_logs: int
    max_parameters: int
    """Addresses and topics one eth_getLogs filter may name."""


class _NotHistory:
    """The answer of a read that is the chain's own."""


NOT_HISTORY = _NotHistory()
HistoryRead = Callable[["ForkHistory", list[Any], Local], Any]


def _number(history: ForkHistory, backend: Backend, value: Any) -> int | None:
    """The height a number or tag names when it is at or below the fork block, else None."""
    ref = parse_number_or_tag(value)
    if ref == "pending":
        return None
    if isinstance(ref, int):
        number: int | None = ref
    elif ref == "earliest":
        number = 0
    else:
        number = backend.pointer(ref)  # type: ignore[arg-type]
    return number if number is not None and number <= history.fork_number else None


def _made_after_fork(history: ForkHistory, backend: Backend, block_hash: Hash32) -> bool:
    """Whether ``block_hash`` is a block the chain made after the fork."""
    header = backend.header_by_hash(block_hash)
    return header is not None and header.number > history.fork_number


def _remote_hash(history: ForkHistory, backend: Backend, value: Any) -> Hash32 | None:
    """The hash when it is not a block the chain made after the fork (the node may hold it)."""
    block_hash = parse_hash_param(value)
    return None if _made_after_fork(history, backend, block_hash) else block_hash


def _block_of(history: ForkHistory, local: Local, value: Any, by_hash: bool,
              full: bool) -> Any:
    """The node's block a number, tag or hash names (None: none); NOT_HISTORY: the chain's own."""
    if by_hash:
        block_hash = _remote_hash(history, local.backend, value)
        return NOT_HISTORY if block_hash is None else history.block_by_hash(block_hash, full)
    number = _number(history, local.backend, value)
    return NOT_HISTORY if number is None else history.block(number, full)


def _block(by_hash: bool) -> HistoryRead:
    def read(history: ForkHistory, params: list[Any], local: Local) -> Any:
        return _block_of(history, local, params[0], by_hash, parse_bool(params[1]))

    return read


block_number, block_hash = _block(False), _block(True)


def _height(history: ForkHistory, local: Local, value: Any, by_hash: bool) -> Any:
    """The height of the node's block a number, tag or hash names, as :func:`_block_of`."""
    if by_hash:
        block_hash = _remote_hash(history, local.backend, value)
        return NOT_HISTORY if block_hash is None else history.number_of(block_hash)
    number = _number(history, local.backend, value)
    return NOT_HISTORY if number is None else number


def count(key: str, by_hash: bool) -> HistoryRead:
    def read(history: ForkHistory, params: list[Any], local: Local) -> Any:
        block = _block_of(history, local, params[0], by_hash, False)
        if block is NOT_HISTORY or block is None:
            return block
        return hex(len(block.get(key) or []))

    return read


def transaction_at(by_hash: bool, raw: bool) -> HistoryRead:
    def read(history: ForkHistory, params: list[Any], local: Local) -> Any:
        index = parse_index(params[1])
        block = _block_of(history, local, params[0], by_hash, True)
        if block is NOT_HISTORY:
            return block
        transactions = block.get("transactions") or [] if block is not None else []
        tx = transactions[index] if index < len(transactions) else None
        if not raw:
            return tx
        return "0x" if tx is None else history.raw_transaction(parse_hash_param(tx["hash"]))

    return read


def uncle_at(by_hash: bool) -> HistoryRead:
    def read(history: ForkHistory, params: list[Any], local: Local) -> Any:
        index = parse_index(params[1])
        number = _height(history, local, params[0], by_hash)
        return number if number is NOT_HISTORY or number is None else history.uncle(number, index)

    return read


def block_receipts(history: ForkHistory, params: list[Any], local: Local) -> Any:
    ref = parse_block_ref(params[0])
    if isinstance(ref, BlockHashRef):
        if _made_after_fork(history, local.backend, ref.hash):
            return NOT_HISTORY
        number = history.number_of(ref.hash)
        return None if number is None else history.block_receipts(number)
    value = params[0]["blockNumber"] if isinstance(params[0], dict) else params[0]  # (EIP-1898)
    found = _number(history, local.backend, value)
    return NOT_HISTORY if found is None else history.block_receipts(found)


def _by_transaction(ask: Callable[[ForkHistory, Hash32], Any]) -> HistoryRead:
    def read(history: ForkHistory, params: list[Any], local: Local) -> Any:
        tx_hash = parse_hash_param(params[0])
        if local.backend.transaction_location(tx_hash) is not None:
            return NOT_HISTORY
        return ask(history, tx_hash)

    return read


transaction = _by_transaction(lambda h, tx_hash: h.transaction(tx_hash))
receipt = _by_transaction(lambda h, tx_hash: h.receipt(tx_hash))
raw_transaction = _by_transaction(lambda h, tx_hash: h.raw_transaction(tx_hash))


def logs(history: ForkHistory, params: list[Any], local: Local) -> Any:
    raw = params[0]
    log_filter = parse_log_filter(raw)
    if log_filter.parameter_count > local.max_parameters:
        return NOT_HISTORY  # (refused by the chain's own eth_getLogs, in its words)
    selection = {key: raw[key] for key in ("address", "topics") if raw.get(key) is not None}
    backend = local.backend
    fork = history.fork_number
    if log_filter.block_hash is not None:
        if _made_after_fork(history, backend, log_filter.block_hash):
            return NOT_HISTORY
        if history.number_of(log_filter.block_hash) is None:
            raise UnknownBlock("unknown block")
        return _bounded(history.block_logs(log_filter.block_hash, selection), local)
    head = backend.pointer("latest")
    begin, end = _log_bound(backend, log_filter.from_block), _log_bound(backend, log_filter.to_block)
    if head is None or begin is None or end is None or begin > fork or begin > end or end > head:
        return NOT_HISTORY
    found = list(history.logs(begin, min(end, fork), selection))
    _bounded(found, local)
    if end > fork:
        found.extend(local.answer([{**raw, "fromBlock": hex(fork + 1), "toBlock": hex(end)}]))
    return _bounded(found, local)


def _log_bound(backend: Backend, ref: int | str) -> int | None:
    if isinstance(ref, int):
        return ref
    if ref == "earliest":
        return 0
    return backend.pointer("latest" if ref == "pending" else ref)  # type: ignore[arg-type]


def _bounded(logs: list[Any], local: Local) -> list[Any]:
    if len(logs) > local.max_logs:
        raise LimitExceeded(f"query returned more than {local.max_logs} results")
    return logs


def read_history(read: HistoryRead, history: ForkHistory, params: list[Any],
                 local: Local) -> Any:
    """``read``'s answer; NOT_HISTORY for parameters that do not parse (the chain refuses them)."""
    try:
        return read(history, params, local)
    except InvalidParams:
        return NOT_HISTORY


__all__ = [
    "NOT_HISTORY",
    "HistoryRead",
    "Local",
    "read_history",
]
