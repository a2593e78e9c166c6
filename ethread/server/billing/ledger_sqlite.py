"""The credit ledger in a SQLite file, shared by every process of one machine (docs/scaling.md,
"The ledger", compares the engines).

Each debit is its own short transaction (a busy writer waits up to ``busy_timeout``). Without
a rate limit, check and debit are one conditional upsert; with one, bucket and usage are read
and written in one ``BEGIN IMMEDIATE`` transaction, as is a busy worker's turn
(:meth:`SQLiteLedger.charge_many`). WAL with ``synchronous=NORMAL``: a kill loses no debit, an
OS crash the commits since the last checkpoint. Past days' rows go on a new day's first charge.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from .ledger import (
    DAILY_LIMIT_REACHED,
    Charge,
    LedgerError,
    LedgerUnavailable,
    Refusal,
    next_midnight,
    rate_level,
    rate_refusal,
    seconds_to_reset,
    utc_day,
)

BUSY_TIMEOUT = 5.0
"""Seconds a debit waits for another process's transaction before the request is refused."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS usage ("
    " key_id TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL,"
    " PRIMARY KEY (key_id, day))",
    "CREATE TABLE IF NOT EXISTS rate ("
    " key_id TEXT PRIMARY KEY, tokens REAL NOT NULL, at REAL NOT NULL)",
)

# ?1 key id, ?2 day, ?3 cost, ?4 daily limit. A row is written (changes() == 1) exactly when
# the cost fits; the WHERE on the SELECT is also what SQLite needs to parse the upsert.
DEBIT = (
    "INSERT INTO usage (key_id, day, used) SELECT ?1, ?2, ?3 WHERE ?3 <= ?4"
    " ON CONFLICT (key_id, day) DO UPDATE SET used = used + excluded.used"
    " WHERE used + excluded.used <= ?4")


# ?1 key id, ?2 day, ?3 credits given back (today's usage never goes below zero)
REFUND = "UPDATE usage SET used = MAX(0, used - ?3) WHERE key_id = ?1 AND day = ?2"


def open_sqlite(path: str, schema: Iterable[str], busy_timeout: float,
                what: str) -> sqlite3.Connection:
    """A connection to ``path`` shared by threads and processes (WAL, autocommit), with
    ``schema`` applied; :class:`LedgerError` naming ``what`` when it cannot be opened."""
    # Processes opening a new file at once can meet "database is locked" without SQLite's busy
    # handler being asked (switching to WAL, the first schema write): retried until the timeout.
    deadline = time.monotonic() + busy_timeout
    while True:
        db = None
        try:
            db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                 timeout=busy_timeout)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            for statement in schema:
                db.execute(statement)
            return db
        except sqlite3.OperationalError as exc:
            if db is not None:
                db.close()
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise LedgerError(f"cannot open {what} {path}: {exc}") from None
            time.sleep(0.01)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open {what} {path}: {exc}") from None


class SQLiteLedger:
    """Daily usage and rate buckets per key id in one SQLite file (or ``:memory:``)."""

    def __init__(self, path: str = ":memory:", *, clock: Callable[[], float] = time.time,
                 busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._db = open_sqlite(path, SCHEMA, busy_timeout, "the credit ledger")
        self._day = ""
        self._day_ends = 0.0

    def _today(self, now: float) -> str:
        """Today's name (one comparison per debit); on a new day, earlier days' rows go."""
        if now >= self._day_ends:
            self._day = utc_day(now)
            self._day_ends = next_midnight(now)
            self._db.execute("DELETE FROM usage WHERE day < ?", (self._day,))
        return self._day

    def used(self, key_id: str) -> int:
        """Credits the key has spent today (UTC)."""
        with self._lock:
            day = self._today(self._clock())
            row = self._db.execute("SELECT used FROM usage WHERE key_id = ? AND day = ?",
                                   (key_id, day)).fetchone()
        return int(row[0]) if row else 0

    def refund(self, key_id: str, cost: int) -> None:
        """Give back in one statement; see :meth:`Ledger.refund`."""
        try:
            with self._lock:
                day = self._today(self._clock())
                self._db.execute(REFUND, (key_id, day, cost))
        except sqlite3.Error as exc:
            raise LedgerUnavailable(f"the credit ledger {self.path} failed: {exc}") from None

    def charge(self, key_id: str, daily_limit: int, rate: float | None, cost: int,
               need: int = 0) -> Refusal | None:
        """Charge atomically in one SQLite transaction; see :meth:`Ledger.charge`."""
        now = self._clock()
        try:
            with self._lock:
                day = self._today(now)
                if rate is None:
                    if self._db.execute(DEBIT, (key_id, day, cost, daily_limit)).rowcount == 1:
                        return None
                    return Refusal(DAILY_LIMIT_REACHED, seconds_to_reset(now))
                return self._in_transaction(day, now,
                                            ((key_id, daily_limit, rate, cost, need),))[0]
        except sqlite3.Error as exc:
            raise LedgerUnavailable(f"the credit ledger {self.path} failed: {exc}") from None

    def charge_many(self, charges: Sequence[Charge]) -> list[Refusal | None]:
        """Every charge in one transaction (:meth:`_in_transaction`); see
        :meth:`Ledger.charge_many`. A failure rolls them all back and raises."""
        now = self._clock()
        try:
            with self._lock:
                return self._in_transaction(self._today(now), now, charges)
        except sqlite3.Error as exc:
            raise LedgerUnavailable(f"the credit ledger {self.path} failed: {exc}") from None

    def _in_transaction(self, day: str, now: float,
                        charges: Sequence[Charge]) -> list[Refusal | None]:
        """The charges in one ``BEGIN IMMEDIATE`` transaction (the write lock taken before
        anything is read), committed; rolled back if anything fails."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            outcomes = [self._take(key_id, day, daily_limit, rate, cost, need, now)
                        for key_id, daily_limit, rate, cost, need in charges]
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return outcomes

    def _take(self, key_id: str, day: str, daily_limit: int, rate: float | None, cost: int,
              need: int, now: float) -> Refusal | None:
        """Inside a transaction: one charge. A refusal has written nothing."""
        db = self._db
        level = 0.0
        if rate is not None:
            row = db.execute("SELECT tokens, at FROM rate WHERE key_id = ?",
                             (key_id,)).fetchone()
            level = rate if row is None else rate_level(row[0], row[1], rate, now)
            if level < need:
                return rate_refusal(level - need, rate)
        if db.execute(DEBIT, (key_id, day, cost, daily_limit)).rowcount != 1:
            return Refusal(DAILY_LIMIT_REACHED, seconds_to_reset(now))
        if rate is not None:
            db.execute("INSERT INTO rate (key_id, tokens, at) VALUES (?, ?, ?)"
                       " ON CONFLICT (key_id) DO UPDATE SET tokens = excluded.tokens,"
                       " at = excluded.at", (key_id, level - cost, now))
        return None

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
