"""The service under hostile clients (issue 10), against a real server: bounded answers over
HTTP and WebSocket, eth_call time limits and cancellation, slow clients, a client that stops
reading, and a shutdown with work in flight."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.support.paths import REPO
from tests.support.server_harness import (
    KEY,
    ServeProcess,
    call,
    post,
    serve_in_thread,
    shared_demo,
    url_of,
    ws_url_of,
)

ENDLESS = {"data": "0x5b600056", "gas": "0x7fffffffffffffff"}
RETURN_ONE = {"data": "0x600160005260206000f3"}
ONE = "0x" + "00" * 31 + "01"


def nested(depth: int) -> Any:
    value: Any = "0x1"
    for _ in range(depth):
        value = [value]
    return value


def wait_until(condition: Any, timeout: float = 30.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(scope="module", params=[True, False], ids=["lean", "asgi"])
def server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The server on each HTTP path: the lean one (the default) and uvicorn's ASGI one."""
    limits = {"max_response_bytes": 60_000, "call_timeout_seconds": 3.0,
              "ws_max_unread_bytes": 300_000, "header_timeout_seconds": 0.5,
              "body_timeout_seconds": 0.5}
    with serve_in_thread(shared_demo().chain.backend, limits=limits,
                         lean_http=request.param) as thread:
        yield thread


def full_blocks(count: int) -> list[dict[str, Any]]:
    return [call("eth_getBlockByNumber", [hex(1 + i % 40), True], i) for i in range(count)]


def check_bounded(answers: list[dict[str, Any]], count: int) -> None:
    assert [a["id"] for a in answers] == list(range(count))
    kept = [a for a in answers if "result" in a]
    refused = [a for a in answers if "error" in a]
    assert kept and refused
    assert {(a["error"]["code"], a["error"]["message"]) for a in refused} == {
        (-32003, "response too large")}
    assert len(json.dumps(kept, separators=(",", ":"))) <= 60_000


def test_a_batch_answer_is_bounded_over_http_and_websocket(server: Any) -> None:
    status, headers, answers = post(url_of(server), full_blocks(300))
    assert status == 200 and headers["content-type"] == "application/json"
    check_bounded(answers, 300)
    with connect(ws_url_of(server)) as ws:
        ws.send(json.dumps(full_blocks(300)))
        check_bounded(json.loads(ws.recv(timeout=30)), 300)


def test_deep_params_answer_invalid_params_on_every_path(server: Any) -> None:
    for depth in (254, 600, 1_022):
        request = call("eth_getBalance", [nested(depth), "latest"], 5)
        status, headers, answer = post(url_of(server), request)
        assert status == 200 and headers["content-type"] == "application/json"
        assert answer["id"] == 5 and answer["error"]["code"] == -32602
        with connect(ws_url_of(server)) as ws:
            ws.send(json.dumps(request))
            answer = json.loads(ws.recv(timeout=30))
            assert answer["id"] == 5 and answer["error"]["code"] == -32602


def test_a_huge_id_is_echoed_exactly(server: Any) -> None:
    raw = b'{"jsonrpc":"2.0","id":1' + b"0" * 100 + b',"method":"eth_chainId"}'
    status, _, answer = post(url_of(server), None, raw=raw)
    assert status == 200 and answer["id"] == 10**100


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


def raw_http(port: int, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(payload)
    return sock


def request_bytes(body: bytes, length: int | None = None) -> bytes:
    return (f"POST /v3/{KEY} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


def test_a_client_that_disconnects_stops_its_call(server: Any) -> None:
    execution = server.prepared.service.execution
    with serve_in_thread(shared_demo().chain.backend,
                         limits={"call_timeout_seconds": 0}) as untimed:
        execution = untimed.prepared.service.execution
        sock = raw_http(untimed.port, request_bytes(json.dumps(
            call("eth_call", [ENDLESS, "latest"])).encode()))
        assert wait_until(lambda: len(execution.running) == 1)
        sock.close()
        assert wait_until(lambda: not execution.running)
        with connect(ws_url_of(untimed)) as ws:
            ws.send(json.dumps(call("eth_call", [ENDLESS, "latest"])))
            assert wait_until(lambda: len(execution.running) == 1)
        assert wait_until(lambda: not execution.running)
        # the pools are free again: a quick call answers
        assert post(url_of(untimed), call("eth_call", [RETURN_ONE, "latest"]))[2]["result"] == ONE


def test_slow_headers_and_bodies_are_cut_off(server: Any) -> None:
    slow_headers = raw_http(server.port, b"POST /v3/" + KEY.encode() + b" HTTP/1.1\r\nHost: x\r\n")
    slow_headers.settimeout(30)
    assert slow_headers.recv(1024) == b""  # closed by the server, nothing answered
    slow_headers.close()
    slow_body = raw_http(server.port, request_bytes(b'{"jsonrpc"', length=200))
    slow_body.settimeout(30)
    answer = slow_body.recv(65536)
    slow_body.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["error"]["message"] == "request body not received in time: the limit is 0.5 s"
    huge = raw_http(server.port, b"POST /v3/" + KEY.encode() + b" HTTP/1.1\r\n"
                    + b"X-Filler: " + b"a" * 70_000 + b"\r\n\r\n")
    huge.settimeout(30)
    assert huge.recv(1024).startswith(b"HTTP/1.1 400")
    huge.close()


def test_a_websocket_client_that_stops_reading_is_disconnected(server: Any) -> None:
    ws = connect(ws_url_of(server), max_queue=1)
    ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    big = json.dumps(full_blocks(40))
    sent = 0
    try:
        for _ in range(400):
            ws.send(big)
            sent += 1
    except (ConnectionClosed, OSError):
        pass
    received = 0
    try:
        while True:
            ws.recv(timeout=30)
            received += 1
    except ConnectionClosed as exc:
        closed = exc
    ws.close()
    assert received < sent
    print(f"a client that stopped reading: {sent} batches sent, {received} answers read, "
          f"closed with {closed.rcvd.code if closed.rcvd else 'no close frame'}")


def test_sigterm_answers_the_work_in_flight_and_exits(tmp_path: Any) -> None:
    server = ServeProcess(["--call-timeout", "0", "--ledger", ":memory:", "--no-access-log"],
                          cwd=REPO)
    url = f"http://127.0.0.1:{server.port}/v3/ethread-demo-key"
    with ThreadPoolExecutor(2) as pool:
        pending = [pool.submit(post, url, call("eth_call", [ENDLESS, "latest"], i), timeout=60)
                   for i in range(2)]
        time.sleep(0.5)
        started = time.monotonic()
        status, stderr = server.stop()
        stopped = time.monotonic() - started
        answers = [p.result() for p in pending]
    assert status == 0, stderr[-2000:]
    for answer_status, headers, answer in answers:
        assert answer_status == 200 and headers["content-type"] == "application/json"
        assert answer["error"] == {"code": -32000,
                                   "message": "request cancelled: the server is shutting down"}
    print(f"SIGTERM with two endless calls in flight: stopped in {stopped:.2f} s")
