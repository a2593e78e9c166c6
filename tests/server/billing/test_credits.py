"""server/billing/credits.py: what a request costs (a batch needs its cost but for its dearest
call in the rate bucket; an invalid call costs nothing), which engine a ledger spec opens (and
the warning when a new mapped ledger would start beside an old SQLite one), and admission
through :class:`Billing`: charges and refusals counted in the metrics, a ledger that fails
refusing every request with 503 and telling the operator once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from ethread.codec.envelope import Call
from ethread.errors import InvalidParams
from ethread.server.billing.credits import (
    DEFAULT_COST,
    Billing,
    cost_of,
    open_ledger,
    request_cost,
)
from ethread.server.billing.ledger import (
    DAILY_LIMIT_REACHED,
    LEDGER_UNAVAILABLE,
    Charge,
    LedgerError,
    LedgerUnavailable,
    Refusal,
)
from ethread.server.billing.ledger_mapped import MappedLedger
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.metrics import Metrics
from tests.support.billing import KEY_ID, scraped
from tests.support.redis_server import RedisServer


def _call(method: str) -> Call:
    return Call(method=method, params=[], id=1)


def test_a_call_costs_its_methods_price_and_an_unknown_method_the_default() -> None:
    assert cost_of("eth_getLogs") > cost_of("eth_call") > cost_of("eth_chainId") == DEFAULT_COST
    assert cost_of("no_suchMethod") == DEFAULT_COST == 1


def test_a_batch_needs_its_cost_but_for_its_dearest_call_in_the_bucket() -> None:
    logs, call, chain_id = cost_of("eth_getLogs"), cost_of("eth_call"), cost_of("eth_chainId")
    assert request_cost([_call("eth_getLogs")]) == (logs, 0)
    assert request_cost([InvalidParams("bad")]) == (0, 0)  # not even a call: free
    batch = [_call("eth_getLogs"), _call("eth_call"), InvalidParams("bad"), _call("eth_chainId")]
    assert request_cost(batch) == (logs + call + chain_id, call + chain_id)
    assert request_cost([InvalidParams("a"), InvalidParams("b")]) == (0, 0)


def test_a_spec_opens_its_engine(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for spec, engine in ((":memory:", SQLiteLedger), (str(tmp_path / "a.sqlite3"), SQLiteLedger),
                         (str(tmp_path / "c.ledger"), MappedLedger)):
        ledger = open_ledger(spec)
        try:
            assert type(ledger) is engine
        finally:
            ledger.close()
    old = open_ledger(str(tmp_path / "b.sqlite3"))
    old.close()
    with caplog.at_level(logging.WARNING, "ethread.server.billing.credits"):
        open_ledger(str(tmp_path / "b.ledger")).close()
        open_ledger(str(tmp_path / "b.ledger")).close()  # it exists now: no warning again
    (said,) = [r.getMessage() for r in caplog.records]
    assert "starting a new credit ledger" in said and "b.sqlite3" in said
    with pytest.raises(LedgerError, match="needs a host"):
        open_ledger("redis://:6379/0")


class _Failing:
    """A ledger whose store has gone: every call raises as a lost connection would."""

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        raise LedgerUnavailable("the test ledger failed: gone")

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        raise LedgerUnavailable("the test ledger failed: gone")

    def refund(self, key_id: str, cost: int) -> None:
        raise LedgerUnavailable("the test ledger failed: gone")

    def used(self, key_id: str) -> int:
        raise LedgerUnavailable("the test ledger failed: gone")

    def close(self) -> None:
        pass


def test_billing_counts_charges_refusals_and_refunds(metrics: Metrics) -> None:
    billing = Billing(SQLiteLedger(), metrics)
    assert billing.charge(KEY_ID, 100, None, 80) is None
    refusal = billing.charge(KEY_ID, 100, None, 80)
    assert refusal is not None and refusal.reason == DAILY_LIMIT_REACHED
    assert billing.charge_many([(KEY_ID, 100, None, 15, 0), (KEY_ID, 100, None, 15, 0)])[0] is None
    billing.refund(KEY_ID, 30)
    assert billing.ledger.used(KEY_ID) == 65
    metrics.flush()
    seen = scraped(metrics)
    assert seen["ethread_credits_charged_total"] == 95
    assert seen["ethread_credits_refunded_total"] == 30
    assert seen['ethread_refusals_total{reason="daily_limit"}'] == 2
    assert seen["ethread_ledger_seconds_count"] == 3  # two charges, one turn
    assert seen.get("ethread_ledger_failures_total", 0) == 0


def test_a_failing_ledger_refuses_everything_and_is_reported_once(
        metrics: Metrics, caplog: pytest.LogCaptureFixture) -> None:
    billing = Billing(_Failing(), metrics)
    with caplog.at_level(logging.ERROR, "ethread.server.billing.credits"):
        refusal = billing.charge(KEY_ID, 100, None, 1)
        assert refusal is not None and refusal.reason == LEDGER_UNAVAILABLE
        assert [r.reason if r else None for r in billing.charge_many(
            [(KEY_ID, 100, None, 1, 0)] * 2)] == [LEDGER_UNAVAILABLE] * 2
        billing.refund(KEY_ID, 1)  # kept by the ledger, not raised
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith("the test ledger failed: gone: requests are refused with 503")
    metrics.flush()
    seen = scraped(metrics)
    assert seen["ethread_ledger_failures_total"] == 2
    assert seen['ethread_refusals_total{reason="ledger_unavailable"}'] == 3
    unmetered = Billing(_Failing())
    refused = unmetered.charge(KEY_ID, 100, None, 1)
    assert refused is not None and refused.reason == LEDGER_UNAVAILABLE


@pytest.mark.redis
def test_redis_that_is_gone_refuses_requests_instead_of_serving_them_unpaid(
        caplog: pytest.LogCaptureFixture) -> None:
    server = RedisServer().start()
    try:
        billing = Billing(open_ledger(server.url))
        assert billing.charge(KEY_ID, 1_000, None, 80) is None
        server.stop()
        with caplog.at_level(logging.ERROR, "ethread.server.billing.credits"):
            refusal = billing.charge(KEY_ID, 1_000, None, 80)
            assert refusal is not None and refusal.reason == LEDGER_UNAVAILABLE
            refusals = billing.charge_many([(KEY_ID, 1_000, None, 80, 0)] * 3)
            assert [r.reason if r else None for r in refusals] == [LEDGER_UNAVAILABLE] * 3
        said = [r.getMessage() for r in caplog.records if r.name == "ethread.server.billing.credits"]
        assert len(said) == 1, "the operator is told once, not for every refused request"
        assert said[0].startswith("the Redis ledger failed") and "refused with 503" in said[0]
        billing.ledger.close()
        with pytest.raises(LedgerError, match="cannot reach the Redis ledger"):
            open_ledger(server.url)
    finally:
        server.close()


def test_a_refused_answer_for_an_unreachable_ledger_is_503() -> None:
    from ethread.server import refusals

    refused = refusals.over_credits(LEDGER_UNAVAILABLE, 1)
    assert refused.status == 503 and (b"retry-after", b"1") in refused.headers
    assert b"credit ledger unavailable" in refused.body()

