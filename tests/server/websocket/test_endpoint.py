"""The WebSocket endpoint: handshake refusal, the same JSON-RPC messages and credits as HTTP,
subscriptions to new heads and filtered logs, and the message size limit."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from ethread.devchain.demo import TICK_TOPIC
from ethread.server.config import KeyConfig
from tests.support.server_harness import (
    BOUNDED_LIMITS,
    KEY,
    call,
    demo_network,
    serve_in_thread,
    shared_demo,
    wait_until,
    ws_url_of,
)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    keys = (KeyConfig(key=KEY), KeyConfig(key="poor-key-000", daily_credits=100))
    with serve_in_thread(networks=[demo_network(block_time=0.2)], keys=keys,
                         limits={"max_ws_message_bytes": 4096}) as thread:
        yield thread


def _ask(ws: Any, message: Any) -> Any:
    """Send ``message`` and return its answer, passing over subscription notifications (the
    demo miner may seal a block between a subscribe and the next request)."""
    ws.send(json.dumps(message))
    while True:
        answer = json.loads(ws.recv(timeout=30))
        if isinstance(answer, list) or answer.get("method") != "eth_subscription":
            return answer


def test_unknown_key_is_refused_at_the_handshake(server: Any,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        with pytest.raises(InvalidStatus) as info:
            connect(ws_url_of(server, "nope-nope"), open_timeout=10)
        assert info.value.response.status_code == 401
        assert json.loads(info.value.response.body)["error"]["code"] == -32001
        with pytest.raises(InvalidStatus) as info:
            connect(ws_url_of(server).replace("/ws/v3/", "/ws/v9/"), open_timeout=10)
        assert info.value.response.status_code == 404
    # a refusal is an answer, not a server fault: nothing at ERROR for an operator's alerts
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("WebSocket" in r.getMessage() and "401" in r.getMessage()
               for r in caplog.records)  # uvicorn's own INFO line for the refusal is kept


def test_calls_batches_and_credits(server: Any) -> None:
    with connect(ws_url_of(server), open_timeout=10) as ws:
        assert _ask(ws, call("eth_chainId"))["result"] == "0x539"
        answers = _ask(ws, [call("eth_getBlockByNumber", ["0x1", False], 1), call("x", [], 2)])
        assert answers[0]["result"]["number"] == "0x1" and answers[1]["error"]["code"] == -32601
        assert _ask(ws, call("eth_getBlockByNumber", ["0x1"]))["error"]["code"] == -32602
    with connect(ws_url_of(server, "poor-key-000"), open_timeout=10) as ws:
        assert "result" in _ask(ws, call("eth_getBlockByNumber", ["0x1", False]))
        refused = _ask(ws, call("eth_getBlockByNumber", ["0x2", False], 7))
        assert refused["error"]["code"] == -32005 and "daily credit" in refused["error"]["message"]


def test_new_heads_and_filtered_logs(server: Any) -> None:
    demo = shared_demo()
    emitter = "0x" + demo.log_emitter.hex()
    with connect(ws_url_of(server), open_timeout=10) as ws:
        heads = _ask(ws, call("eth_subscribe", ["newHeads"], 1))["result"]
        ticks = _ask(ws, call("eth_subscribe", ["logs", {
            "address": emitter, "topics": ["0x" + TICK_TOPIC.hex()]}], 2))["result"]
        other = _ask(ws, call("eth_subscribe", ["logs", {"address": "0x" + "11" * 20}], 3))["result"]
        got: dict[str, list[Any]] = {heads: [], ticks: [], other: []}
        while len(got[heads]) < 2 or len(got[ticks]) < 2:
            message = json.loads(ws.recv(timeout=30))
            assert message["method"] == "eth_subscription"
            got[message["params"]["subscription"]].append(message["params"]["result"])
        assert got[other] == []
        first, second = got[heads][:2]
        assert int(second["number"], 16) == int(first["number"], 16) + 1
        assert second["parentHash"] == first["hash"]
        log = got[ticks][0]
        assert log["address"] == emitter and log["removed"] is False
        assert log["topics"][0] == "0x" + TICK_TOPIC.hex()
        ws.send(json.dumps(call("eth_unsubscribe", [heads], 9)))
        while True:  # notifications already queued may come first
            message = json.loads(ws.recv(timeout=30))
            if message.get("id") == 9:
                assert message["result"] is True
                break
        assert _ask(ws, call("eth_unsubscribe", [heads], 10))["result"] is False


def test_bad_subscriptions(server: Any) -> None:
    with connect(ws_url_of(server), open_timeout=10) as ws:
        assert _ask(ws, call("eth_subscribe", ["pendingStuff"]))["error"]["code"] == -32602
        assert _ask(ws, call("eth_subscribe", ["logs", {"address": "0x12"}]))["error"]["code"] \
            == -32602


def test_a_message_over_the_limit_closes_with_1009(server: Any) -> None:
    with connect(ws_url_of(server), open_timeout=10) as ws:
        ws.send(json.dumps(call("eth_chainId", ["x" * 5000])))
        with pytest.raises(ConnectionClosed) as info:
            ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009


def test_a_message_sent_again_is_answered_again_but_never_a_subscription(server: Any) -> None:
    """The same bytes of a read are answered the same again (from the answers kept by body);
    the same eth_subscribe sent twice makes two subscriptions, since the WebSocket answers it
    itself and nothing it answers is kept."""
    with connect(ws_url_of(server), open_timeout=10) as ws:
        block = call("eth_getBlockByNumber", ["0x1", False], 3)
        first, again = _ask(ws, block), _ask(ws, block)
        assert first == again and first["result"]["number"] == "0x1"
        subscribe = call("eth_subscribe", ["newHeads"], 4)
        one, two = _ask(ws, subscribe)["result"], _ask(ws, subscribe)["result"]
        assert one != two
        for sub in (one, two):
            assert _ask(ws, call("eth_unsubscribe", [sub], 5))["result"] is True


@pytest.fixture(scope="module", params=[True, False], ids=["lean", "asgi"])
def bounded_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A server with small answer, time and unread-bytes bounds, on each HTTP path: the lean one
    (the default) and uvicorn's ASGI one."""
    with serve_in_thread(shared_demo().chain.backend, limits=BOUNDED_LIMITS,
                         lean_http=request.param) as thread:
        yield thread


def full_blocks(count: int) -> list[dict[str, Any]]:
    return [call("eth_getBlockByNumber", [hex(1 + i % 40), True], i) for i in range(count)]


def test_a_websocket_client_that_stops_reading_is_disconnected(bounded_server: Any) -> None:
    ws = connect(ws_url_of(bounded_server), max_queue=1)
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


# -- issue 38: revocation ends everything; per-key bounds -------------------------------------------

def test_a_revoked_keys_websockets_close_and_their_notifications_stop() -> None:
    """Calls of a revoked key were refused at once, but its subscriptions kept delivering for
    9 s: now its sessions end (close code 1008, the reason said) within one key-store poll."""
    import time

    from ethread.server.keys.keystore import POLL_SECONDS
    from ethread.server.keys.manage import issue, revoke

    with serve_in_thread(networks=[demo_network(block_time=0.1)]) as thread:
        service = thread.prepared.service
        key, record = issue(service.key_sync.store, {"label": "to revoke"})
        service.key_sync.load()
        with connect(ws_url_of(thread, key), open_timeout=10) as ws, \
                connect(ws_url_of(thread, key), open_timeout=10) as other:
            assert "result" in _ask(ws, call("eth_subscribe", ["newHeads"]))
            assert "result" in _ask(other, call("eth_subscribe", ["logs", {}]))
            assert json.loads(ws.recv(timeout=10))["method"] == "eth_subscription"
            revoke(service.key_sync.store, record.prefix)
            revoked_at = time.monotonic()
            for session in (ws, other):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:  # notifications already sent may come first
                        assert json.loads(session.recv(timeout=10))["method"] == \
                            "eth_subscription"
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1008
                assert closed.value.rcvd.reason == "the API key was revoked"
            assert time.monotonic() - revoked_at < 2 * POLL_SECONDS + 1.0
        assert wait_until(lambda: not service.sessions.get(record.key_id), 5)


def test_a_key_may_hold_only_so_many_connections_and_subscriptions() -> None:
    limits = {"ws_connections_per_key": 2, "ws_subscriptions_per_key": 3}
    with serve_in_thread(networks=[demo_network()], limits=limits) as thread:
        with connect(ws_url_of(thread), open_timeout=10) as first, \
                connect(ws_url_of(thread), open_timeout=10) as second:
            with pytest.raises(InvalidStatus) as refused:
                connect(ws_url_of(thread), open_timeout=10)
            assert refused.value.response.status_code == 429
            error = json.loads(refused.value.response.body)["error"]
            assert error["code"] == -32005
            assert error["message"] == ("too many WebSocket connections for this API key: the "
                                        "limit is 2")
            for ws in (first, second, first):
                assert "result" in _ask(ws, call("eth_subscribe", ["newHeads"]))
            over = _ask(second, call("eth_subscribe", ["newHeads"]))
            assert over["error"] == {"code": -32005, "message": "too many subscriptions for "
                                     "this API key: the limit is 3 over all its connections"}
        # closed connections give their places back
        with connect(ws_url_of(thread), open_timeout=10) as again:
            assert "result" in _ask(again, call("eth_subscribe", ["newHeads"]))
