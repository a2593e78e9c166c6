"""Answer a log query from posting lists, shared by the persistent backends.

A backend's log index maps an address, or a (topic position, topic) pair, to the sorted block
numbers where it occurs, plus the list of blocks with any log. A query visits only the blocks
in the intersection of its filters' postings; receipts of those blocks confirm each log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..backend import LogQuery, ResultLimitReached
from ..models import Address, Hash32, Log, Receipt

DEADLINE_STRIDE = 256
"""How many candidate blocks a query visits between deadline checks."""

Postings = Callable[[int, int], Iterable[int]]
"""Block numbers in ``[lo, hi]`` of one posting list, ascending."""


def candidate_blocks(
    query: LogQuery,
    by_address: Callable[[Address], Postings],
    by_topic: Callable[[int, Hash32], Postings],
    with_logs: Postings,
) -> list[int]:
    """Block numbers that can hold a matching log, ascending."""
    lo, hi = query.from_number, query.to_number
    sets: list[set[int]] = []
    if query.addresses:
        found: set[int] = set()
        for address in query.addresses:
            found.update(by_address(address)(lo, hi))
        sets.append(found)
    for position, wanted in enumerate(query.topics):
        if wanted is None:
            continue
        found = set()
        for topic in wanted:
            found.update(by_topic(position, topic)(lo, hi))
        sets.append(found)
    if not sets:
        return list(with_logs(lo, hi))
    sets.sort(key=len)
    return sorted(sets[0].intersection(*sets[1:]))


def collect_logs(
    query: LogQuery,
    candidates: Sequence[int],
    receipts_at: Callable[[int], Sequence[Receipt]],
) -> list[Log]:
    """Matching logs of ``candidates`` in chain order, honouring the query's limit and
    deadline."""
    out: list[Log] = []
    for count, number in enumerate(candidates):
        if count % DEADLINE_STRIDE == 0:
            query.deadline.check()
        before = len(out)
        for receipt in receipts_at(number):
            for log in receipt.logs:
                if query.matches(log.address, log.topics):
                    out.append(log)
        if query.limit is not None and len(out) > query.limit:
            raise ResultLimitReached(number - 1 if before <= query.limit else number)
    return out
