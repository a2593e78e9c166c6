"""The request pipeline on its own: bytes in, answer bytes out, with the work it leaves to the
host. A recording responder stands in for the dispatcher, so that each test can say which
calls ran, where, and in what order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

import ethread
from ethread.codec.envelope import Call, result_response
from ethread.codec.pipeline import LARGE_ANSWER_BYTES, Limits, Pipeline, Refused
from ethread.errors import EthreadError, InvalidParams, LimitExceeded
from ethread.rpc.dispatcher import Dispatcher
from tests.support.server_harness import shared_demo


class Recorder:
    """Answers every call with its method name; remembers what ran and what was looked up."""

    def __init__(self, cached: dict[str, bytes] | None = None) -> None:
        self.ran: list[str] = []
        self.notified: list[str] = []
        self.cached = cached or {}

    def respond(self, call: Call, body: bytes | None = None) -> bytes:
        self.ran.append(call.method)
        return result_response(call.id, json.dumps(call.method).encode())

    def run_notification(self, call: Call) -> None:
        self.notified.append(call.method)

    def cached_result(self, call: Call, body: bytes | None = None) -> bytes | None:
        return self.cached.get(call.method)

    def answered(self, body: bytes) -> tuple[Call, Any, bytes] | None:
        return None


def body(*calls: Any) -> bytes:
    return json.dumps(calls[0] if len(calls) == 1 else list(calls)).encode()


def req(method: str, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": [], **extra}


def note(method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": []}


def slow_only(dispatcher: Any, call: Call) -> bool:
    return not call.method.startswith("slow_")


def test_cheap_calls_run_at_once_slow_ones_wait_for_the_host() -> None:
    recorder = Recorder(cached={"slow_cached": b'"hit"'})
    pipeline = Pipeline(on_caller=slow_only)
    exchange = pipeline.submit(recorder, body(req("slow_a", 1), req("cheap", 2),
                                              req("slow_cached", 3), note("slow_note")))
    assert exchange.what == "batch(4)"
    assert recorder.ran == ["cheap"]  # the slow call waits; the cached one is taken as is
    assert [c.method for c in exchange.pending_calls()] == ["slow_a", "slow_note"]
    exchange.run()
    assert recorder.ran == ["cheap", "slow_a"] and recorder.notified == ["slow_note"]
    answer = json.loads(exchange.answer() or b"")
    assert answer == [{"jsonrpc": "2.0", "id": 1, "result": "slow_a"},
                      {"jsonrpc": "2.0", "id": 2, "result": "cheap"},
                      {"jsonrpc": "2.0", "id": 3, "result": "hit"}]
    assert exchange.status == 200 and exchange.headers == ()


def test_a_large_cached_answer_is_kept_in_pieces_never_joined_unless_asked() -> None:
    big = b'"' + b"ab" * LARGE_ANSWER_BYTES + b'"'
    recorder = Recorder(cached={"slow_big": big, "slow_small": b'"hit"'})
    pipeline = Pipeline(Limits(max_response_bytes=4 * LARGE_ANSWER_BYTES), on_caller=slow_only)
    exchange = pipeline.submit(recorder, body(req("slow_big", 7)))
    parts = exchange.answer_parts()
    assert parts is not None and len(parts) == 3 and parts[1] is big  # the cached bytes
    assert b"".join(parts) == exchange.answer() == result_response(7, big)
    assert json.loads(exchange.answer() or b"")["result"] == big.decode().strip('"')
    small = pipeline.submit(recorder, body(req("slow_small", 8)))
    assert small.answer_parts() == (result_response(8, b'"hit"'),)
    batch = pipeline.submit(recorder, body(req("slow_big", 1), req("slow_small", 2)))
    assert batch.answer_parts() == (b"[" + result_response(1, big) + b","
                                    + result_response(2, b'"hit"') + b"]",)
    over = Pipeline(Limits(max_response_bytes=LARGE_ANSWER_BYTES), on_caller=slow_only)
    refused = json.loads(over.submit(recorder, body(req("slow_big", 9))).answer() or b"")
    assert refused["id"] == 9 and refused["error"]["code"] == -32003
    assert recorder.ran == []


def test_parse_errors_and_empty_batches_answer_at_once() -> None:
    recorder = Recorder()
    for raw, code in ((b"{nope", -32700), (b"[]", -32600)):
        exchange = Pipeline().submit(recorder, raw)
        assert not exchange.pending and exchange.what == "invalid"
        assert json.loads(exchange.answer() or b"") == {
            "jsonrpc": "2.0", "id": None,
            "error": {"code": code, "message": "parse error" if code == -32700 else "empty batch"}}
    assert recorder.ran == []


def test_limits_refuse_before_anything_runs() -> None:
    recorder = Recorder()
    pipeline = Pipeline(Limits(max_body_bytes=200, max_batch_calls=2))
    too_many = pipeline.submit(recorder, body(req("a", 1), req("b", 2), req("c", 3)))
    assert too_many.status == 413
    assert json.loads(too_many.answer() or b"")["error"]["message"] == (
        "batch too large: 3 calls, the limit is 2 per batch")
    too_big = pipeline.submit(recorder, body(req("a", "x" * 300)))
    assert too_big.status == 413 and b"the limit is 200 bytes" in (too_big.answer() or b"")
    assert recorder.ran == []


def test_a_refusal_answers_each_wanted_id_and_runs_nothing() -> None:
    recorder = Recorder()
    seen: list[Sequence[Any]] = []

    def refuse(calls: Sequence[Call | EthreadError]) -> Refused:
        seen.append(calls)
        return Refused(429, LimitExceeded("over"), ((b"retry-after", b"5"),))

    exchange = Pipeline().submit(recorder, body(req("a", 1), note("b"), 7, req("c", "z")),
                                 admit=refuse)
    assert len(seen[0]) == 4  # the hook sees every call, invalid ones included
    assert exchange.status == 429 and exchange.headers == ((b"retry-after", b"5"),)
    answer = json.loads(exchange.answer() or b"")
    assert [item["id"] for item in answer] == [1, None, "z"]
    assert {item["error"]["code"] for item in answer} == {-32005}
    assert recorder.ran == [] and recorder.notified == []
    single = Pipeline().submit(recorder, body(req("a", 9)), admit=refuse)
    assert json.loads(single.answer() or b"")["id"] == 9  # a refused call keeps its id


def test_host_methods_answer_and_notifications_get_no_answer() -> None:
    recorder = Recorder()
    calls: list[str] = []

    def subscribe(call: Call) -> bytes:
        calls.append(call.method)
        if call.params:
            raise InvalidParams("no options")
        return b'"0x1"'

    local = {"eth_subscribe": subscribe}
    answered = Pipeline().submit(recorder, body(req("eth_subscribe", 4)), local=local)
    assert json.loads(answered.answer() or b"") == {"jsonrpc": "2.0", "id": 4, "result": "0x1"}
    failed = Pipeline().submit(recorder, body(req("eth_subscribe", 5, params=[1])), local=local)
    assert json.loads(failed.answer() or b"")["error"]["code"] == -32602
    silent = Pipeline().submit(recorder, body(note("eth_subscribe")), local=local)
    assert silent.answer() is None
    assert calls == ["eth_subscribe"] * 3 and recorder.ran == []


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}',
    b'[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"x"},5]',
    b'{"jsonrpc":"2.0","method":"eth_blockNumber"}',
])
def test_handle_is_the_pipeline_with_everything_on_the_caller(
        rpc_compat_memory: ethread.MemoryBackend, raw: bytes) -> None:
    dispatcher = Dispatcher(rpc_compat_memory)
    exchange = Pipeline().submit(dispatcher, raw)
    assert not exchange.pending
    assert exchange.answer() == ethread.handle(rpc_compat_memory, raw)


def test_a_log_query_is_tried_on_the_loop_and_handed_back_past_its_budget(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    """eth_getLogs on a backend whose history is in memory runs on the caller under the
    budget; past it (here at once) it keeps no answer and runs again in full, with the same
    answer; an answer of more than MAX_LOGS_UNDER_BUDGET logs is handed back too."""
    from ethread.methods import logs
    from ethread.server.execution import Execution

    dispatcher = Dispatcher(rpc_compat_memory)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs",
                       "params": [{"fromBlock": "0x0", "toBlock": "latest"}]}).encode()
    expected = dispatcher.handle(body)
    assert expected is not None and json.loads(expected)["result"]
    pipeline = Pipeline(Limits(), lambda d, c: False)  # nothing runs at once, nothing cached
    _on_the_loop_then_handed_back(pipeline, rpc_compat_memory, body, expected, 1.0)
    found = len(json.loads(expected)["result"])
    small = logs.MAX_LOGS_UNDER_BUDGET
    try:
        logs.MAX_LOGS_UNDER_BUDGET = found - 1
        execution = Execution(loop_budget=1.0)
        exchange = pipeline.submit(Dispatcher(rpc_compat_memory), body)
        assert execution.try_on_loop(exchange) is False
        exchange.run()
        assert exchange.answer() == expected
        execution.close()
    finally:
        logs.MAX_LOGS_UNDER_BUDGET = small


def test_a_simulation_is_tried_on_the_loop_and_handed_back_past_its_budget(
        osaka_memory: ethread.MemoryBackend) -> None:
    """eth_simulateV1 runs on the caller under the budget, with the answer it has run in full;
    past the budget (here at once, before its first block) it keeps no answer and runs again
    in full, with the same answer; blocks without calls check the budget too."""

    simulation = {"blockStateCalls": [
        {"calls": [{"to": "0x" + "11" * 20, "data": "0x01"}]}, {}, {"calls": []}]}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_simulateV1",
                       "params": [simulation, "latest"]}).encode()
    expected = Dispatcher(osaka_memory).handle(body)
    assert expected is not None and len(json.loads(expected)["result"]) == 3
    pipeline = Pipeline(Limits(), lambda d, c: False)  # nothing runs at once, nothing cached
    _on_the_loop_then_handed_back(pipeline, osaka_memory, body, expected, 60.0)


def _on_the_loop_then_handed_back(pipeline: Pipeline, backend: ethread.MemoryBackend,
                                  body: bytes, expected: bytes, budget: float) -> None:
    """``body`` runs on the loop within ``budget`` with the ``expected`` answer; with no
    budget it is handed back keeping nothing, and runs again in full to the same answer."""
    from ethread.server.execution import Execution

    for loop_budget, taken in ((budget, True), (1e-9, False)):
        execution = Execution(loop_budget=loop_budget)
        exchange = pipeline.submit(Dispatcher(backend), body)
        assert exchange.pending
        assert execution.try_on_loop(exchange) is taken
        if not taken:
            assert exchange.pending, "the stopped call kept nothing"
            exchange.run()
        assert exchange.answer() == expected
        execution.close()


def test_a_simulation_without_calls_hands_back_past_its_hosts_budget(
        osaka_memory: ethread.MemoryBackend) -> None:
    """The budget is checked between blocks, not only in the EVM: empty blocks stop too."""
    from ethread.evm import time_limit

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_simulateV1",
                       "params": [{"blockStateCalls": [{}, {}]}, "latest"]}).encode()
    exchange = Pipeline(Limits(), lambda d, c: False).submit(Dispatcher(osaka_memory), body)
    with pytest.raises(time_limit.BudgetSpent):
        time_limit.run_under_budget(1e-9, exchange.run)
    assert exchange.pending
    exchange.run()
    assert len(json.loads(exchange.answer() or b"")["result"]) == 2


def test_a_body_answered_before_is_answered_again_and_charged_again(
        rpc_compat_memory: ethread.MemoryBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bytes of a single call are answered again without running or parsing them,
    but admitted (charged) as the call they hold, within the answer's bound, and only while
    the chain is at the generation they were answered at."""
    dispatcher = Dispatcher(rpc_compat_memory)
    admitted: list[list[str]] = []

    def admit(calls: Sequence[Call | EthreadError]) -> Refused | None:
        admitted.append([c.method for c in calls if isinstance(c, Call)])
        return None

    def refuse(calls: Sequence[Call | EthreadError]) -> Refused:
        return Refused(429, LimitExceeded("over"), ((b"retry-after", b"5"),))

    asked = body(req("eth_getBlockByNumber", 4, params=["0x2", True]))
    first = Pipeline().submit(dispatcher, asked, admit).answer()
    assert first is not None and json.loads(first)["result"]["number"] == "0x2"
    assert dispatcher.answered(asked) is None  # kept when the same body comes a second time
    assert Pipeline().submit(dispatcher, asked, admit).answer() == first
    assert dispatcher.answered(asked) == (Call("eth_getBlockByNumber", ["0x2", True], 4), 4, first)

    def never(*args: Any) -> bytes:
        raise AssertionError("answered again: nothing runs")

    monkeypatch.setattr(dispatcher, "respond", never)
    again = Pipeline().submit(dispatcher, asked, admit)
    assert again.answer() == first and again.what == "eth_getBlockByNumber"
    assert admitted == [["eth_getBlockByNumber"]] * 3
    refused = Pipeline().submit(dispatcher, asked, refuse)
    assert refused.status == 429 and refused.headers == ((b"retry-after", b"5"),)
    assert json.loads(refused.answer() or b"")["id"] == 4  # the refused call keeps its id
    monkeypatch.undo()
    bounded = Pipeline(Limits(max_response_bytes=len(first) - 1)).submit(dispatcher, asked)
    assert json.loads(bounded.answer() or b"")["error"]["code"] == -32003
    monkeypatch.setattr(rpc_compat_memory, "generation", lambda: -1)  # the chain moved on
    assert dispatcher.answered(asked) is None


@pytest.mark.parametrize("raw", [
    body(req("eth_chainId", 1), req("eth_chainId", 2)),  # a batch
    body(note("eth_blockNumber")),  # a notification
    body(req("eth_getBlockByNumber", 1, params=["zz", False])),  # an error
    body(req("eth_gasPrice", 1)),  # a method whose answers are not cached
])
def test_only_answers_of_single_cacheable_calls_are_kept_by_body(
        rpc_compat_memory: ethread.MemoryBackend, raw: bytes) -> None:
    dispatcher = Dispatcher(rpc_compat_memory)
    for _ in range(2):
        Pipeline().submit(dispatcher, raw)
    assert dispatcher.answered(raw) is None


def test_answers_by_body_are_bounded_in_entries_and_bytes() -> None:
    """An answer is kept when its body comes a second time; full in entries or bytes, the
    oldest entries go; an answer of 64 KiB or more is never kept (it is written in pieces
    from the answer cache instead), nor a body over 16 KiB."""
    from ethread.codec.response_cache import BodyAnswers

    call = Call("eth_chainId", [], 1)
    table = BodyAnswers(max_entries=3, max_bytes=10_000)

    def twice(body: bytes, answer: bytes) -> None:
        table.put(7, body, call, answer)
        table.put(7, body, call, answer)

    table.put(7, b"once", call, b"answer")
    assert len(table) == 0 and table.get(7, b"once") is None
    for n in range(3):
        twice(b"body %d" % n, b"answer")
    assert len(table) == 3 and table.get(7, b"body 0") == (call, 1, b"answer")
    assert table.get(8, b"body 0") is None  # another generation of the chain
    twice(b"body 3", b"answer")  # the oldest, body 0, goes
    assert len(table) == 3 and table.get(7, b"body 0") is None
    assert table.get(7, b"body 1") is not None and table.get(7, b"body 3") == (call, 1, b"answer")
    twice(b"big", b"x" * 9_000)  # past the bytes with what is held: the oldest go
    assert len(table) == 1 and table.get(7, b"big") is not None
    twice(b"next", b"answer")  # the big one holds the bytes: it goes in turn
    assert len(table) == 1 and table.get(7, b"next") is not None
    twice(b"huge", b"x" * BodyAnswers.MAX_ANSWER_BYTES)
    assert table.get(7, b"huge") is None
    long_body = b" " * (BodyAnswers.MAX_BODY_BYTES + 1)
    twice(long_body, b"answer")
    assert table.get(7, long_body) is None


ID_SHAPES = {
    "id after jsonrpc": '{"jsonrpc":"2.0","id":%s,"method":"eth_getBlockByNumber",'
                        '"params":["0x1",false]}',
    "web3.py": '{"jsonrpc": "2.0", "method": "eth_getBlockByNumber", "params": ["0x1", false], '
               '"id": %s}',
    "ethers": '{"method":"eth_getBlockByNumber","params":["0x1",false],"id":%s,"jsonrpc":"2.0"}',
    "spaces around the colon": '{"jsonrpc":"2.0","id" :  %s ,"method":"eth_getBlockByNumber",'
                               '"params":["0x1",false]}',
    "escaped key": '{"jsonrpc":"2.0","\\u0069d":%s,"method":"eth_getBlockByNumber",'
                   '"params":["0x1",false]}',
    "id named twice": '{"jsonrpc":"2.0","id":%s,"x":{"id":1},"method":"eth_getBlockByNumber",'
                      '"params":["0x1",false]}',
    "id given twice": '{"jsonrpc":"2.0","id":1,"id":%s,"method":"eth_getBlockByNumber",'
                      '"params":["0x1",false]}',
}


@pytest.mark.parametrize("shape", list(ID_SHAPES))
@pytest.mark.parametrize("new_id", ["2", "0", "987654321012345", "1234567890123456", '"two"',
                                    "-3", "2.5", "null"])
def test_a_body_answered_again_under_another_id_answers_as_a_fresh_dispatcher(
        rpc_compat_memory: ethread.MemoryBackend, shape: str, new_id: str) -> None:
    """A body kept by its bytes with the id taken out answers a body that differs only in the
    id exactly as a dispatcher that never saw either: under the new id, whatever the shape of
    the body, and only where the id cannot be mistaken (a plain integer, no escapes, named
    once); every other body goes the whole way."""
    dispatcher = Dispatcher(rpc_compat_memory)
    first = (ID_SHAPES[shape] % "1").encode()
    for _ in range(2):
        Pipeline().submit(dispatcher, first)
    later = (ID_SHAPES[shape] % new_id).encode()
    again = Pipeline().submit(dispatcher, later).answer()
    fresh = Pipeline().submit(Dispatcher(rpc_compat_memory), later).answer()
    assert again == fresh
    plain = shape not in ("escaped key", "id named twice", "id given twice")
    taken = new_id.isdigit() and len(new_id) <= 15 and plain
    assert (dispatcher.answered(later) is not None) is taken


def test_a_refusal_of_a_body_answered_under_another_id_names_the_new_id(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    dispatcher = Dispatcher(rpc_compat_memory)
    shape = ID_SHAPES["web3.py"]
    for _ in range(2):
        Pipeline().submit(dispatcher, (shape % "1").encode())
    later = (shape % "77").encode()
    assert dispatcher.answered(later) is not None

    def refuse(calls: Sequence[Call | EthreadError]) -> Refused:
        return Refused(429, LimitExceeded("over"))

    refused = Pipeline().submit(dispatcher, later, refuse)
    answer = json.loads(refused.answer() or b"")
    assert refused.status == 429 and answer["id"] == 77 and answer["error"]["code"] == -32005


BLOCK_ONE = (b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber",'
             b'"params":["0x1",true]}')


@pytest.fixture(scope="module")
def demo() -> Any:
    return shared_demo().chain.backend


def test_a_batch_answer_stops_at_the_size_bound(demo: Any) -> None:
    dispatcher = Dispatcher(demo)
    block = json.loads(ethread.handle(demo, BLOCK_ONE) or b"")
    one = len(json.dumps(block["result"]))
    pipeline = Pipeline(Limits(max_response_bytes=one * 3 + 100))
    calls = [{"jsonrpc": "2.0", "id": i, "method": "eth_getBlockByNumber",
              "params": ["0x1", True]} for i in range(10)]
    exchange = pipeline.submit(dispatcher, json.dumps(calls).encode())
    exchange.run()
    answers = json.loads(exchange.answer() or b"")
    assert [a["id"] for a in answers] == list(range(10))
    results = [a for a in answers if "result" in a]
    refused = [a for a in answers if "error" in a]
    assert 1 <= len(results) <= 3 and len(results) + len(refused) == 10
    assert all(a["result"] == block["result"] for a in results)
    assert {(a["error"]["code"], a["error"]["message"]) for a in refused} == {
        (-32003, "response too large")}
    # answers past the bound are never computed: the ones refused come after the ones answered
    assert [a["id"] for a in results] == list(range(len(results)))


def test_a_single_answer_over_the_bound_is_refused(demo: Any) -> None:
    pipeline = Pipeline(Limits(max_response_bytes=200))
    exchange = pipeline.submit(Dispatcher(demo), BLOCK_ONE.replace(b'"id":1', b'"id":"a"'))
    exchange.run()
    answer = json.loads(exchange.answer() or b"")
    assert answer == {"jsonrpc": "2.0", "id": "a",
                      "error": {"code": -32003, "message": "response too large"}}
