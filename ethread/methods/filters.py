"""Polling filters (eth_newFilter, eth_newBlockFilter, eth_getFilterChanges,
eth_getFilterLogs, eth_uninstallFilter) as geth's filter API answers them.

A filter reports what the chain gained after it was installed: a block filter the hashes of
new blocks, a log filter the new matching logs (bounded by its ``fromBlock``/``toBlock``
numbers, not tags). A filter not polled for ``timeout`` seconds (geth: five minutes) is gone.
Each :class:`~ethread.rpc.dispatcher.Dispatcher` owns a registry of at most ``max_filters``;
one poll answers at most the log result limit (a filter far behind catches up over polls).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from ..backend import Deadline, HeaderSource, LogQuery, ResultLimitReached
from ..errors import InvalidParams, LimitExceeded, ServerError
from ..models import Hash32, Log, LogFilter
from .logs import DEFAULT_LIMITS, ChainLogs, LogLimits, get_logs

DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_FILTERS = 10_000
Clock = Callable[[], float]


class FilteredChain(ChainLogs, HeaderSource, Protocol):
    """What filters read: the head, canonical hashes, and logs over a range or of a block."""


class FilterNotFound(ServerError):
    """An unknown or expired filter id (-32000, "filter not found")."""

    def __init__(self) -> None:
        super().__init__("filter not found")


Arrivals = Callable[[int], tuple[list[Hash32], int]]
"""A transaction pool's arrivals after a cursor: their hashes, and the cursor to ask from next."""


@dataclass(slots=True)
class _Filter:
    kind: Literal["logs", "blocks", "pending"]
    criteria: LogFilter | None
    next_block: int
    """The first block whose changes this filter has not reported (pending: the pool's cursor)."""
    expires: float
    polling: threading.Lock = field(default_factory=threading.Lock)
    """Held while a poll runs, so that two polls never report the same blocks."""
    arrivals: Arrivals | None = None
    """Where a pending-transaction filter reads the pool's new transactions."""


def new_filter_id() -> str:
    """A random 128-bit id written as geth writes one (a quantity: no leading zeros)."""
    digits = secrets.token_bytes(16).hex().lstrip("0") or "0"
    return "0x" + digits


def check_live_range(criteria: LogFilter) -> None:
    """Refuse a range geth refuses for a live filter (latest-latest, n-latest, n-m in order)."""
    begin, end = criteria.from_block, criteria.to_block
    if begin == "pending" or end == "pending":
        raise InvalidParams("pending logs are not supported")
    if begin == "earliest":
        begin = 0
    if begin == "latest" and end == "latest":
        return
    if isinstance(begin, int) and (end == "latest" or (isinstance(end, int) and end >= begin)):
        return
    raise InvalidParams("invalid block range params")


class FilterRegistry:
    """The installed filters of one dispatcher. Safe to use from several threads: the registry's
    lock guards the table only, and a poll's queries hold just its own filter's lock."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, max_filters: int = DEFAULT_MAX_FILTERS,
                 clock: Clock = time.monotonic) -> None:
        self.timeout = timeout
        self.max_filters = max_filters
        self._clock = clock
        self._filters: dict[str, _Filter] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._filters)

    def _expire(self, now: float) -> None:
        for key in [k for k, f in self._filters.items() if f.expires <= now]:
            del self._filters[key]

    def _install(self, backend: FilteredChain, kind: Literal["logs", "blocks", "pending"],
                 criteria: LogFilter | None) -> str:
        head = backend.pointer("latest")
        now = self._clock()
        with self._lock:
            self._expire(now)
            if len(self._filters) >= self.max_filters:
                raise LimitExceeded(f"too many filters installed (max {self.max_filters})")
            filter_id = new_filter_id()
            while filter_id in self._filters:
                filter_id = new_filter_id()
            self._filters[filter_id] = _Filter(kind, criteria, (head + 1) if head is not None else 0,
                                               now + self.timeout)
        return filter_id

    def new_log_filter(self, backend: FilteredChain, criteria: LogFilter) -> str:
        """Install a log filter (eth_newFilter) watching from the current head; returns its id."""
        check_live_range(criteria)
        return self._install(backend, "logs", criteria)

    def new_block_filter(self, backend: FilteredChain) -> str:
        """Install a block filter (eth_newBlockFilter); returns its id."""
        return self._install(backend, "blocks", None)

    def new_pending_filter(self, backend: FilteredChain, arrivals: Arrivals) -> str:
        """Install a pending-transaction filter (eth_newPendingTransactionFilter) reporting the
        hashes of transactions a pool takes from now on; returns its id."""
        filter_id = self._install(backend, "pending", None)
        with self._lock:
            found = self._filters[filter_id]
            found.arrivals = arrivals
            found.next_block = arrivals(-1)[1]
        return filter_id

    def uninstall(self, filter_id: str) -> bool:
        """Remove a filter (eth_uninstallFilter); False if there was none with this id."""
        with self._lock:
            self._expire(self._clock())
            return self._filters.pop(filter_id, None) is not None

    def _take(self, filter_id: str) -> _Filter:
        now = self._clock()
        with self._lock:
            self._expire(now)
            found = self._filters.get(filter_id)
            if found is None:
                raise FilterNotFound()
            return found

    def changes(self, backend: FilteredChain, filter_id: str,
                limits: LogLimits = DEFAULT_LIMITS) -> list[Log] | list[Hash32]:
        """What the chain gained since the last poll; each poll keeps the filter alive."""
        found = self._take(filter_id)
        with found.polling:
            found.expires = self._clock() + self.timeout
            if found.arrivals is not None:
                arrived, found.next_block = found.arrivals(found.next_block)
                return arrived  # (at most the pool's kept arrivals)
            head = backend.pointer("latest")
            if head is None or found.next_block > head:
                return []
            start = found.next_block
            if found.kind == "blocks":
                end = min(head, start + limits.max_results - 1)
                hashes = [backend.canonical_hash(n) for n in range(start, end + 1)]
                found.next_block = end + 1
                return [h for h in hashes if h is not None]
            assert found.criteria is not None
            logs, through = _new_logs(backend, found.criteria, start, head, limits)
            found.next_block = through + 1
            return logs

    def logs(self, backend: FilteredChain, filter_id: str,
             limits: LogLimits = DEFAULT_LIMITS) -> list[Log]:
        """Every log the filter's query matches, as eth_getLogs answers it."""
        found = self._take(filter_id)
        if found.kind != "logs" or found.criteria is None:
            raise FilterNotFound()
        return get_logs(backend, found.criteria, limits)


def _new_logs(backend: FilteredChain, criteria: LogFilter, start: int, head: int,
              limits: LogLimits) -> tuple[list[Log], int]:
    """Logs of blocks ``start..head`` that match, within the filter's numeric bounds; and the
    last block covered (short of ``head`` when the result limit stopped the query)."""
    low, high = start, head
    if isinstance(criteria.from_block, int):
        low = max(low, criteria.from_block)
    if isinstance(criteria.to_block, int):
        high = min(high, criteria.to_block)
    if low > high:
        return [], head
    query = LogQuery(from_number=low, to_number=high, addresses=criteria.addresses,
                     topics=criteria.topics, limit=limits.max_results,
                     deadline=Deadline.after(limits.timeout))
    try:
        return backend.logs(query), head
    except ResultLimitReached as exc:
        if exc.fits_through < low:
            raise LimitExceeded(f"query returned more than {limits.max_results} results") from None
        return backend.logs(replace(query, to_number=exc.fits_through, limit=None)), exc.fits_through
