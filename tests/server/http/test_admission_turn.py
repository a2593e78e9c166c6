"""Requests gathered over one turn of the event loop and charged together
(``ethread.server.http.admission_turn``): one ledger transaction a turn, each request charged as if
it came alone and in the order read, nothing charged for a client that left, and a failure
answered rather than lost."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ethread.codec.envelope import Call
from ethread.codec.pipeline import Exchange, Pipeline
from ethread.errors import EthreadError
from ethread.server.billing.credits import Billing, cost_of
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.config import KeyConfig, ServiceLimits
from ethread.server.execution import Execution
from ethread.server.http.admission_turn import AdmissionTurn
from ethread.server.keys.auth import ApiKey
from ethread.server.service import Service


class Answers:
    """A dispatcher that answers every call with its method's name."""

    def answered(self, body: bytes) -> None:
        return None

    def respond(self, call: Call, body: bytes | None = None) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": call.id, "result": call.method}).encode()

    def run_notification(self, call: Call) -> None:
        return None

    def cached_result(self, call: Call, body: bytes | None = None) -> None:
        return None


@dataclass
class Network:
    dispatcher: Answers


@dataclass
class Request:
    network: Network
    key: ApiKey
    disconnected: bool = False

    def gone(self) -> bool:
        return self.disconnected


class Admissions:
    """A service's admission, recorded: which requests were charged together."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.turns: list[list[tuple[str, int]]] = []

    def admit_many(self, requests: Sequence[tuple[ApiKey, Sequence[Call | EthreadError]]],
                   ) -> Any:
        self.turns.append([(key.key_id[:4], len(calls)) for key, calls in requests])
        return self.service.admit_many(requests)


def api_key(config: KeyConfig) -> ApiKey:
    return ApiKey.from_config(config)


def body(method: str, request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode()


def make_turn(daily_credits: int) -> tuple[AdmissionTurn, Admissions, ApiKey, ApiKey,
                                           asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    ledger = SQLiteLedger(":memory:")
    service = Service.__new__(Service)  # admission needs the billing and the work in flight
    service.billing = Billing(ledger)
    service.execution = Execution(threads=1, slow_threads=1)
    service.limits = ServiceLimits()
    rich = api_key(KeyConfig(key="rich-key-0123456789"))
    poor = api_key(KeyConfig(key="poor-key-0123456789", daily_credits=daily_credits))
    admissions = Admissions(service)
    turn = AdmissionTurn(loop, admissions, Pipeline())  # type: ignore[arg-type]
    return turn, admissions, rich, poor, loop


def test_a_turn_is_charged_in_one_transaction_each_request_as_if_alone() -> None:
    turn, admissions, rich, poor, loop = make_turn(2 * cost_of("eth_getBalance"))
    network = Network(Answers())
    got: list[tuple[int, Exchange | None]] = []
    sends = [(poor, body("eth_getBalance", 1)), (rich, b"{not json"),
             (poor, body("eth_getBalance", 2)), (poor, body("eth_getBalance", 3)),
             (rich, b"[" + body("eth_chainId", 4) + b"," + body("eth_getBalance", 5) + b"]")]
    try:
        for index, (key, data) in enumerate(sends):
            turn.add(Request(network, key), data,
                     lambda exchange, index=index: got.append((index, exchange)))
        assert got == [], "nothing is answered before the turn's end"
        loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert [index for index, _ in got] == [0, 1, 2, 3, 4], "answered in the order read"
    assert admissions.turns == [[(poor.key_id[:4], 1)] * 3 + [(rich.key_id[:4], 2)]], \
        "one admission for the turn; the body that is not JSON is not charged"
    answers = [json.loads(exchange.answer() or b"null") for _, exchange in got
               if exchange is not None]
    assert answers[0]["result"] == "eth_getBalance" and answers[2]["result"] == "eth_getBalance"
    assert answers[1]["error"]["code"] == -32700
    assert answers[3]["error"]["code"] == -32005, "the third call of the poor key is refused"
    assert [a["result"] for a in answers[4]] == ["eth_chainId", "eth_getBalance"]
    assert admissions.service.billing.ledger.used(poor.key_id) == 2 * cost_of("eth_getBalance")


def test_a_request_whose_client_left_is_not_charged() -> None:
    turn, admissions, rich, _, loop = make_turn(0)
    network = Network(Answers())
    got: list[Exchange | None] = []
    gone = Request(network, rich)
    try:
        turn.add(gone, body("eth_getBalance", 1), got.append)
        turn.add(Request(network, rich), body("eth_getBalance", 2), got.append)
        gone.disconnected = True  # the connection was lost later in the same turn
        loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert got[0] is None and got[1] is not None
    assert admissions.turns == [[(rich.key_id[:4], 1)]]
    assert admissions.service.billing.ledger.used(rich.key_id) == cost_of("eth_getBalance")


def test_a_turn_whose_charging_fails_answers_every_request(caplog: pytest.LogCaptureFixture,
                                                           ) -> None:
    """A failure while charging (a bug) answers the requests that needed charging with an
    internal error (None); a request finished before charging (not JSON) keeps its answer."""
    turn, admissions, rich, _, loop = make_turn(0)

    def broken(requests: Any) -> Any:
        raise RuntimeError("a bug in admission")

    admissions.admit_many = broken  # type: ignore[method-assign]
    network = Network(Answers())
    got: list[Exchange | None] = []
    try:
        for data in (body("eth_getBalance", 1), b"{not json", body("eth_getBalance", 2)):
            turn.add(Request(network, rich), data, got.append)
        with caplog.at_level(logging.ERROR, "ethread.server"):
            loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert got[0] is None and got[2] is None, "each hears of the failure (and answers -32603)"
    assert got[1] is not None and json.loads(got[1].answer() or b"")["error"]["code"] == -32700
    assert "charging a turn's requests failed" in caplog.text


def test_one_answer_that_fails_leaves_the_others_answered(caplog: pytest.LogCaptureFixture,
                                                         ) -> None:
    turn, _, rich, _, loop = make_turn(0)
    network = Network(Answers())
    got: list[Exchange | None] = []

    def fails(exchange: Exchange | None) -> None:
        raise RuntimeError("a bug in one connection")

    try:
        turn.add(Request(network, rich), body("eth_getBalance", 1), got.append)
        turn.add(Request(network, rich), body("eth_getBalance", 2), fails)
        turn.add(Request(network, rich), body("eth_getBalance", 3), got.append)
        with caplog.at_level(logging.ERROR, "ethread.server"):
            loop.run_until_complete(asyncio.sleep(0))
    finally:
        loop.close()
    assert [json.loads(e.answer() or b"")["id"] for e in got if e is not None] == [1, 3]
    assert "a bug in one connection" in caplog.text
