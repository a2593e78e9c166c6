"""server/billing/ledger_redis.py: the Redis ledger's own guarantees, on a real redis-server:
charges of a pipeline survive a flushed script cache, each once; a day's usage is one key
that expires at midnight UTC; the rate bucket is shared by every server; a charge whose
answer is late is refused and never sent again; key prefixes keep ledgers apart; an address
Redis cannot serve at is a config error, and one that does not answer is named without its
password. (What every engine shares is in test_ledger.)"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from ethread.server.billing.credits import Billing, open_ledger
from ethread.server.billing.ledger import (
    DAILY_LIMIT_REACHED,
    LEDGER_UNAVAILABLE,
    RATE_LIMIT_EXCEEDED,
    LedgerError,
    seconds_to_reset,
)
from ethread.server.billing.ledger_redis import RedisLedger
from tests.support.billing import KEY_ID
from tests.support.redis_server import RedisServer


@pytest.mark.redis
def test_redis_charges_made_together_survive_a_flushed_script_cache(redis_url: str) -> None:
    """A Redis that lost the charge script (restarted, SCRIPT FLUSH) ran none of a pipeline's
    charges: they are made once it is loaded again, each exactly once."""
    import redis

    ledger = RedisLedger(redis_url)
    client = redis.Redis.from_url(redis_url)
    try:
        assert ledger.charge_many([(KEY_ID, 250, None, 80, 0)]) == [None]
        client.script_flush()
        outcomes = ledger.charge_many([(KEY_ID, 250, None, 80, 0)] * 3)
        assert [o if o is None else o.reason for o in outcomes] == [None, None,
                                                                     DAILY_LIMIT_REACHED]
        assert ledger.used(KEY_ID) == 240
    finally:
        client.close()
        ledger.close()


@pytest.mark.redis
def test_redis_usage_expires_at_midnight_utc(redis_url: str) -> None:
    """A day's usage is one Redis key that expires when the UTC day ends; a refused charge
    adds nothing to it, and a key without a rate keeps no bucket."""
    import redis

    ledger = open_ledger(redis_url)
    try:
        assert ledger.charge(KEY_ID, 200, None, 80) is None
        assert ledger.charge(KEY_ID, 200, None, 81) is None
        assert ledger.charge(KEY_ID, 200, None, 80) is not None
    finally:
        ledger.close()
    client = redis.Redis.from_url(redis_url)
    try:
        day = int(time.time()) // 86400
        usage_key = f"ethread:usage:{day}:{KEY_ID}"
        assert client.get(usage_key) == b"161"
        assert abs(client.ttl(usage_key) - seconds_to_reset(time.time())) <= 2
        assert client.keys("ethread:*") == [usage_key.encode()], "no bucket without a rate"
    finally:
        client.close()


@pytest.mark.redis
def test_redis_rate_limit_is_shared_by_every_server(redis_url: str) -> None:
    import redis

    first, second = RedisLedger(redis_url), RedisLedger(redis_url)
    try:
        assert first.charge(KEY_ID, 10_000, 100.0, 80) is None   # 100 -> 20
        assert second.charge(KEY_ID, 10_000, 100.0, 80) is None  # 20: admitted -> -60
        refusal = first.charge(KEY_ID, 10_000, 100.0, 1)
        assert refusal is not None and refusal.reason == RATE_LIMIT_EXCEEDED
        assert refusal.retry_after == 1
        assert second.used(KEY_ID) == 160
        time.sleep(0.7)
        assert second.charge(KEY_ID, 10_000, 100.0, 1) is None
        client = redis.Redis.from_url(redis_url)
        try:
            ttl = client.ttl(f"ethread:rate:{KEY_ID}")
            assert 1 <= ttl <= 3, "a bucket is forgotten once it would be full again"
        finally:
            client.close()
    finally:
        first.close()
        second.close()


@pytest.mark.redis
def test_redis_charge_whose_answer_is_late_is_refused_and_never_sent_again(
        redis_server: RedisServer, redis_url: str) -> None:
    """A Redis that stalls (DEBUG SLEEP) past the socket timeout: the charge is refused as the
    ledger being unavailable after 0.5 s, and sent once. Redis runs it when it wakes, so the
    key pays for a request it was refused (the direction the ledger allows), once: sent again
    (redis-py's default retries), it ran twice and the loop waited through the stall."""
    ledger = RedisLedger(redis_url)
    try:
        assert ledger.charge(KEY_ID, 10**6, None, 80) is None
        stall = threading.Thread(target=redis_server.command, args=("DEBUG", "SLEEP", "1.5"))
        stall.start()
        time.sleep(0.2)  # Redis is asleep
        billing = Billing(ledger)
        refusal = billing.charge(KEY_ID, 10**6, None, 80)
        assert refusal is not None and refusal.reason == LEDGER_UNAVAILABLE
        stall.join()
        assert ledger.used(KEY_ID) == 160, "the late charge ran once (sent again, twice)"
        stall = threading.Thread(target=redis_server.command, args=("DEBUG", "SLEEP", "1.5"))
        stall.start()
        time.sleep(0.2)
        refusals = billing.charge_many([(KEY_ID, 10**6, None, 80, 0)] * 3)
        assert [r.reason if r else None for r in refusals] == [LEDGER_UNAVAILABLE] * 3
        stall.join()
        assert ledger.used(KEY_ID) == 160 + 240, "the late turn ran once"
    finally:
        ledger.close()


@pytest.mark.parametrize(("url", "message"), [
    ("redis://:6379/0", "needs a host"),
    ("redis://localhost:port/0", "not a port"),
    ("redis://localhost:6379/zero", "database"),
])
def test_bad_redis_addresses_are_config_errors(url: str, message: str) -> None:
    from ethread.server import ConfigError, ServerConfig
    from ethread.server.config import validate

    with pytest.raises(ConfigError, match=message):
        validate(ServerConfig(ledger=url))



@pytest.mark.redis
def test_prefixes_keep_ledgers_apart_on_one_redis(redis_url: str) -> None:
    ours, theirs = RedisLedger(redis_url), RedisLedger(redis_url, prefix="other:")
    try:
        assert ours.charge(KEY_ID, 100, None, 60) is None
        assert theirs.charge(KEY_ID, 100, None, 60) is None, "another prefix: another balance"
        refusal = ours.charge(KEY_ID, 100, None, 60)
        assert refusal is not None and refusal.reason == DAILY_LIMIT_REACHED
        ours.refund(KEY_ID, 50)
        assert (ours.used(KEY_ID), theirs.used(KEY_ID)) == (10, 60)
    finally:
        ours.close()
        theirs.close()


def test_a_redis_that_does_not_answer_is_named_without_its_password() -> None:
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(LedgerError) as raised:
        RedisLedger(f"redis://user:secret@127.0.0.1:{port}/0")
    assert f"cannot reach the Redis ledger at redis://user:***@127.0.0.1:{port}/0" in str(raised.value)
    assert "secret" not in str(raised.value)
