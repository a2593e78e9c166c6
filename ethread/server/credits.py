"""What each call costs, and the ledger of what each key has spent today.

Costs follow the interface's table for its eleven methods and a hosted provider's (Infura's)
for the rest of the read side (docs/server.md lists them all); every other method costs
:data:`DEFAULT_COST` (1 credit): eth_chainId, eth_blockNumber, net_version,
web3_clientVersion, eth_subscribe, eth_unsubscribe, and unknown methods (which still take a
parse and a lookup). A request that is not even a valid call costs nothing.

The ledger is the authority on balances. Its check-and-debit happens under one lock, so
concurrent requests can never spend more than the balance, and a refused request is not
charged at all. Usage is kept in memory and written to SQLite (keyed by a digest of the key,
never the key) either on every debit (``flush_interval=0``) or every ``flush_interval``
seconds and at shutdown; a restart reads it back. The SQLite file is opened in exclusive
locking mode: a second server on the same ledger fails at start instead of double-spending.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

CREDITS: dict[str, int] = {
    "eth_getLogs": 255,
    "eth_getBlockReceipts": 1000,
    "eth_getUncleByBlockNumberAndIndex": 150,
    "eth_getUncleByBlockHashAndIndex": 150,
    "eth_getTransactionByBlockHashAndIndex": 150,
    "eth_getTransactionByBlockNumberAndIndex": 150,
    "eth_getProof": 150,
    "eth_getBlockByHash": 80,
    "eth_getBlockByNumber": 80,
    "eth_getTransactionByHash": 80,
    "eth_call": 80,
    # The rest of the read side, at Infura's prices (its credit cost table); a method Infura
    # does not price (eth_getStorageValues, web3_sha3, debug_getRaw*) at its default of 80.
    "eth_getTransactionReceipt": 80,
    "eth_getBalance": 80,
    "eth_getCode": 80,
    "eth_getStorageAt": 80,
    "eth_getStorageValues": 80,
    "eth_getTransactionCount": 80,
    "eth_getBlockTransactionCountByHash": 150,
    "eth_getBlockTransactionCountByNumber": 150,
    "eth_getUncleCountByBlockHash": 150,
    "eth_getUncleCountByBlockNumber": 150,
    "eth_feeHistory": 80,
    "eth_gasPrice": 80,
    "eth_maxPriorityFeePerGas": 80,
    "eth_blobBaseFee": 300,
    "eth_syncing": 5,
    "eth_accounts": 80,
    "net_listening": 5,
    "net_peerCount": 80,
    "web3_sha3": 80,
    "debug_getRawHeader": 80,
    "debug_getRawBlock": 80,
    "debug_getRawReceipts": 80,
    "debug_getRawTransaction": 80,
    "eth_newFilter": 80,
    "eth_newBlockFilter": 80,
    "eth_getFilterChanges": 140,
    "eth_getFilterLogs": 255,
    "eth_uninstallFilter": 80,
}
DEFAULT_COST = 1

ClockFn = Callable[[], float]


def cost_of(method: str) -> int:
    return CREDITS.get(method, DEFAULT_COST)


def utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def next_midnight(now: float) -> float:
    """The Unix time of the next 00:00 UTC, when every balance is full again."""
    moment = datetime.fromtimestamp(now, UTC)
    midnight = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight.timestamp()


def seconds_to_reset(now: float) -> int:
    return max(1, math.ceil(next_midnight(now) - now))


class LedgerError(RuntimeError):
    """The ledger file cannot be opened (unreadable, or held by another server)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was not admitted, and when trying again can succeed."""

    reason: str
    retry_after: int


class CreditLedger:
    """Daily usage per key id, persisted in SQLite."""

    def __init__(self, path: str = ":memory:", *, flush_interval: float = 1.0,
                 clock: ClockFn = time.time) -> None:
        self.path = path
        self.flush_interval = flush_interval
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                       timeout=0.5)
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # A write takes the exclusive lock now and keeps it: a second server fails here.
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS usage ("
                " key_id TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL,"
                " PRIMARY KEY (key_id, day))")
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the credit ledger {path}: {exc} "
                              "(is another server using it?)") from None
        start = clock()
        self._day = utc_day(start)
        self._day_ends = next_midnight(start)
        self._used: dict[str, int] = dict(self._db.execute(
            "SELECT key_id, used FROM usage WHERE day = ?", (self._day,)).fetchall())
        self._dirty: set[str] = set()

    def _roll(self, now: float) -> None:
        """A new UTC day starts every balance afresh (checked against a precomputed instant,
        so the common case costs one comparison)."""
        if now < self._day_ends:
            return
        self._flush_locked()
        self._day = utc_day(now)
        self._day_ends = next_midnight(now)
        self._used = {}

    def used(self, key_id: str) -> int:
        with self._lock:
            self._roll(self._clock())
            return self._used.get(key_id, 0)

    def try_debit(self, key_id: str, limit: int, cost: int) -> Refusal | None:
        """Charge ``cost`` if today's usage stays within ``limit``; otherwise charge nothing."""
        now = self._clock()
        with self._lock:
            self._roll(now)
            used = self._used.get(key_id, 0)
            if used + cost > limit:
                return Refusal("daily credit limit reached",
                               max(1, math.ceil(self._day_ends - now)))
            self._used[key_id] = used + cost
            self._dirty.add(key_id)
            if self.flush_interval <= 0:
                self._flush_locked()
        return None

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._dirty:
            return
        rows = [(key, self._day, self._used[key]) for key in self._dirty]
        self._db.executemany(
            "INSERT INTO usage (key_id, day, used) VALUES (?, ?, ?)"
            " ON CONFLICT (key_id, day) DO UPDATE SET used = excluded.used", rows)
        self._dirty.clear()

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._db.close()


class RateLimiter:
    """Credits per second per key, as a bucket that may go into debt.

    A request is admitted while the key's bucket is not negative, then its whole cost is taken,
    so a single call dearer than one second's allowance still passes (then the key waits).
    Over any window the key spends at most ``rate`` per second plus one second's burst.
    """

    def __init__(self, clock: ClockFn = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key_id: str, rate: float) -> Refusal | None:
        with self._lock:
            tokens = self._level(key_id, rate, self._clock())
            if tokens < 0:
                return Refusal("rate limit exceeded", max(1, math.ceil(-tokens / rate)))
        return None

    def take(self, key_id: str, rate: float, cost: int) -> None:
        with self._lock:
            now = self._clock()
            self._buckets[key_id] = (self._level(key_id, rate, now) - cost, now)

    def _level(self, key_id: str, rate: float, now: float) -> float:
        tokens, at = self._buckets.get(key_id, (rate, now))
        return min(rate, tokens + (now - at) * rate)


class Billing:
    """Admission of a request for a key: rate limit first, then the daily balance.

    Nothing is taken unless both agree, so a refused request costs nothing.
    """

    def __init__(self, ledger: CreditLedger, rates: RateLimiter | None = None) -> None:
        self.ledger = ledger
        self.rates = rates if rates is not None else RateLimiter()

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               ) -> Refusal | None:
        if rate is not None:
            refusal = self.rates.check(key_id, rate)
            if refusal is not None:
                return refusal
        refusal = self.ledger.try_debit(key_id, daily_limit, cost)
        if refusal is None and rate is not None:
            self.rates.take(key_id, rate, cost)
        return refusal
