"""The credit ledger shared by processes and machines: SQLite for one machine, Redis for many.

Every test uses the real engine: SQLite files charged from several processes at once, and a
real ``redis-server`` (``tests/support/redis_server.py``). Concurrency is across processes, not just
threads, since that is what workers and servers are. What one engine alone guarantees is tested
beside it (test_ledger_sqlite, test_ledger_redis, test_ledger_mapped); admission through
``Billing`` in test_credits.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ethread.server.billing.credits import open_ledger
from ethread.server.billing.ledger import (
    DAILY_LIMIT_REACHED,
    RATE_LIMIT_EXCEEDED,
    seconds_to_reset,
)
from ethread.server.billing.ledger_mapped import MappedLedger
from ethread.server.billing.ledger_redis import RedisLedger
from ethread.server.billing.ledger_sqlite import SQLiteLedger
from ethread.server.config import KeyConfig
from tests.support.billing import BLOCK_COST, KEY_ID
from tests.support.server_harness import KEY, call, post, serve_in_thread, shared_demo, url_of


def _charge_in_processes(spec: str, processes: int, attempts: int, limit: int,
                         together: int = 1) -> list[int]:
    """``processes`` Python processes each try ``attempts`` charges of 80 on ``spec`` at once
    (``together`` at a time with ``charge_many`` when more than 1); the number each got
    through."""
    script = textwrap.dedent(f"""
        import sys, time
        from ethread.server.billing.credits import open_ledger
        ledger = open_ledger({spec!r})
        charge = ({KEY_ID!r}, {limit}, None, {BLOCK_COST}, 0)
        while time.time() < float(sys.argv[1]):
            pass
        if {together} == 1:
            print(sum(ledger.charge(*charge) is None for _ in range({attempts})))
        else:
            print(sum(outcome is None for _ in range({attempts} // {together})
                      for outcome in ledger.charge_many([charge] * {together})))
        ledger.close()
    """)
    start_at = str(time.time() + 1.5)  # every process starts charging at the same instant
    children = [subprocess.Popen([sys.executable, "-c", script, start_at],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(processes)]
    counts = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        counts.append(int(out))
    return counts


# -- the file engines: SQLite (*.sqlite3) and the mapped file (*.ledger) ------------------------

FILE_ENGINES = pytest.mark.parametrize("suffix", ["sqlite3", "ledger"])


def _open(path: str, clock: Callable[[], float] = time.time) -> SQLiteLedger | MappedLedger:
    """A ledger of the engine the path's suffix names, on ``clock``."""
    if path.endswith(".ledger"):
        return MappedLedger(path, clock=clock)
    return SQLiteLedger(path, clock=clock)


@pytest.fixture(params=["sqlite3", "ledger", pytest.param("redis", marks=pytest.mark.redis)])
def ledger_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new ledger of each engine, as ``open_ledger`` names it: a SQLite file, a mapped file,
    the session's Redis (emptied)."""
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(tmp_path / f"credits.{request.param}")


def test_many_processes_spend_the_balance_exactly_once(ledger_spec: str) -> None:
    counts = _charge_in_processes(ledger_spec, processes=4, attempts=60, limit=8_000)
    assert sum(counts) == 100, counts
    assert sum(1 for c in counts if c) > 1, f"the processes did not overlap: {counts}"
    ledger = open_ledger(ledger_spec)
    try:
        assert ledger.used(KEY_ID) == 8_000
    finally:
        ledger.close()


def test_many_processes_charging_several_at_once_spend_the_balance_exactly_once(
        ledger_spec: str) -> None:
    """Workers charging a turn's requests together (``charge_many``, four at a time) still
    take each credit once: 100 of the 240 charges fit, whoever makes them."""
    counts = _charge_in_processes(ledger_spec, processes=4, attempts=60, limit=8_000, together=4)
    assert sum(counts) == 100, counts
    assert sum(1 for c in counts if c) > 1, f"the processes did not overlap: {counts}"


def test_charges_made_together_are_each_as_if_alone(ledger_spec: str) -> None:
    """``charge_many`` on a fresh ledger: each charge is taken or refused as if it came alone,
    after those before it, the daily limit and the rate bucket alike."""
    # the file engines on a clock that stands still; Redis keeps its server's time
    ledger = (RedisLedger(ledger_spec) if ledger_spec.startswith("redis://")
              else _open(ledger_spec, clock=lambda: 1_800_000_000.0))
    try:
        other = "o" * 64
        outcomes = ledger.charge_many([(KEY_ID, 250, None, 80, 0)] * 4
                                      + [(other, 250, None, 5, 0), (KEY_ID, 250, None, 10, 0)])
        assert [o if o is None else o.reason for o in outcomes] == [
            None, None, None, DAILY_LIMIT_REACHED, None, None]
        assert ledger.used(KEY_ID) == 250 and ledger.used(other) == 5
        rated = "r" * 64
        outcomes = ledger.charge_many([(rated, 10_000, 100.0, 80, 0),   # bucket 100 -> 20
                                       (rated, 10_000, 100.0, 80, 0),   # 20 >= 0 -> -60
                                       (rated, 10_000, 100.0, 1, 0)])   # -60: refused
        assert [o if o is None else o.reason for o in outcomes] == [None, None, RATE_LIMIT_EXCEEDED]
        assert outcomes[2] is not None and outcomes[2].retry_after == 1
        assert ledger.used(rated) == 160, "the refusals took nothing"
        assert ledger.charge_many([]) == []
    finally:
        ledger.close()


def test_refused_charges_cost_nothing(ledger_spec: str) -> None:
    ledger = open_ledger(ledger_spec)
    try:
        assert ledger.charge(KEY_ID, 200, None, 80) is None
        assert ledger.charge(KEY_ID, 200, None, 80) is None
        refusal = ledger.charge(KEY_ID, 200, None, 80)
        assert refusal is not None and refusal.reason == DAILY_LIMIT_REACHED
        assert abs(refusal.retry_after - seconds_to_reset(time.time())) <= 2
        assert ledger.used(KEY_ID) == 160
        assert ledger.charge(KEY_ID, 200, None, 1) is None
        assert ledger.charge(KEY_ID, 200, None, 1_000) is not None, "dearer than the limit"
        assert ledger.used(KEY_ID) == 161
        assert ledger.used("another key") == 0
    finally:
        ledger.close()


@FILE_ENGINES
def test_rate_bucket_is_shared_by_every_process_on_the_file(tmp_path: Path, suffix: str) -> None:
    now = [1_800_000_000.0]
    path = str(tmp_path / f"l.{suffix}")
    first = _open(path, clock=lambda: now[0])
    second = _open(path, clock=lambda: now[0])  # another connection: another process
    try:
        assert first.charge(KEY_ID, 10_000, 100.0, 80) is None   # bucket 100 -> 20
        assert second.charge(KEY_ID, 10_000, 100.0, 80) is None  # 20 >= 0: admitted -> -60
        refusal = first.charge(KEY_ID, 10_000, 100.0, 1)
        assert refusal is not None and refusal.reason == RATE_LIMIT_EXCEEDED
        assert refusal.retry_after == 1
        assert second.used(KEY_ID) == 160, "the rate refusal charged nothing"
        now[0] += 0.7  # -60 + 70 = 10
        assert second.charge(KEY_ID, 10_000, 100.0, 1) is None
        over = first.charge(KEY_ID, 161, 100.0, 1)
        assert over is not None and over.reason == DAILY_LIMIT_REACHED
        assert first.charge(KEY_ID, 10_000, 100.0, 1) is None, "the daily refusal took no tokens"
        now[0] += 0.08  # 8 + 8 = 16 of 100: a batch needing 20 waits
        batch = second.charge(KEY_ID, 10_000, 100.0, 25, 20)
        assert batch is not None and batch.reason == RATE_LIMIT_EXCEEDED
    finally:
        first.close()
        second.close()


@FILE_ENGINES
def test_usage_is_per_utc_day(tmp_path: Path, suffix: str) -> None:
    evening = datetime(2026, 11, 23, 23, 59, 59, tzinfo=UTC).timestamp()
    now = [evening]
    path = str(tmp_path / f"l.{suffix}")
    ledger = _open(path, clock=lambda: now[0])
    try:
        assert ledger.charge(KEY_ID, 100, None, 80) is None
        refusal = ledger.charge(KEY_ID, 100, None, 80)
        assert refusal is not None and refusal.retry_after == 1
        now[0] += 1.5  # 00:00:00.5 the next day
        assert ledger.used(KEY_ID) == 0
        assert ledger.charge(KEY_ID, 100, None, 80) is None
        assert ledger.used(KEY_ID) == 80
    finally:
        ledger.close()
    if suffix == "sqlite3":  # and SQLite drops the rows of earlier days
        import sqlite3

        with sqlite3.connect(path) as db:
            assert db.execute("SELECT day, used FROM usage").fetchall() == [("2026-11-24", 80)]


# A rate-limited key cannot take one batch of any size: every call of a batch counts against
# the rate but one, on every ledger and through the server.


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


def test_a_batch_counts_against_the_rate(ledger_spec: str) -> None:
    ledger = open_ledger(ledger_spec)
    try:
        exercise(ledger)
    finally:
        ledger.close()


def test_a_rate_limited_key_cannot_send_one_batch_of_any_size() -> None:
    keys = (KeyConfig(key=KEY, credits_per_second=1000.0),)
    logs = call("eth_getLogs", [{"fromBlock": "0x0", "toBlock": "0x1"}])
    with serve_in_thread(shared_demo().chain.backend, keys=keys) as server:
        status, headers, answers = post(url_of(server), [dict(logs, id=i) for i in range(100)])
        assert status == 429 and int(headers["retry-after"]) >= 25
        assert {a["error"]["code"] for a in answers} == {-32005}
        status, _, answers = post(url_of(server), [dict(logs, id=i) for i in range(4)])
        assert status == 200 and all("result" in a for a in answers)
