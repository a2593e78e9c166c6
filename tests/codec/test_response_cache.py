"""codec/response_cache.py: the result cache keeps answers for one generation of the chain and
within its bounds; the body cache answers a body seen twice, under the id the body carries
when that id is a plain integer nothing else can be taken for (the answer's JSON, parsed by
the standard library, is the first answer's with the new id), and by exact bytes otherwise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ethread.codec.envelope import Call, result_response
from ethread.codec.response_cache import ENTRY_OVERHEAD_BYTES, BodyAnswers, ResponseCache

# ResponseCache


def test_an_answer_is_served_only_at_the_generation_it_was_computed_at() -> None:
    cache = ResponseCache()
    cache.put(1, "k", b"one")
    assert cache.get(1, "k") == b"one"
    assert cache.get(2, "k") is None and cache.get(0, "k") is None
    cache.put(2, "other", b"two")  # a newer generation drops every older answer
    assert cache.get(2, "k") is None and cache.get(1, "k") is None
    assert cache.get(2, "other") == b"two"


def test_an_answer_over_an_eighth_of_the_budget_is_not_kept() -> None:
    cache = ResponseCache(max_entries=10, max_bytes=800)
    cache.put(1, "small", b"x" * 100)
    cache.put(1, "big", b"x" * 101)
    assert cache.get(1, "small") == b"x" * 100
    assert cache.get(1, "big") is None


def test_the_least_recently_used_answer_goes_first() -> None:
    cache = ResponseCache(max_entries=2)
    cache.put(1, "a", b"A")
    cache.put(1, "b", b"B")
    assert cache.get(1, "a") == b"A"  # a read makes "a" the most recent
    cache.put(1, "c", b"C")
    assert (cache.get(1, "a"), cache.get(1, "b"), cache.get(1, "c")) == (b"A", None, b"C")


def test_the_byte_budget_bounds_the_answers_kept() -> None:
    cache = ResponseCache(max_entries=100, max_bytes=800)
    for n in range(9):
        cache.put(1, n, b"x" * 100)
    kept = [n for n in range(9) if cache.get(1, n) is not None]
    assert kept == list(range(1, 9))  # 800 bytes hold eight answers of 100: the oldest went


# BodyAnswers


def _body(request_id: Any, method: str = "eth_blockNumber", params: list[Any] | None = None,
          spacing: str = "") -> bytes:
    sep = ":" + spacing
    return (f'{{"jsonrpc"{sep}"2.0","id"{sep}{json.dumps(request_id)},"method"{sep}'
            f'{json.dumps(method)},"params"{sep}{json.dumps(params or [])}}}').encode()


def _answered(bodies: BodyAnswers, generation: int, body: bytes, result: bytes = b'"0x2a"') -> Call:
    call_ = json.loads(body)
    call = Call(call_["method"], call_["params"], call_["id"])
    bodies.put(generation, body, call, result_response(call.id, result))
    return call


def _asked(bodies: BodyAnswers, generation: int, body: bytes) -> tuple[Call, Any, Any] | None:
    """What the cache answers for ``body``, with the answer parsed."""
    found = bodies.get(generation, body)
    if found is None:
        return None
    call, request_id, answer = found
    return call, request_id, json.loads(answer)


def test_an_answer_is_kept_the_second_time_its_body_comes() -> None:
    bodies = BodyAnswers()
    body = _body(1)
    _answered(bodies, 5, body)
    assert len(bodies) == 0 and bodies.get(5, body) is None  # the first time: only noted
    call = _answered(bodies, 5, body)
    assert len(bodies) == 1
    assert _asked(bodies, 5, body) == (call, 1, {"jsonrpc": "2.0", "id": 1, "result": "0x2a"})
    assert bodies.get(6, body) is None  # the chain moved on


@given(st.integers(0, 10**15 - 1), st.integers(0, 10**15 - 1), st.sampled_from(["", " ", "\n\t "]))
def test_a_body_under_another_integer_id_gets_its_own_id(first: int, second: int,
                                                         spacing: str) -> None:
    bodies = BodyAnswers()
    _answered(bodies, 1, _body(first, spacing=spacing))
    call = _answered(bodies, 1, _body(first, spacing=spacing))
    found = _asked(bodies, 1, _body(second, spacing=spacing))
    assert found is not None
    assert found[0] == call and found[1] == second
    assert found[2] == {"jsonrpc": "2.0", "id": second, "result": "0x2a"}


@pytest.mark.parametrize(("first", "second"), [
    ("a", "b"),  # a string id
    (10**15, 10**15 + 1),  # sixteen digits: not taken for a plain integer
    (1.5, 2.5),
    (None, 2),
])
def test_a_body_with_any_other_id_is_kept_by_its_exact_bytes(first: Any, second: Any) -> None:
    bodies = BodyAnswers()
    body = _body(first)
    _answered(bodies, 1, body)
    call = _answered(bodies, 1, body)
    found = _asked(bodies, 1, body)
    assert found is not None and found[1] == first and found[2]["id"] == first
    assert found[0] == call
    assert bodies.get(1, _body(second)) is None


@pytest.mark.parametrize("params", [
    [{"id": 7}],  # "id" twice: the integer may not be the top-level id
    ["a\\\"id\\\": 1"],  # a backslash: an escaped key could spell id
])
def test_a_body_whose_id_could_be_mistaken_is_kept_by_its_exact_bytes(params: list[Any]) -> None:
    bodies = BodyAnswers()
    body = _body(3, "eth_call", params)
    for _ in range(3):  # noted once as a template, once as exact bytes, then kept
        _answered(bodies, 1, body)
    found = _asked(bodies, 1, body)
    assert found is not None and found[1] == 3 and found[2]["id"] == 3
    assert bodies.get(1, _body(4, "eth_call", params)) is None


def test_large_bodies_and_answers_are_not_kept() -> None:
    bodies = BodyAnswers()
    long_body = _body(1, "eth_call", ["0x" + "00" * BodyAnswers.MAX_BODY_BYTES])
    for _ in range(2):
        _answered(bodies, 1, long_body)
    assert len(bodies) == 0 and bodies.get(1, long_body) is None
    body = _body(1)
    big = b'"' + b"a" * BodyAnswers.MAX_ANSWER_BYTES + b'"'
    for _ in range(2):
        _answered(bodies, 1, body, big)
    assert len(bodies) == 0


def test_the_oldest_entries_go_when_the_cache_is_full() -> None:
    bodies = BodyAnswers(max_entries=3)
    methods = [f"m{n}" for n in range(5)]
    for method in methods:
        for _ in range(2):
            _answered(bodies, 1, _body(1, method))
    assert len(bodies) == 3
    assert [bodies.get(1, _body(1, m)) is not None for m in methods] == [False, False, True, True, True]


def test_the_byte_bound_counts_each_entrys_overhead() -> None:
    body = _body(1, "m0")
    key_bytes = len(body) - 1  # the id's one digit taken out
    answer_tail = len(result_response(1, b'"0x2a"')) - len(b'{"jsonrpc":"2.0","id":1')
    one_entry = key_bytes + answer_tail + ENTRY_OVERHEAD_BYTES
    bodies = BodyAnswers(max_bytes=2 * one_entry)
    for method in ("m0", "m1", "m2"):  # bodies of equal length
        for _ in range(2):
            _answered(bodies, 1, _body(1, method))
    assert len(bodies) == 2
    assert bodies.get(1, _body(1, "m0")) is None and bodies.get(1, _body(1, "m2")) is not None


def test_an_answer_put_again_replaces_the_old_one() -> None:
    bodies = BodyAnswers()
    body = _body(9)
    _answered(bodies, 1, body, b'"0x1"')
    _answered(bodies, 1, body, b'"0x1"')
    _answered(bodies, 2, body, b'"0x2"')
    assert len(bodies) == 1
    assert bodies.get(1, body) is None
    found = _asked(bodies, 2, body)
    assert found is not None and found[2]["result"] == "0x2"
