"""backend.py: the pointer rule (safe and finalized default to the head and never pass it),
deadlines and cancel tokens on a clock the test turns, the log filter's matching rule (geth's
``filterLogs``: each position a wildcard or a set of alternatives, and a log with fewer topics
than the filter has positions matches nothing), and which objects the runtime-checkable
protocols recognise."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ethread.backend import (
    NO_DEADLINE,
    Backend,
    BlockSource,
    CancelToken,
    ChainPointers,
    Closeable,
    Deadline,
    HeaderSource,
    HistoryInMemory,
    LogQuery,
    ResultLimitReached,
    SelfChecking,
    TotalDifficultySource,
    WritableBackend,
    cancellable,
    pointer_number,
)
from ethread.backends.memory import MemoryBackend
from ethread.errors import Cancelled, QueryTimeout
from ethread.models import Log

# pointers


@pytest.mark.parametrize(("name", "head", "stored", "earliest", "number"), [
    ("latest", None, {"safe": 3}, 0, None),  # an empty store has no pointers
    ("earliest", None, {}, 0, None),
    ("latest", 10, {}, 0, 10),
    ("earliest", 10, {}, 0, 0),
    ("earliest", 10, {}, 7, 7),  # a forked chain's first block
    ("safe", 10, {}, 0, 10),  # defaults to the head
    ("finalized", 10, {}, 0, 10),
    ("safe", 10, {"safe": 4, "finalized": 2}, 0, 4),
    ("finalized", 10, {"safe": 4, "finalized": 2}, 0, 2),
    ("safe", 10, {"safe": 12}, 0, 10),  # never past the head
    ("finalized", 0, {"finalized": 0}, 0, 0),
])
def test_pointer_number(name: Any, head: int | None, stored: dict[str, int], earliest: int,
                        number: int | None) -> None:
    assert pointer_number(name, head, stored, earliest) == number


# deadlines and cancellation


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_expires_only_after_its_time() -> None:
    clock = Clock()
    deadline = Deadline.after(5, clock)
    assert deadline.at == 105.0
    clock.now = 105.0
    assert not deadline.expired()
    deadline.check()
    clock.now = 105.001
    assert deadline.expired()
    with pytest.raises(QueryTimeout) as caught:
        deadline.check()
    assert (caught.value.code, caught.value.message) == (-32005, "query timeout exceeded")


def test_no_deadline_never_expires() -> None:
    assert NO_DEADLINE.at == float("inf")
    assert not NO_DEADLINE.expired()
    NO_DEADLINE.check()


def test_deadlines_compare_by_their_time_alone() -> None:
    assert Deadline(5.0) == Deadline(5.0, Clock(), CancelToken())
    assert Deadline(5.0) != Deadline(6.0)


def test_a_cancelled_token_stops_a_deadline_made_while_it_was_current() -> None:
    clock = Clock()
    token = CancelToken()
    with cancellable(token):
        deadline = Deadline.after(60, clock)
    outside = Deadline.after(60, clock)
    assert deadline.token is token and outside.token is None
    assert not deadline.expired()
    token.cancel("server shutting down")
    token.cancel("a later reason")  # the first reason is kept
    for call in (deadline.expired, deadline.check):
        with pytest.raises(Cancelled) as caught:
            call()
        assert (caught.value.code, caught.value.message) == (-32000, "server shutting down")
    assert not outside.expired()


def test_cancel_has_a_default_reason_and_cancellable_scopes_nest() -> None:
    first, second = CancelToken(), CancelToken()
    assert not first.cancelled and first.reason == ""
    first.cancel()
    assert first.cancelled and first.reason == "request cancelled: the client disconnected"
    with cancellable(first):
        with cancellable(second):
            assert Deadline.after(1).token is second
        assert Deadline.after(1).token is first
        with cancellable(None):
            assert Deadline.after(1).token is None
    assert Deadline.after(1).token is None


def test_result_limit_reached_travels_between_processes() -> None:
    error = pickle.loads(pickle.dumps(ResultLimitReached(41)))
    assert isinstance(error, ResultLimitReached) and error.fits_through == 41


# the log filter's rule

ADDRESSES = [bytes([n]) * 20 for n in range(1, 4)]
TOPICS = [bytes([n]) * 32 for n in range(1, 4)]


def geth_filter(addresses: Sequence[bytes], topics: Sequence[tuple[bytes, ...] | None],
                address: bytes, log_topics: Sequence[bytes]) -> bool:
    """geth's filterLogs (eth/filters/filter.go), restated: the address among the wanted ones
    (any if none); no more filter positions than the log has topics; each position empty
    (here None) or holding the log's topic."""
    if addresses and address not in addresses:
        return False
    if len(topics) > len(log_topics):
        return False
    return all(sub is None or log_topics[i] in sub for i, sub in enumerate(topics))


topic_filters = st.lists(st.none() | st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3)
                         .map(tuple), max_size=4)


def _log(address: bytes, topics: Sequence[bytes]) -> Log:
    return Log(address=address, topics=tuple(topics), data=b"", block_number=1,
               transaction_hash=b"\x00" * 32, transaction_index=0, block_hash=b"\x00" * 32,
               block_timestamp=0, log_index=0)


@given(st.lists(st.sampled_from(ADDRESSES), max_size=2), topic_filters,
       st.sampled_from(ADDRESSES), st.lists(st.sampled_from(TOPICS), max_size=4))
def test_a_query_matches_as_geth_filters(addresses: list[bytes], topics: list[Any],
                                         address: bytes, log_topics: list[bytes]) -> None:
    query = LogQuery(0, 10, addresses=tuple(addresses), topics=tuple(topics))
    expected = geth_filter(addresses, topics, address, log_topics)
    assert query.matches(address, log_topics) is expected
    assert query.log_matcher()(_log(address, log_topics)) is expected


@pytest.mark.parametrize(("topics", "log_topics", "match"), [
    ((), [], True),
    ((None,), [], False),  # a wildcard position still needs a topic there
    ((None,), [TOPICS[0]], True),
    ((None, (TOPICS[1],)), [TOPICS[0], TOPICS[1]], True),
    ((None, (TOPICS[1],)), [TOPICS[0], TOPICS[2]], False),
    (((TOPICS[0], TOPICS[2]),), [TOPICS[2], TOPICS[0]], True),  # alternatives at one position
    (((TOPICS[0],),), [TOPICS[1], TOPICS[0]], False),  # a topic at another position is no match
])
def test_topic_positions(topics: tuple[Any, ...], log_topics: list[bytes], match: bool) -> None:
    assert LogQuery(0, 0, topics=topics).matches(ADDRESSES[0], log_topics) is match


def test_the_block_range_is_not_the_matchers_concern() -> None:
    query = LogQuery(5, 6, addresses=(ADDRESSES[0],))
    assert query.log_matcher()(_log(ADDRESSES[0], []))  # the log's block 1 is outside 5..6
    assert not query.log_matcher()(_log(ADDRESSES[1], []))
    assert query.limit is None and query.deadline is NO_DEADLINE


# the protocols, checked at run time


class HeadersOnly:
    def header_by_hash(self, block_hash: bytes) -> None:
        return None

    def canonical_hash(self, number: int) -> None:
        return None


def test_a_class_with_a_protocols_methods_is_that_protocol_and_no_more() -> None:
    headers = HeadersOnly()
    assert isinstance(headers, HeaderSource)
    assert not isinstance(headers, BlockSource)
    assert not isinstance(headers, Backend)


def test_the_memory_backend_is_a_writable_backend_held_in_memory() -> None:
    backend = MemoryBackend()
    for protocol in (Backend, WritableBackend, HistoryInMemory, ChainPointers):
        assert isinstance(backend, protocol)
    for protocol in (TotalDifficultySource, Closeable, SelfChecking):
        assert not isinstance(backend, protocol)
