"""Stopping an execution while it runs (``ethread.evm.time_limit``): an endless eth_call,
eth_estimateGas or eth_createAccessList stops at the time limit with geth's error, a
cancelled request stops its work, a host's budget hands a long call back with nothing left
behind, and slow calls at one block do not hold back a quick one at the same block."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

import ethread
from ethread.codec.pipeline import Pipeline
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher
from tests.support.server_harness import ENDLESS, call, call_body, shared_demo


@pytest.fixture(scope="module")
def backend() -> Any:
    return shared_demo().chain.backend


def test_an_endless_call_stops_at_the_time_limit_with_geths_error(backend: Any) -> None:
    dispatcher = Dispatcher(backend, Context(call_timeout=0.3))
    started = time.monotonic()
    answer = json.loads(dispatcher.handle(call_body("eth_call", [ENDLESS, "latest"])) or b"")
    elapsed = time.monotonic() - started
    assert answer["error"] == {"code": -32000, "message": "execution aborted (timeout = 300ms)"}
    print(f"endless eth_call stopped after {elapsed:.2f} s (limit 0.3 s)")


@pytest.mark.parametrize("method", ["eth_estimateGas", "eth_createAccessList"])
def test_estimation_and_access_lists_stop_at_the_time_limit(backend: Any, method: str) -> None:
    dispatcher = Dispatcher(backend, Context(call_timeout=0.5))
    rich = "0x" + shared_demo().chain.accounts[1].address.hex()
    loop = {"from": rich, "data": ENDLESS["data"], "gas": hex(30_000_000)}
    answer = json.loads(dispatcher.handle(call_body(method, [loop, "latest"])) or b"")
    assert answer["error"] == {"code": -32000, "message": "execution aborted (timeout = 500ms)"}


def test_the_library_default_is_geths_five_seconds(backend: Any) -> None:
    assert Context().call_timeout == 5.0
    answer = json.loads(ethread.handle(backend, call_body("eth_call", [
        {"data": "0x5b600056", "gas": "0x100000"}, "latest"])) or b"")
    assert answer["error"]["message"] == "out of gas"  # a bounded loop still ends as before


def test_a_cancelled_request_stops_its_call(backend: Any) -> None:
    dispatcher = Dispatcher(backend, Context(call_timeout=None))
    exchange = Pipeline(on_caller=lambda d, c: False).submit(
        dispatcher, json.dumps([call("eth_call", [ENDLESS, "latest"], i) for i in range(3)]).encode())
    worker = threading.Thread(target=exchange.run)
    worker.start()
    exchange.cancel()
    worker.join(60)
    assert not worker.is_alive()
    answers = json.loads(exchange.answer() or b"")
    assert [a["error"]["message"] for a in answers] == [
        "request cancelled: the client disconnected"] * 3


def test_slow_calls_at_one_block_do_not_hold_back_a_quick_one(backend: Any) -> None:
    dispatcher = Dispatcher(backend, Context(call_timeout=3.0))
    answered: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()

    def run(name: str, request: bytes) -> None:
        answer = json.loads(dispatcher.handle(request) or b"")
        with lock:
            answered.append((name, answer))

    loops = [threading.Thread(target=run, args=(f"loop{i}", call_body("eth_call", [ENDLESS, "latest"])))
             for i in range(4)]
    for thread in loops:
        thread.start()
    time.sleep(0.2)  # let the loops take their states (ordering holds without it too)
    started = time.monotonic()
    quick = threading.Thread(target=run, args=("quick", call_body("eth_call", [
        {"data": "0x600160005260206000f3"}, "latest"])))
    quick.start()
    quick.join(60)
    latency = time.monotonic() - started
    for thread in loops:
        thread.join(60)
    names = [name for name, _ in answered]
    assert names[0] == "quick", names
    assert answered[0][1]["result"] == "0x" + "00" * 31 + "01"
    assert all(a["error"]["message"] == "execution aborted (timeout = 3s)"
               for _, a in answered[1:])
    print(f"quick eth_call beside four endless loops at the same block: {latency * 1000:.0f} ms")


def test_a_call_past_its_hosts_budget_hands_back_with_nothing_left_behind(backend: Any) -> None:
    """Under :func:`time_limit.budget` a long call stops with BudgetSpent (not an answer), and
    the state it ran on serves the next call as before."""
    from ethread.evm import time_limit

    dispatcher = Dispatcher(backend, Context(call_timeout=5.0))
    with pytest.raises(time_limit.BudgetSpent), time_limit.budget(0.01):
        dispatcher.handle(call_body("eth_call", [ENDLESS, "latest"]))
    with time_limit.budget(5.0):
        answer = json.loads(dispatcher.handle(call_body("eth_call", [
            {"data": "0x600160005260206000f3"}, "latest"])) or b"")
    assert answer["result"] == "0x" + "00" * 31 + "01"
