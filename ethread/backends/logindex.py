"""Answer a log query from posting lists (the sorted numbers of the blocks where an address, or a
(topic position, topic) pair, occurs, and of blocks with any log), shared by the persistent
backends: a query visits only the blocks its filters' postings intersect in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import rlp

from ..backend import LogQuery, ResultLimitReached
from ..models import Address, Hash32, Log, Receipt
from ..rlpcodec.items import decode_nested

DEADLINE_STRIDE = 32
"""How many candidate blocks a query visits between deadline checks (a check reads the clock;
32 cold blocks of a store take well under a millisecond, the bound on how far past its budget
a query tried on the event loop can run)."""

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


def logs_of_receipts(receipts: Sequence[Receipt]) -> Iterator[Log]:
    """Every log of these receipts, in order."""
    for receipt in receipts:
        yield from receipt.logs


def collect_logs(
    query: LogQuery,
    candidates: Sequence[int],
    logs_at: Callable[[int], Iterable[Log]],
) -> list[Log]:
    """Matching logs of ``candidates`` in chain order (``logs_at``: every log of a block)."""
    out: list[Log] = []
    matches = query.log_matcher()
    limit = query.limit
    deadline = query.deadline
    for count, number in enumerate(candidates):
        if count % DEADLINE_STRIDE == 0:
            deadline.check()
        before = len(out)
        out.extend(filter(matches, logs_at(number)))
        if limit is not None and len(out) > limit:
            raise ResultLimitReached(number - 1 if before <= limit else number)
    return out


def encode_block_logs(block_hash: Hash32, timestamp: int, receipts: Sequence[Receipt]) -> bytes:
    """Every log of a block in one compact record, so a log query decodes only this (not the
    block and its receipts): ``[block hash, timestamp, [[tx index, tx hash, [logs]], ...]]``."""
    return encode_log_record(block_hash, timestamp, [
        (receipt.transaction_index, receipt.transaction_hash,
         [(log.address, log.topics, log.data) for log in receipt.logs])
        for receipt in receipts if receipt.logs
    ])


RawLog = tuple[Address, Sequence[Hash32], bytes]


def encode_log_record(block_hash: Hash32, timestamp: int,
                      entries: Sequence[tuple[int, Hash32, Sequence[RawLog]]]) -> bytes:
    """The record :func:`decode_block_logs` reads, from (tx index, tx hash, logs) entries."""
    encoded: bytes = rlp.encode([block_hash, timestamp, [
        [index, tx_hash, [[address, list(topics), data] for address, topics, data in logs]]
        for index, tx_hash, logs in entries if logs
    ]])
    return encoded


def decode_block_logs(number: int, raw: bytes) -> list[Log]:
    """The logs of block ``number`` from its compact log record (block hash, timestamp and each
    transaction's logs); ValueError when the record is damaged."""
    decoded: Any = decode_nested(raw)
    try:
        block_hash, timestamp, entries = decoded
        timestamp = int.from_bytes(timestamp, "big")
        out = []
        log_index = 0
        for tx_index, tx_hash, logs in entries:
            index = int.from_bytes(tx_index, "big")
            for address, topics, data in logs:
                out.append(Log(address=address, topics=tuple(topics), data=data,
                               block_number=number, transaction_hash=tx_hash,
                               transaction_index=index, block_hash=block_hash,
                               block_timestamp=timestamp, log_index=log_index))
                log_index += 1
    except TypeError as exc:  # an item where a list belongs, or the reverse
        raise ValueError(f"a block's log record has the wrong shape: {exc}") from None
    return out


def log_keys(receipts: Sequence[Receipt]) -> tuple[set[Address], set[tuple[int, bytes]]]:
    """The addresses and (position, topic) pairs a block's log index entries are made of."""
    addresses: set[Address] = set()
    topics: set[tuple[int, bytes]] = set()
    for receipt in receipts:
        for log in receipt.logs:
            addresses.add(log.address)
            topics.update(enumerate(log.topics))
    return addresses, topics
