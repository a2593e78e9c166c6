"""API keys issued while the service runs, kept beside the ledger they spend from
(docs/server.md, "Issuing keys while serving").

Issued keys live in a store every worker reads: the ledger's SQLite file (``X.keys.sqlite3``
beside a mapped ``X.ledger``) or its Redis database, polled by :mod:`.sync`. A key is stored as
the SHA-256 of its text (its ledger id) and its first :data:`PREFIX_LENGTH` characters, never
as itself (192 random bits make a fast hash enough). The store also keeps each key's requests a
day by method and outcome; credits spent are the ledger's figure.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ..billing.ledger import LedgerError, ledger_engine, utc_day
from ..billing.ledger_redis import redis_client_module
from ..billing.ledger_sqlite import open_sqlite
from ..method_rules import RULE

KEY_PREFIX = "ek_"
"""Issued keys start with this, so that a leaked one is recognisable (secret scanners)."""
PREFIX_LENGTH = 8
"""Characters of a key kept for display: ``ek_`` and five random ones."""
POLL_SECONDS = 0.25
FLUSH_SECONDS = 0.5
USAGE_DAYS_KEPT = 8
MAX_LABEL = 100
MAX_LIST = 64
"""Most networks or methods one key may be limited to."""
MAX_DAILY_CREDITS = 10**15
MAX_RATE = 1e12
_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
Counts = Mapping[tuple[str, str, str], int]
"""(key id, method, outcome) -> requests."""


class KeyStoreError(ValueError):
    """A request to the key store that cannot be done (unknown key, bad value); the message
    says why and is fit to show to the caller."""


def key_id_of(key: str) -> str:
    """The id a key is stored, billed and logged under: the SHA-256 hex of its text, never
    the key itself."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    """A fresh key: ``ek_`` and 32 URL-safe characters (192 random bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """What the store holds of one key: never its text."""

    key_id: str
    """SHA-256 hex of the key."""
    prefix: str
    """Its first characters, to tell keys apart in a list."""
    label: str = ""
    daily_credits: int = 3_000_000
    credits_per_second: float | None = None
    networks: tuple[str, ...] = ()
    """Networks it may be used on (empty: every one)."""
    methods: tuple[str, ...] = ()
    """Rules of the methods it may call (empty: every one): names, namespaces (``debug_*``),
    denials (``!trace_*``); see :mod:`.method_rules`."""
    created: float = 0.0
    revoked: float | None = None
    """When it was revoked (None: it is live)."""

    def to_json(self) -> str:
        """The stored form."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> KeyRecord:
        """Read the stored form back (a record it cannot read raises KeyStoreError)."""
        try:
            data = json.loads(text)
            return cls(key_id=str(data["key_id"]), prefix=str(data["prefix"]),
                       label=str(data.get("label", "")),
                       daily_credits=int(data.get("daily_credits", 0)),
                       credits_per_second=(None if data.get("credits_per_second") is None
                                           else float(data["credits_per_second"])),
                       networks=tuple(str(n) for n in data.get("networks", ())),
                       methods=tuple(str(m) for m in data.get("methods", ())),
                       created=float(data.get("created", 0.0)),
                       revoked=None if data.get("revoked") is None else float(data["revoked"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise KeyStoreError(f"a stored key record cannot be read: {exc}") from None

    def public(self) -> dict[str, Any]:
        """What the admin API and ``ethread keys list --json`` show of it: its fields in order,
        ``key_id`` named ``id``."""
        shown = asdict(self)
        return {"id": shown.pop("key_id"), **shown}


def make_record(*, label: str = "", daily_credits: int = 3_000_000,
                credits_per_second: float | None = None, networks: Iterable[str] = (),
                methods: Iterable[str] = (), now: float | None = None) -> tuple[str, KeyRecord]:
    """A new key and its record, every value checked (KeyStoreError naming the bad one)."""
    if not isinstance(label, str) or len(label) > MAX_LABEL or any(
            not c.isprintable() for c in label):
        raise KeyStoreError(f"label: at most {MAX_LABEL} printable characters")
    if (isinstance(daily_credits, bool) or not isinstance(daily_credits, int)
            or not 0 <= daily_credits <= MAX_DAILY_CREDITS):
        raise KeyStoreError(f"daily_credits: an integer from 0 to {MAX_DAILY_CREDITS}")
    if credits_per_second is not None and (
            isinstance(credits_per_second, bool)
            or not isinstance(credits_per_second, int | float)
            or not 0 < credits_per_second <= MAX_RATE):
        raise KeyStoreError(f"credits_per_second: a number above 0, at most {MAX_RATE:g}")
    nets = _names(networks, "networks")
    meths = _names(methods, "methods", RULE)
    key = new_key()
    record = KeyRecord(key_id=key_id_of(key), prefix=key[:PREFIX_LENGTH], label=label,
                       daily_credits=daily_credits,
                       credits_per_second=(None if credits_per_second is None
                                           else float(credits_per_second)),
                       networks=nets, methods=meths,
                       created=time.time() if now is None else now)
    return key, record


def _names(values: Iterable[str], what: str, pattern: re.Pattern[str] = _NAME) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    out = []
    for value in values:
        if not isinstance(value, str) or not pattern.match(value):
            extra = (", optionally ending in * (a namespace) or after ! (denied)"
                     if pattern is RULE else "")
            raise KeyStoreError(f"{what}: names of letters, digits and _.:- (1-64 characters)"
                                f"{extra}, got {str(value)[:70]!r}")
        if value not in out:
            out.append(value)
        if len(out) > MAX_LIST:
            raise KeyStoreError(f"{what}: at most {MAX_LIST}")
    return tuple(out)


def find(records: Iterable[KeyRecord], ident: str) -> KeyRecord:
    """The record ``ident`` names: its id, a unique start of its id or of its display prefix
    (at least 6 characters), or the key itself."""
    ident = ident.strip()
    if not ident or len(ident) > 200:
        raise KeyStoreError("name a key by its id, its prefix or the key itself")
    records = list(records)
    by_key = key_id_of(ident)
    for record in records:
        if record.key_id in (ident.lower(), by_key):
            return record
    if len(ident) < 6:
        raise KeyStoreError("a key's prefix needs at least 6 characters")
    matches = [r for r in records if r.prefix.startswith(ident) or (
        len(ident) >= 8 and r.key_id.startswith(ident.lower()))]
    if not matches:
        raise KeyStoreError(f"no issued key matches {ident[:PREFIX_LENGTH]!r}")
    if len(matches) > 1:
        raise KeyStoreError(f"{len(matches)} keys match {ident[:PREFIX_LENGTH]!r}: "
                            "give more of the id")
    return matches[0]


class KeyStore(Protocol):
    """Issued keys and their daily usage, shared by every worker that opens the same store."""

    def version(self) -> int:
        """A counter that moves whenever a key is added or revoked."""

    def records(self) -> list[KeyRecord]:
        """Every issued key, revoked ones included."""

    def add(self, record: KeyRecord) -> None:
        """Store a new key."""

    def revoke(self, key_id: str, at: float) -> bool:
        """Mark a key revoked; False when it already was."""

    def add_usage(self, day: str, counts: Counts) -> None:
        """Add requests to the day's counts."""

    def usage(self, key_id: str, day: str) -> dict[tuple[str, str], int]:
        """(method, outcome) -> requests of the key on ``day``."""

    def end_session(self, session: str, until: float) -> None:
        """Mark a dashboard session (its random part) logged out, until ``until`` (Unix time:
        when it would have expired anyway)."""

    def session_ended(self, session: str) -> bool:
        """Whether a dashboard session was logged out."""

    def close(self) -> None:
        """Release the store's file or connection."""


def keystore_path(ledger: str) -> str:
    """Where the SQLite key store of a file ledger lives: the SQLite ledger's own file, or
    ``X.keys.sqlite3`` beside a mapped ``X.ledger``."""
    if ledger_engine(ledger) == "mapped":
        return str(Path(ledger).with_suffix(".keys.sqlite3"))
    return ledger


def open_keystore(ledger: str) -> KeyStore:
    """The key store beside the ledger ``ledger`` names (LedgerError when it cannot open)."""
    if ledger_engine(ledger) == "redis":
        return RedisKeyStore(ledger)
    return SQLiteKeyStore(keystore_path(ledger))  # (":memory:": a store in this process only)


SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS api_keys (key_id TEXT PRIMARY KEY, record TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS api_keys_version (one INTEGER PRIMARY KEY CHECK (one = 1),"
    " version INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO api_keys_version (one, version) VALUES (1, 0)",
    "CREATE TABLE IF NOT EXISTS api_key_usage (day TEXT NOT NULL, key_id TEXT NOT NULL,"
    " method TEXT NOT NULL, outcome TEXT NOT NULL, requests INTEGER NOT NULL,"
    " PRIMARY KEY (day, key_id, method, outcome))",
    "CREATE TABLE IF NOT EXISTS dashboard_sessions_ended (session TEXT PRIMARY KEY,"
    " until REAL NOT NULL)",
)
_BUMP_VERSION = ("UPDATE api_keys_version SET version = version + 1", ())


class SQLiteKeyStore:
    """Keys in a SQLite file (the SQLite ledger's own, or one beside a mapped ledger), or in
    this process's memory only (``:memory:``, beside a ``:memory:`` ledger)."""

    def __init__(self, path: str, busy_timeout: float = 5.0) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = open_sqlite(path, SQLITE_SCHEMA, busy_timeout, "the key store")

    def _run(self, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> int:
        """Statements in one write transaction; the rows the last one changed."""
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                changed = 0
                for sql, args in statements:
                    changed = db.execute(sql, args).rowcount
                db.execute("COMMIT")
                return changed
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise LedgerError(f"the key store {self.path} failed: {exc}") from None

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise LedgerError(f"the key store {self.path} failed: {exc}") from None

    def version(self) -> int:
        """The store's change counter."""
        return int(self._read("SELECT version FROM api_keys_version")[0][0])

    def records(self) -> list[KeyRecord]:
        """Every issued key, revoked ones included."""
        return [KeyRecord.from_json(row[0])
                for row in self._read("SELECT record FROM api_keys ORDER BY rowid")]

    def add(self, record: KeyRecord) -> None:
        """Store a new key (and move the counter)."""
        self._run((("INSERT INTO api_keys (key_id, record) VALUES (?, ?)",
                    (record.key_id, record.to_json())), _BUMP_VERSION))

    def revoke(self, key_id: str, at: float) -> bool:
        """Mark a key revoked (and move the counter); False when it already was."""
        rows = self._read("SELECT record FROM api_keys WHERE key_id = ?", (key_id,))
        if not rows:
            return False
        record = KeyRecord.from_json(rows[0][0])
        if record.revoked is not None:
            return False
        self._run((("UPDATE api_keys SET record = ? WHERE key_id = ?",
                    (replace(record, revoked=at).to_json(), key_id)), _BUMP_VERSION))
        return True

    def add_usage(self, day: str, counts: Counts) -> None:
        """Add requests to the day's counts."""
        if not counts:
            return
        upsert = ("INSERT INTO api_key_usage (day, key_id, method, outcome, requests)"
                  " VALUES (?, ?, ?, ?, ?) ON CONFLICT (day, key_id, method, outcome)"
                  " DO UPDATE SET requests = requests + excluded.requests")
        oldest = utc_day(time.time() - USAGE_DAYS_KEPT * 86400)
        self._run([("DELETE FROM api_key_usage WHERE day < ?", (oldest,)),
                   *((upsert, (day, k, m, o, n)) for (k, m, o), n in counts.items())])

    def usage(self, key_id: str, day: str) -> dict[tuple[str, str], int]:
        """(method, outcome) -> requests of the key on ``day``."""
        rows = self._read("SELECT method, outcome, requests FROM api_key_usage"
                          " WHERE day = ? AND key_id = ?", (day, key_id))
        return {(m, o): int(n) for m, o, n in rows}

    def end_session(self, session: str, until: float) -> None:
        """Mark a dashboard session logged out until ``until`` (and forget those past theirs)."""
        self._run([("DELETE FROM dashboard_sessions_ended WHERE until < ?", (time.time(),)),
                   ("INSERT OR REPLACE INTO dashboard_sessions_ended (session, until)"
                    " VALUES (?, ?)", (session, until))])

    def session_ended(self, session: str) -> bool:
        """Whether a dashboard session was logged out."""
        return bool(self._read("SELECT 1 FROM dashboard_sessions_ended WHERE session = ? AND"
                               " until >= ?", (session, time.time())))

    def close(self) -> None:
        """Release the store."""
        with self._lock:
            self._db.close()


REDIS_PREFIX = "ethread:"
_SEP = "\x1f"


class RedisKeyStore:
    """Keys in the Redis database of the ledger: the hash ``ethread:keys`` (id -> record),
    the counter ``ethread:keys:version``, and ``ethread:keyusage:<day>:<id>`` hashes of
    ``method\\x1foutcome`` -> requests (kept :data:`USAGE_DAYS_KEPT` days)."""

    def __init__(self, url: str, prefix: str = REDIS_PREFIX) -> None:
        redis = redis_client_module(url, "a Redis key store")
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._client: Any = redis.Redis.from_url(url, socket_timeout=2.0,
                                                 socket_connect_timeout=2.0)
        self._keys = prefix + "keys"
        self._version = prefix + "keys:version"
        self._usage = prefix + "keyusage:"
        self._sessions = prefix + "session-ended:"
        try:
            self._client.ping()
        except self._errors as exc:
            self._client.close()
            raise LedgerError(f"cannot reach the Redis key store: {exc}") from None

    def _do(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self._errors as exc:
            raise LedgerError(f"the Redis key store failed: {exc}") from None

    def version(self) -> int:
        """The store's change counter."""
        return int(self._do(self._client.get, self._version) or 0)

    def records(self) -> list[KeyRecord]:
        """Every issued key, revoked ones included."""
        found = self._do(self._client.hgetall, self._keys)
        records = [KeyRecord.from_json(v) for v in found.values()]
        return sorted(records, key=lambda r: (r.created, r.key_id))

    def add(self, record: KeyRecord) -> None:
        """Store a new key (and move the counter)."""
        self._put(record)

    def revoke(self, key_id: str, at: float) -> bool:
        """Mark a key revoked (and move the counter); False when it already was."""
        text = self._do(self._client.hget, self._keys, key_id)
        if text is None:
            return False
        record = KeyRecord.from_json(text)
        if record.revoked is not None:
            return False
        self._put(replace(record, revoked=at))
        return True

    def _put(self, record: KeyRecord) -> None:
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(self._keys, record.key_id, record.to_json())
        pipe.incr(self._version)
        self._do(pipe.execute)

    def add_usage(self, day: str, counts: Counts) -> None:
        """Add requests to the day's counts."""
        if not counts:
            return
        pipe = self._client.pipeline(transaction=False)
        touched = set()
        for (key_id, method, outcome), n in counts.items():
            name = f"{self._usage}{day}:{key_id}"
            pipe.hincrby(name, f"{method}{_SEP}{outcome}", n)
            touched.add(name)
        for name in touched:
            pipe.expire(name, USAGE_DAYS_KEPT * 86400)
        self._do(pipe.execute)

    def usage(self, key_id: str, day: str) -> dict[tuple[str, str], int]:
        """(method, outcome) -> requests of the key on ``day``."""
        found = self._do(self._client.hgetall, f"{self._usage}{day}:{key_id}")
        out = {}
        for field_name, n in found.items():
            method, _, outcome = field_name.decode().partition(_SEP)
            out[(method, outcome)] = int(n)
        return out

    def end_session(self, session: str, until: float) -> None:
        """Mark a dashboard session logged out until ``until`` (a key that expires then)."""
        seconds = max(1, int(until - time.time()) + 1)
        self._do(self._client.set, f"{self._sessions}{session}", b"1", seconds)

    def session_ended(self, session: str) -> bool:
        """Whether a dashboard session was logged out."""
        return bool(self._do(self._client.exists, f"{self._sessions}{session}"))

    def close(self) -> None:
        """Release the store."""
        self._client.close()
