"""Where the server runs blocking work (``ethread.server.execution``): a call tried on the event
loop within its budget and one past it moved to the slow pool; four endless calls at one block
do not delay a quick one; a client that disconnects, over HTTP or WebSocket, stops its call
and frees the pools."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from websockets.sync.client import connect

from ethread.codec.pipeline import Pipeline
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher
from tests.support.server_harness import (
    BOUNDED_LIMITS,
    ENDLESS,
    ONE,
    RETURN_ONE,
    call,
    call_body,
    post,
    raw_http,
    request_bytes,
    serve_in_thread,
    shared_demo,
    url_of,
    wait_until,
    ws_url_of,
)


@pytest.fixture(scope="module", params=[True, False], ids=["lean", "asgi"])
def server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The server on each HTTP path: the lean one (the default) and uvicorn's ASGI one."""
    # (one key sends every call here: its limit of slow requests in flight is lifted, so that
    # the pools themselves are what is tested; tests/server/test_fairness.py tests the limit)
    with serve_in_thread(shared_demo().chain.backend,
                         limits={**BOUNDED_LIMITS, "slow_requests_per_key": 0},
                         lean_http=request.param) as thread:
        yield thread


def test_four_endless_calls_do_not_delay_a_quick_one_at_the_same_block(server: Any) -> None:
    order: list[str] = []
    lock = threading.Lock()

    def ask(name: str, request: dict[str, Any]) -> dict[str, Any]:
        _, _, answer = post(url_of(server), request, timeout=60)
        with lock:
            order.append(name)
        return answer

    with ThreadPoolExecutor(8) as pool:
        loops = [pool.submit(ask, f"loop{i}", call("eth_call", [ENDLESS, "latest"]))
                 for i in range(4)]
        time.sleep(0.3)  # the loops are running (ordering holds without this too)
        started = time.monotonic()
        quick = pool.submit(ask, "quick", call("eth_call", [RETURN_ONE, "latest"]))
        assert quick.result()["result"] == ONE
        latency = time.monotonic() - started
        answers = [loop.result() for loop in loops]
    assert order[0] == "quick"
    assert all(a["error"] == {"code": -32000, "message": "execution aborted (timeout = 3s)"}
               for a in answers)
    print(f"quick eth_call beside four endless loops at latest: {latency * 1000:.0f} ms")


def test_a_client_that_disconnects_stops_its_call(server: Any) -> None:
    execution = server.prepared.service.execution
    with serve_in_thread(shared_demo().chain.backend,
                         limits={"call_timeout_seconds": 0}) as untimed:
        execution = untimed.prepared.service.execution
        sock = raw_http(untimed.port, request_bytes(call_body("eth_call", [ENDLESS, "latest"])))
        assert wait_until(lambda: len(execution.running) == 1)
        # a reset: a plain close looks like a half-close, whose client still reads its answer
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        assert wait_until(lambda: not execution.running)
        with connect(ws_url_of(untimed)) as ws:
            ws.send(json.dumps(call("eth_call", [ENDLESS, "latest"])))
            assert wait_until(lambda: len(execution.running) == 1)
        assert wait_until(lambda: not execution.running)
        # the pools are free again: a quick call answers
        assert post(url_of(untimed), call("eth_call", [RETURN_ONE, "latest"]))[2]["result"] == ONE


@pytest.fixture(scope="module")
def backend() -> Any:
    return shared_demo().chain.backend


def test_the_server_tries_a_call_on_its_loop_and_moves_a_long_one_to_the_slow_pool(
        backend: Any) -> None:
    import asyncio

    from ethread.server.execution import Execution

    dispatcher = Dispatcher(backend, Context(call_timeout=0.3))
    pipeline = Pipeline(on_caller=lambda d, c: False)
    quick = pipeline.submit(dispatcher, call_body("eth_call", [{"data": "0x600160005260206000f3"},
                                                          "latest"]))
    endless = pipeline.submit(dispatcher, call_body("eth_call", [ENDLESS, "latest"]))
    # budgets far from what the calls take, so that no machine's speed changes the path
    roomy = Execution(threads=1, slow_threads=1, loop_budget=60.0)
    tight = Execution(threads=1, slow_threads=1, loop_budget=0.01)
    try:
        asyncio.run(roomy.finish(quick))
        assert json.loads(quick.answer() or b"")["result"] == "0x" + "00" * 31 + "01"
        assert not roomy.slow_pool._threads  # answered on the loop: no thread started
        asyncio.run(tight.finish(endless))
        assert json.loads(endless.answer() or b"")["error"] == {
            "code": -32000, "message": "execution aborted (timeout = 300ms)"}
        assert len(tight.slow_pool._threads) == 1  # past the budget: run in the pool
    finally:
        roomy.close()
        tight.close()
