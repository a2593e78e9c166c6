"""The parity-style trace namespace (:mod:`ethread.rpc.trace`): its parameters (trace types,
trace_filter's object, trace_callMany's pairs) refused naming the argument, and its answers in
reth's shapes for a mined transfer and a call."""

from __future__ import annotations

import orjson
import pytest

from ethread.devchain import DevChain
from ethread.errors import InvalidParams
from ethread.rpc.table import call_method
from ethread.rpc.trace import parse_trace_filter, parse_trace_types
from tests.support.rpc_cases import error


def test_trace_types() -> None:
    assert parse_trace_types(["trace", "stateDiff"]) == ("trace", "stateDiff")
    with pytest.raises(InvalidParams, match="unknown trace type 'calls', expected one of trace"):
        parse_trace_types(["calls"])
    with pytest.raises(InvalidParams, match="invalid type: string, expected a list of trace types"):
        parse_trace_types("trace")


def test_a_trace_filter() -> None:
    query = parse_trace_filter({"fromBlock": "0x1", "toAddress": ["0x" + "11" * 20],
                                "after": 2, "count": "0x3", "mode": "intersection"})
    assert (query.from_block, query.to_block, query.after, query.count, query.mode) == (
        1, "latest", 2, 3, "intersection")
    assert query.to_addresses == frozenset({b"\x11" * 20}) and query.from_addresses == frozenset()
    with pytest.raises(InvalidParams, match="mode: expected union or intersection"):
        parse_trace_filter({"mode": "all"})
    with pytest.raises(InvalidParams, match="count: expected a non-negative number"):
        parse_trace_filter({"count": -1})


def test_errors_name_the_argument(chain: DevChain) -> None:
    call = {"to": "0x" + "00" * 20}
    code, message = error(chain.backend, "trace_call", call, ["vm"])
    assert code == InvalidParams.code
    assert message.startswith("invalid argument 1: unknown trace type 'vm'")
    assert error(chain.backend, "trace_callMany", [[call]]) == (
        InvalidParams.code, "invalid argument 0: call 0: expected a [call, traceTypes] pair")
    code, message = error(chain.backend, "trace_callMany", [[call, ["x"]]])
    assert code == InvalidParams.code
    assert message.startswith("invalid argument 0: call 0: unknown trace type 'x'")
    assert error(chain.backend, "trace_get", "0x" + "00" * 32, "0x0") == (
        InvalidParams.code, "invalid argument 1: invalid type: string, expected a list of indices")
    assert error(chain.backend, "trace_call", call) == (
        InvalidParams.code, "missing value for required argument 1")


def test_a_mined_transfer_traced(chain: DevChain) -> None:
    sender, receiver = chain.accounts[0], chain.accounts[1]
    tx_hash = "0x" + chain.send(sender, receiver.address, value=7).hex()
    chain.mine()
    traces = orjson.loads(call_method(chain.backend, "trace_transaction", [tx_hash]))
    assert len(traces) == 1
    trace = traces[0]
    assert trace["action"] == {"from": "0x" + sender.address.hex(), "callType": "call",
                               "gas": trace["action"]["gas"], "input": "0x",
                               "to": "0x" + receiver.address.hex(), "value": "0x7"}
    assert (trace["transactionHash"], trace["blockNumber"], trace["type"]) == (
        tx_hash, chain.head.number, "call")
    block = orjson.loads(call_method(chain.backend, "trace_block", [hex(chain.head.number)]))
    assert block[0] == trace
    assert orjson.loads(call_method(chain.backend, "trace_get", [tx_hash, ["0x0"]])) == trace
    assert orjson.loads(call_method(chain.backend, "trace_get", [tx_hash, ["0x1"]])) is None
    replay = orjson.loads(call_method(chain.backend, "trace_replayTransaction",
                                      [tx_hash, ["trace", "stateDiff"]]))
    assert replay["trace"][0]["action"] == trace["action"] and replay["vmTrace"] is None
    assert replay["stateDiff"]["0x" + receiver.address.hex()]["balance"]["*"]["to"] is not None


def test_a_call_traced(chain: DevChain) -> None:
    call = {"from": "0x" + chain.accounts[0].address.hex(), "to": "0x" + "22" * 20, "value": "0x1"}
    replay = orjson.loads(call_method(chain.backend, "trace_call", [call, ["trace"]]))
    assert replay["output"] == "0x" and replay["stateDiff"] is None
    assert [entry["type"] for entry in replay["trace"]] == ["call"]
    many = orjson.loads(call_method(chain.backend, "trace_callMany", [[[call, ["trace"]]] * 2]))
    assert [r["trace"] for r in many] == [replay["trace"]] * 2
