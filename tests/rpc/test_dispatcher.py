"""The JSON-RPC envelope: batches, notifications and every error code, as tables."""

from __future__ import annotations

import json
from dataclasses import replace
from types import MappingProxyType

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ethread
from ethread.rpc import table
from ethread.rpc.table import TABLE

HEAD_HASH = "0xe27a3e81bd7cfe2aec2cc9e832c73a17c93e7efcf659cf4b39883b96c48708c2"


def ask(backend: ethread.MemoryBackend, body: object) -> object:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = ethread.handle(backend, raw)
    return None if answer is None else json.loads(answer)


def req(method: str, *params: object, id: object = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": list(params)}


ERROR_CASES = [
    # (request body, code, message)
    (b"{not json", -32700, "parse error"),
    (b"[]", -32600, "empty batch"),
    (b'"just a string"', -32600, "invalid request"),
    (b'{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}', -32600, 'invalid request: jsonrpc must be "2.0"'),
    (b'{"jsonrpc":"2.0","id":1,"method":5}', -32600, "invalid request: method must be a string"),
    (b'{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":{"a":1}}', -32600,
     "invalid request: params must be an array"),
    (req("eth_nope"), -32601, "the method eth_nope does not exist/is not available"),
    (req("eth_getBlockByNumber", "0x1"), -32602, "missing value for required argument 1"),
    (req("eth_getBlockByNumber", "0x1", False, 3), -32602, "too many arguments, want at most 2"),
    (req("eth_getBlockByNumber", "0x01", False), -32602,
     "invalid argument 0: hex number with leading zero digits"),
    (req("eth_getBlockByNumber", "12", False), -32602, "invalid argument 0: hex string without 0x prefix"),
    (req("eth_getBlockByNumber", "0x8000000000000000", False), -32602,
     "invalid argument 0: block number larger than int64"),
    (req("eth_getBlockByNumber", "0x10000000000000000", False), -32602,
     "invalid argument 0: hex number > 64 bits"),
    (req("eth_getBlockByNumber", "newest", False), -32602, "invalid argument 0: hex string without 0x prefix"),
    (req("eth_getBlockByNumber", "0x1", "yes"), -32602,
     "invalid argument 1: json: cannot unmarshal string into Go value of type bool"),
    (req("eth_getBlockByHash", "0x1234", False), -32602,
     "invalid argument 0: hex string has length 4, want 64 for common.Hash"),
    (req("eth_getTransactionByHash", "0xzz" + "0" * 62), -32602,
     "invalid argument 0: json: cannot unmarshal invalid hex string into Go value of type common.Hash"),
    (req("debug_getRawTransaction", "10" * 32), -32602,
     "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash"),
    (req("eth_getProof", "0x" + "00" * 19, [], "latest"), -32602,
     "invalid argument 0: hex string has length 38, want 40 for common.Address"),
    (req("eth_getLogs", {"fromBlock": "0x2", "toBlock": "0x1"}), -32602, "invalid block range params"),
    (req("eth_getLogs", {"fromBlock": "0x1", "toBlock": "0x64"}), -32602,
     "block range extends beyond current head block"),
    (req("eth_getLogs", {"blockHash": HEAD_HASH, "fromBlock": "0x1"}), -32602,
     "invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other"),
    (req("eth_getLogs", {"topics": [None, None, None, None, ["0x" + "11" * 32]]}), -32602,
     "invalid argument 0: exceed max topics"),
    # Five positions are too many even when the last are wildcards (they are not dropped).
    (req("eth_getLogs", {"topics": [None, None, None, None, None]}), -32602,
     "invalid argument 0: exceed max topics"),
    (req("eth_getLogs", {"topics": [["0x" + "11" * 32], None, None, None, []]}), -32602,
     "invalid argument 0: exceed max topics"),
    (req("eth_getLogs", {"blockHash": "0x" + "de" * 32}), -32000, "unknown block"),
    (req("eth_call", {"to": "0x" + "00" * 20}, "0x3e8"), -32000, "header not found"),
    (req("eth_getProof", "0x" + "00" * 20, [], "0x" + "ab" * 32), -32000, "header for hash not found"),
]


@pytest.mark.parametrize(("body", "code", "message"), ERROR_CASES)
def test_error_answers(rpc_compat_memory: ethread.MemoryBackend, body: object, code: int,
                       message: str) -> None:
    answer = ask(rpc_compat_memory, body)
    assert isinstance(answer, dict)
    assert answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == code
    assert answer["error"]["message"] == message
    assert "result" not in answer


def test_id_is_echoed_exactly(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for request_id in (7, "abc", None, 1.5, "0x10"):
        answer = ask(rpc_compat_memory, req("eth_chainId", id=request_id))
        assert answer == {"jsonrpc": "2.0", "id": request_id, "result": "0xc72dd9d5e883e"}


def test_notification_gets_no_answer(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert ethread.handle(rpc_compat_memory, b'{"jsonrpc":"2.0","method":"eth_blockNumber"}') is None
    batch = b'[{"jsonrpc":"2.0","method":"eth_blockNumber"},{"jsonrpc":"2.0","method":"eth_chainId"}]'
    assert ethread.handle(rpc_compat_memory, batch) is None


def test_batch_answers_each_call_in_order(rpc_compat_memory: ethread.MemoryBackend) -> None:
    body = [
        req("eth_blockNumber", id=1),
        {"jsonrpc": "2.0", "method": "eth_chainId"},  # notification: skipped in the answer
        req("eth_nope", id=2),
        5,
        req("net_version", id=3),
    ]
    answer = ask(rpc_compat_memory, body)
    assert answer == [
        {"jsonrpc": "2.0", "id": 1, "result": "0x2d"},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601,
                                                "message": "the method eth_nope does not exist/is not available"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}},
        {"jsonrpc": "2.0", "id": 3, "result": "3503995874084926"},
    ]


def test_basic_methods(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert ask(rpc_compat_memory, req("eth_chainId"))["result"] == hex(3503995874084926)  # type: ignore[index]
    assert ask(rpc_compat_memory, req("eth_blockNumber"))["result"] == "0x2d"  # type: ignore[index]
    assert ask(rpc_compat_memory, req("web3_clientVersion"))["result"].startswith("ethread/")  # type: ignore[index]


def test_internal_fault_hides_traceback(rpc_compat_memory: ethread.MemoryBackend,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("secret detail /home/user/file.py line 3")

    row = replace(TABLE["eth_chainId"], answer=broken, cacheable=False)
    monkeypatch.setattr(table, "TABLE", MappingProxyType({**TABLE, "eth_chainId": row}))
    answer = ask(rpc_compat_memory, req("eth_chainId"))
    assert answer == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "internal error"}}


def test_answer_keys_are_in_a_fixed_order(rpc_compat_memory: ethread.MemoryBackend) -> None:
    first = ethread.handle(rpc_compat_memory, json.dumps(req("eth_getBlockByNumber", "0x2", True)).encode())
    # A fresh dispatcher (no cache) must write the very same bytes.
    from ethread.rpc.dispatcher import Dispatcher

    again = Dispatcher(rpc_compat_memory).handle(json.dumps(req("eth_getBlockByNumber", "0x2", True)).encode())
    assert first == again
    assert first is not None and first.startswith(b'{"jsonrpc":"2.0","id":1,"result":{"parentHash":')


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=70),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
HEXISH = st.sampled_from(["0x", "0x0", "0x00", "0x1", "0x2d", "0xzz", "latest", "pending", "safe", "finalized",
                          "earliest", HEAD_HASH, "0x" + "00" * 20, "0x" + "ff" * 32, "-1", "0x" + "f" * 80])
PARAM = HEXISH | JSON_VALUES | st.dictionaries(
    st.sampled_from(["from", "to", "data", "input", "gas", "value", "fromBlock", "toBlock", "address",
                     "topics", "blockHash", "gasPrice", "maxFeePerGas"]),
    HEXISH | JSON_VALUES, max_size=5)


def _check_well_formed(answer: object, request_id: object) -> None:
    assert isinstance(answer, dict)
    assert answer["jsonrpc"] == "2.0"
    assert ("result" in answer) != ("error" in answer)
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        assert error["code"] != -32603, error  # no internal faults from bad input
        assert "Traceback" not in error["message"]


@settings(max_examples=300, deadline=None)
@given(method=st.sampled_from(sorted(TABLE)), params=st.lists(PARAM, max_size=4),
       request_id=st.integers(0, 1000) | st.text(max_size=5))
def test_random_requests_get_well_formed_answers(rpc_compat_memory: ethread.MemoryBackend, method: str,
                                                 params: list[object], request_id: object) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    answer = ethread.handle(rpc_compat_memory, body)
    assert answer is not None
    parsed = json.loads(answer)
    _check_well_formed(parsed, request_id)
    assert parsed["id"] == request_id


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_random_bodies_never_crash(rpc_compat_memory: ethread.MemoryBackend, raw: bytes) -> None:
    answer = ethread.handle(rpc_compat_memory, raw)
    if answer is None:
        return  # all notifications
    parsed = json.loads(answer)
    for item in parsed if isinstance(parsed, list) else [parsed]:
        assert item["jsonrpc"] == "2.0"
        assert ("result" in item) != ("error" in item)


def test_fragment_cache_is_bounded_in_bytes() -> None:
    from ethread.codec.serialize import FragmentCache

    cache = FragmentCache(max_entries=1000, max_bytes=100)
    for key in range(10):
        fragment = cache.get(key, lambda k=key: {"value": "x" * 30, "key": k})
        assert b'"key":%d' % key in orjson.dumps(fragment)
    assert 0 < cache.bytes <= 100
    assert 0 < len(cache) < 10
