"""A rate-limited key cannot take one batch of any size (issue 10): every call of a batch
counts against the rate but one, on every ledger and through the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ethread.server.billing.ledger import RATE_LIMIT_EXCEEDED
from ethread.server.billing.ledger_mapped import MappedLedger
from ethread.server.billing.ledger_redis import RedisLedger
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.config import KeyConfig
from tests.support.server_harness import KEY, call, post, serve_in_thread, shared_demo, url_of


def exercise(ledger: Any) -> None:
    # a bucket of 1,000 credits a second: a single dear call may leave the key in debt...
    assert ledger.charge("k1", 10**9, 1000.0, 5_000) is None
    assert ledger.charge("k1", 10**9, 1000.0, 1).reason == RATE_LIMIT_EXCEEDED
    # ...but a batch needs its cost but for its dearest call in the bucket
    refused = ledger.charge("k2", 10**9, 1000.0, 100 * 255, 99 * 255)
    assert refused is not None and refused.reason == RATE_LIMIT_EXCEEDED
    assert refused.retry_after >= 25
    assert ledger.used("k2") == 0
    assert ledger.charge("k2", 10**9, 1000.0, 4 * 255, 3 * 255) is None
    assert ledger.used("k2") == 1020


def test_sqlite_counts_a_batch_against_the_rate(tmp_path: Path) -> None:
    exercise(SQLiteLedger(str(tmp_path / "l.sqlite3")))


def test_mapped_counts_a_batch_against_the_rate(tmp_path: Path) -> None:
    exercise(MappedLedger(str(tmp_path / "l.ledger")))


@pytest.mark.redis
def test_redis_counts_a_batch_against_the_rate(redis_url: str) -> None:
    exercise(RedisLedger(redis_url))


def test_a_rate_limited_key_cannot_send_one_batch_of_any_size() -> None:
    keys = (KeyConfig(key=KEY, credits_per_second=1000.0),)
    logs = call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "0x1"}])
    with serve_in_thread(shared_demo().chain.backend, keys=keys) as server:
        status, headers, answers = post(url_of(server), [dict(logs, id=i) for i in range(100)])
        assert status == 429 and int(headers["retry-after"]) >= 25
        assert {a["error"]["code"] for a in answers} == {-32005}
        status, _, answers = post(url_of(server), [dict(logs, id=i) for i in range(4)])
        assert status == 200 and all("result" in a for a in answers)
