"""The credit ledger in Redis, shared by every worker of every server of a fleet
(docs/scaling.md, "The ledger", compares the engines).

A charge is one round trip: a Lua script, run atomically, on Redis's own clock (``TIME``), so
every server agrees on the day. A day's usage is ``ethread:usage:<day number>:<key id>``,
expiring at that UTC day's end; a bucket is the hash ``ethread:rate:<key id>``, expiring once
full again. Not Redis Cluster: the script names its keys from the server's clock. The call is
synchronous on the event loop; no answer within :data:`SOCKET_TIMEOUT` refuses the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from .ledger import (
    DAILY_LIMIT_REACHED,
    Charge,
    LedgerError,
    LedgerUnavailable,
    Refusal,
    check_redis_url,
    rate_refusal,
    shown_ledger,
    unavailable,
)

SOCKET_TIMEOUT = 0.5
KEY_PREFIX = "ethread:"

# ARGV: prefix, key id, daily limit, cost, rate (0: none), need (what the bucket must hold).
# Returns {0, used after} when charged, {1, seconds to midnight UTC} over the daily limit,
# {2, level minus need as a string} when the bucket holds less than it needs.
CHARGE = """
local prefix, key_id = ARGV[1], ARGV[2]
local limit, cost, rate = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local need = tonumber(ARGV[6] or '0')
local t = redis.call('TIME')
local seconds = tonumber(t[1])
local now = seconds + tonumber(t[2]) / 1000000
local day = math.floor(seconds / 86400)
local day_ends = (day + 1) * 86400
local rate_key = prefix .. 'rate:' .. key_id
local level = 0
if rate > 0 then
  local bucket = redis.call('HMGET', rate_key, 'tokens', 'at')
  local tokens, at = tonumber(bucket[1]), tonumber(bucket[2])
  if tokens == nil or at == nil then
    level = rate
  else
    level = math.min(rate, tokens + math.max(0, now - at) * rate)
  end
  if level < need then
    return {2, string.format('%.17g', level - need)}
  end
end
local usage_key = prefix .. 'usage:' .. day .. ':' .. key_id
local used = tonumber(redis.call('GET', usage_key) or '0')
if used + cost > limit then
  return {1, day_ends - seconds}
end
used = redis.call('INCRBY', usage_key, cost)
redis.call('EXPIREAT', usage_key, day_ends)
if rate > 0 then
  local left = level - cost
  redis.call('HSET', rate_key, 'tokens', string.format('%.17g', left),
             'at', string.format('%.17g', now))
  redis.call('EXPIRE', rate_key, math.ceil((rate - left) / rate) + 1)
end
return {0, used}
"""

# ARGV: prefix, key id, credits given back. Today's usage never goes below zero.
REFUND = """
local t = redis.call('TIME')
local day = math.floor(tonumber(t[1]) / 86400)
local usage_key = ARGV[1] .. 'usage:' .. day .. ':' .. ARGV[2]
local used = tonumber(redis.call('GET', usage_key) or '0')
if used > 0 then
  redis.call('SET', usage_key, math.max(0, used - tonumber(ARGV[3])), 'KEEPTTL')
end
return 0
"""
USED = """
local t = redis.call('TIME')
local day = math.floor(tonumber(t[1]) / 86400)
return tonumber(redis.call('GET', ARGV[1] .. 'usage:' .. day .. ':' .. ARGV[2]) or '0')
"""


def redis_client_module(url: str, what: str) -> ModuleType:
    """The redis package, for ``what`` (a ledger, a key store) at ``url``; LedgerError when
    the URL is not one Redis can serve it at or the package (the ``redis`` extra) is missing."""
    problem = check_redis_url(url)
    if problem is not None:
        raise LedgerError(problem)
    try:
        import redis
    except ImportError:
        raise LedgerError(f"{what} needs the redis package: pip install 'ethread[redis]'") from None
    return redis


class RedisLedger:
    """Daily usage and rate buckets per key id in one Redis database."""

    def __init__(self, url: str, *, prefix: str = KEY_PREFIX) -> None:
        redis = redis_client_module(url, "a Redis ledger")
        self.url = url
        self.prefix = prefix
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._no_script: type[BaseException] = redis.exceptions.NoScriptError
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No retries: a charge whose answer timed out may have run, and sending it again
        # would take its credits twice (and hold the event loop for the back-off).
        self._client: Any = redis.Redis.from_url(
            url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT,
            health_check_interval=30, retry=Retry(NoBackoff(), 0))
        self._charge = self._client.register_script(CHARGE)
        self._used = self._client.register_script(USED)
        self._refund = self._client.register_script(REFUND)
        try:
            self._client.ping()
        except self._errors as exc:
            self._client.close()
            raise LedgerError(f"cannot reach the Redis ledger at {shown_ledger(url)}: {exc}"
                              ) from None

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        """Charge atomically in Redis (one Lua script); see :meth:`Ledger.charge`."""
        try:
            outcome = self._charge(args=self._arguments(key_id, daily_limit, rate, cost, need))
        except self._errors as exc:
            raise LedgerUnavailable(f"the Redis ledger failed: {exc}") from None
        return _refusal(outcome, rate)

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        """Every charge in one pipeline of the charge script; see :meth:`Ledger.charge_many`.
        A connection lost mid-way raises (which ran is unknown). Charges ``EVALSHA`` found no
        script for (a restart, ``SCRIPT FLUSH``) did not run, and are sent again once loaded."""
        outcomes: list[Any] = [None] * len(charges)
        todo = list(range(len(charges)))
        for _ in range(2):
            pipe = self._client.pipeline(transaction=False)
            for index in todo:
                pipe.evalsha(self._charge.sha, 0, *self._arguments(*charges[index]))
            try:
                answers = pipe.execute(raise_on_error=False)
                for index, answer in zip(todo, answers, strict=True):
                    outcomes[index] = answer
                todo = [i for i in todo if isinstance(outcomes[i], self._no_script)]
                if not todo:
                    break
                self._client.script_load(CHARGE)
            except self._errors as exc:
                raise LedgerUnavailable(f"the Redis ledger failed: {exc}") from None
        return [unavailable() if isinstance(outcome, BaseException) else _refusal(outcome, rate)
                for outcome, (_, _, rate, _, _) in zip(outcomes, charges, strict=True)]

    def _arguments(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
                   need: int) -> list[str | int]:
        """The charge script's ARGV."""
        return [self.prefix, key_id, daily_limit, cost, repr(float(rate)) if rate else "0",
                need]

    def refund(self, key_id: str, cost: int) -> None:
        """Give back in one script run; see :meth:`Ledger.refund`."""
        try:
            self._refund(args=[self.prefix, key_id, cost])
        except self._errors as exc:
            raise LedgerUnavailable(f"the Redis ledger failed: {exc}") from None

    def used(self, key_id: str) -> int:
        """Credits the key has spent today (UTC)."""
        try:
            return int(self._used(args=[self.prefix, key_id]))
        except self._errors as exc:
            raise LedgerUnavailable(f"the Redis ledger failed: {exc}") from None

    def close(self) -> None:
        """Close the Redis connection."""
        self._client.close()


def _refusal(outcome: list[Any], rate: float | None) -> Refusal | None:
    """What the charge script's answer says."""
    kind, value = outcome
    if kind == 0:
        return None
    if kind == 1:
        return Refusal(DAILY_LIMIT_REACHED, max(1, int(value)))
    assert rate is not None
    return rate_refusal(float(value), rate)
