"""The service's rule "never charge for an answer not sent" where a charge was already taken:
a request admitted (and charged) whose answer cannot be written gets its credits back
(:meth:`ethread.server.service.Service.refund`, :meth:`Ledger.refund` on every engine).

The server tests run a call that never ends in the pool (no call time limit), read the
ledger while it runs, let the client leave, and read the ledger again: on the lean HTTP path,
on uvicorn's ASGI path and over WebSocket."""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import connect

from ethread.server.billing.credits import Billing, cost_of, open_ledger
from ethread.server.billing.ledger import Ledger
from ethread.server.billing.ledger_mapped import MappedLedger
from ethread.server.billing.ledger_redis import RedisLedger
from tests.support.billing import BLOCK_COST, KEY_ID
from tests.support.server_harness import (
    ENDLESS,
    KEY,
    call,
    post,
    raw_http,
    request_bytes,
    serve_in_thread,
    shared_demo,
    url_of,
    wait_until,
    ws_url_of,
)

CALL_COST = cost_of("eth_call")


# -- the ledgers ---------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite3", "ledger", "redis"])
def ledger(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Ledger]:
    """Each engine: a SQLite file, a memory-mapped file, a real Redis."""
    if request.param == "redis":
        request.applymarker(pytest.mark.redis)
        opened: Ledger = RedisLedger(request.getfixturevalue("redis_url"))
    else:
        opened = open_ledger(str(tmp_path / f"credits.{request.param}"))
    try:
        yield opened
    finally:
        opened.close()


def test_a_refund_gives_back_todays_usage_never_below_zero(ledger: Ledger) -> None:
    for _ in range(3):
        assert ledger.charge(KEY_ID, 10_000, None, BLOCK_COST) is None
    ledger.refund(KEY_ID, BLOCK_COST)
    assert ledger.used(KEY_ID) == 2 * BLOCK_COST
    ledger.refund(KEY_ID, 10 * BLOCK_COST)
    assert ledger.used(KEY_ID) == 0
    ledger.refund("never-charged", BLOCK_COST)  # nothing to give back: nothing happens
    assert ledger.used("never-charged") == 0
    # what was given back can be spent again, up to the limit and no further
    assert ledger.charge(KEY_ID, 2 * BLOCK_COST, None, 2 * BLOCK_COST) is None
    assert ledger.charge(KEY_ID, 2 * BLOCK_COST, None, BLOCK_COST) is not None


def test_a_refund_of_yesterday_leaves_today_alone(tmp_path: Any) -> None:
    now = [86_400.0 * 20_000 + 3_600]
    ledger = MappedLedger(str(tmp_path / "credits.ledger"), clock=lambda: now[0])
    try:
        assert ledger.charge(KEY_ID, 10_000, None, BLOCK_COST) is None
        now[0] += 86_400  # the next UTC day: the balance is full again
        ledger.refund(KEY_ID, BLOCK_COST)
        assert ledger.charge(KEY_ID, 10_000, None, BLOCK_COST) is None
        assert ledger.used(KEY_ID) == BLOCK_COST
    finally:
        ledger.close()


def test_a_failing_ledger_keeps_the_credits_and_says_so(caplog: pytest.LogCaptureFixture,
                                                        tmp_path: Any) -> None:
    ledger = open_ledger(str(tmp_path / "credits.sqlite3"))
    billing = Billing(ledger)
    assert billing.charge(KEY_ID, 10_000, None, BLOCK_COST) is None
    ledger.close()  # every later statement fails
    billing.refund(KEY_ID, BLOCK_COST)  # logged, not raised
    assert "requests are refused with 503" in caplog.text


# -- the server ----------------------------------------------------------------------------------


def _used(thread: Any) -> int:
    service = thread.prepared.service
    key = service.keys.lookup(KEY)
    assert key is not None
    return int(service.billing.ledger.used(key.key_id))


@pytest.fixture(params=[True, False], ids=["lean", "asgi"])
def untimed(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A server with no call time limit, on each HTTP path."""
    with serve_in_thread(shared_demo().chain.backend, limits={"call_timeout_seconds": 0},
                         lean_http=request.param) as thread:
        yield thread


def _abandoned(server: Any, method: str) -> int:
    """Requests of the test key counted abandoned today (flushed to the key store or not)."""
    from ethread.server.billing.ledger import utc_day

    service = server.prepared.service
    key = service.keys.lookup(KEY)
    pending = service.observer.usage.get((key.key_id, method, "abandoned"), 0)
    stored = service.key_sync.store.usage(key.key_id, utc_day(time.time()))
    return pending + stored.get((method, "abandoned"), 0)


def test_a_call_whose_client_leaves_is_charged_and_counted_abandoned(untimed: Any) -> None:
    """The work was started: it is charged though no one reads its answer (issue 38: three
    traces at once, the socket closed before each answer, once cost nothing), and the key's
    usage counts it as abandoned."""
    execution = untimed.prepared.service.execution
    before = _used(untimed)
    abandoned = _abandoned(untimed, "eth_call")
    sock = raw_http(untimed.port, request_bytes(json.dumps(
        call("eth_call", [ENDLESS, "latest"])).encode()))
    assert wait_until(lambda: len(execution.running) == 1)
    assert _used(untimed) == before + CALL_COST  # charged when admitted
    # the client goes away (a reset: a plain close could be a half-close, whose client still
    # reads its answers) and the call stops
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    assert wait_until(lambda: not execution.running)
    assert wait_until(lambda: _abandoned(untimed, "eth_call") == abandoned + 1)
    assert _used(untimed) == before + CALL_COST  # and not given back
    # an answer that is sent is paid for the same
    assert post(url_of(untimed), call("eth_blockNumber", []))[0] == 200
    assert _used(untimed) == before + CALL_COST + cost_of("eth_blockNumber")


def test_a_websocket_call_whose_session_ends_is_charged_and_counted_abandoned(
        untimed: Any) -> None:
    execution = untimed.prepared.service.execution
    before = _used(untimed)
    abandoned = _abandoned(untimed, "eth_call")
    with connect(ws_url_of(untimed)) as ws:
        ws.send(json.dumps(call("eth_call", [ENDLESS, "latest"])))
        assert wait_until(lambda: len(execution.running) == 1)
        assert _used(untimed) == before + CALL_COST
    assert wait_until(lambda: not execution.running)
    assert wait_until(lambda: _abandoned(untimed, "eth_call") == abandoned + 1)
    assert _used(untimed) == before + CALL_COST
