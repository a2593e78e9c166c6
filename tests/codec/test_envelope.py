"""The JSON-RPC envelope against hostile input (``ethread.codec.envelope``): params nested deep
enough to break JSON encoding (alone and in a batch, and the shortcut that skips the walk for
shallow bodies), and ids that do not fit a machine number, echoed exactly as sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ethread
from tests.support.server_harness import shared_demo


def nested(depth: int) -> Any:
    value: Any = "0x1"
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture(scope="module")
def demo() -> Any:
    return shared_demo().chain.backend


@pytest.mark.parametrize("depth", [200, 254, 255, 600, 1_022])
def test_deeply_nested_params_answer_invalid_params(demo: Any, depth: int) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "eth_getBalance",
                       "params": [nested(depth), "latest"]}).encode()
    answer = json.loads(ethread.handle(demo, body) or b"null")
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32602
    assert "nested more than 128 levels" in answer["error"]["message"]


def test_deep_params_in_a_batch_answer_each_call(demo: Any) -> None:
    calls = [{"jsonrpc": "2.0", "id": i, "method": "eth_chainId",
              "params": [nested(300)] if i % 2 else []} for i in range(4)]
    answers = json.loads(ethread.handle(demo, json.dumps(calls).encode()) or b"null")
    assert [a["id"] for a in answers] == [0, 1, 2, 3]
    assert [("error" in a) for a in answers] == [False, True, False, True]
    assert {a["error"]["code"] for a in answers if "error" in a} == {-32602}


@pytest.mark.parametrize("raw_id", [b"1" + b"0" * 100, b"1.50", b"-1E2", b"18446744073709551616",
                                    b"12345678901234567890123"])
def test_ids_are_echoed_exactly_as_sent(demo: Any, raw_id: bytes) -> None:
    body = b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"eth_chainId"}'
    answer = ethread.handle(demo, body) or b""
    assert answer.startswith(b'{"jsonrpc":"2.0","id":' + raw_id + b",")
    batch = b"[" + body + b"," + body.replace(b"eth_chainId", b"no_such") + b"]"
    answers = ethread.handle(demo, batch) or b""
    assert answers.count(b'"id":' + raw_id + b",") == 2


@pytest.mark.parametrize("depth", range(122, 132))
def test_the_depth_check_skipped_for_a_shallow_body_answers_as_the_walk(depth: int) -> None:
    """A body with fewer opening brackets than the depth bound skips the walk over its params;
    around the bound, every body is judged as the walk judges it."""
    import orjson

    from ethread.codec.envelope import parse_call, parse_request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance",
                       "params": [nested(depth)]}).encode()
    _, [parsed], _ = parse_request(body)
    walked = parse_call(orjson.loads(body))
    assert type(parsed) is type(walked)
    assert str(parsed) == str(walked)
