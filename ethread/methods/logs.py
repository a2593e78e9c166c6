"""eth_getLogs, with the service's limits: a query past its deadline answers -32005; a range
over blocks the backend lacks below its head (a gap between Era1 archives) answers -32000
naming them, never an answer with their logs silently missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..backend import ChainPointers, Deadline, LogQuery, LogSource, ReceiptSource, ResultLimitReached
from ..errors import InvalidParams, LimitExceeded, MissingHistory, UnknownBlock
from ..evm import time_limit
from ..iteration import may_have_gaps
from ..models import Log, LogFilter
from ..validation import check_instance
from .resolve import resolve_number

MAX_TOPICS = 4


class ChainLogs(LogSource, ChainPointers, ReceiptSource, Protocol):
    """Logs over a range of the chain (the log index), or of one block (its receipts)."""


@dataclass(frozen=True, slots=True)
class LogLimits:
    """Bounds on one eth_getLogs query: logs, seconds, and addresses plus topics."""

    max_results: int = 10_000
    timeout: float = 10.0
    max_parameters: int = 5_000


DEFAULT_LIMITS = LogLimits()


MAX_LOGS_UNDER_BUDGET = 1_000
"""Most logs a query run under a host's budget (:func:`.time_limit.budget`, a server trying it
on its event loop) may answer: turning more into JSON is work the budget cannot stop, so a
larger answer hands the query back to the host (it runs again where long work belongs)."""


class _BudgetedDeadline(Deadline):
    """The query's deadline, which also stops it once the host's budget is spent."""

    __slots__ = ()

    def expired(self) -> bool:
        """Whether the time is up; raises BudgetSpent past the host's budget."""
        time_limit.check_budget()
        return Deadline.expired(self)


def get_logs(backend: ChainLogs, log_filter: LogFilter, limits: LogLimits = DEFAULT_LIMITS) -> list[Log]:
    """Logs matching the filter, in chain order."""
    check_instance(log_filter, LogFilter, "log_filter")
    check_instance(limits, LogLimits, "limits")
    if len(log_filter.topics) > MAX_TOPICS:
        raise InvalidParams("exceed max topics")
    count = log_filter.parameter_count
    if count > limits.max_parameters:
        raise LimitExceeded(
            f"query has {count} parameters (addresses and topics), more than "
            f"{limits.max_parameters}"
        )
    deadline = Deadline.after(limits.timeout)
    if time_limit.under_budget():
        deadline = _BudgetedDeadline(deadline.at, deadline.clock, deadline.token)
    if log_filter.block_hash is not None:
        return _logs_of_block(backend, log_filter, limits)
    head = backend.pointer("latest")
    begin = resolve_number(backend, log_filter.from_block)
    end = resolve_number(backend, log_filter.to_block)
    if head is None or begin is None or end is None:
        return []
    if begin > end:
        raise InvalidParams("invalid block range params")
    if end > head:
        raise InvalidParams("block range extends beyond current head block")
    earliest = backend.pointer("earliest") or 0
    if may_have_gaps(backend):
        missing = backend.missing_ranges(max(begin, earliest), end + 1)
        if missing:
            raise MissingHistory(missing, "the logs of the range cannot be answered in full")
    query = LogQuery(
        from_number=max(begin, earliest),
        to_number=end,
        addresses=log_filter.addresses,
        topics=log_filter.topics,
        limit=limits.max_results,
        deadline=deadline,
    )
    try:
        found = backend.logs(query)
    except ResultLimitReached as exc:
        raise _too_many(limits, query.from_number, exc.fits_through) from None
    if len(found) > MAX_LOGS_UNDER_BUDGET and time_limit.under_budget():
        raise time_limit.BudgetSpent
    return found


def _too_many(limits: LogLimits, begin: int, fits_through: int) -> LimitExceeded:
    data = None
    if fits_through >= begin:
        # A range that would have fitted, as hosted providers suggest one.
        data = {"from": hex(begin), "to": hex(fits_through), "limit": limits.max_results}
    return LimitExceeded(f"query returned more than {limits.max_results} results", data)


def _logs_of_block(backend: ReceiptSource, log_filter: LogFilter, limits: LogLimits) -> list[Log]:
    assert log_filter.block_hash is not None
    receipts = backend.receipts(log_filter.block_hash)
    if receipts is None:
        raise UnknownBlock("unknown block")
    matches = LogQuery(from_number=0, to_number=0, addresses=log_filter.addresses,
                       topics=log_filter.topics).log_matcher()
    out = [log for receipt in receipts for log in receipt.logs if matches(log)]
    if len(out) > limits.max_results:
        raise LimitExceeded(f"query returned more than {limits.max_results} results")
    return out
