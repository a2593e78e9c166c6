"""The pieces of issue 28 on their own: the key store (each engine), the key ring's live
updates, the abuse table, the dashboard's sessions, how an answer is classed, and ``ethread
keys`` refusing bad input with a message, never a traceback."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ethread.cli import main
from ethread.server.admin.dashboard.sessions import Sessions
from ethread.server.billing.ledger import utc_day
from ethread.server.config import KeyConfig
from ethread.server.keys.abuse import FailedAttempts, address_of
from ethread.server.keys.auth import KeyRing
from ethread.server.keys.keystore import (
    KeyStoreError,
    MemoryKeyStore,
    RedisKeyStore,
    SQLiteKeyStore,
    find,
    key_id_of,
    make_record,
)
from ethread.server.observe import method_label, outcome_of
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.close()


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        made: Any = MemoryKeyStore()
    elif request.param == "sqlite":
        made = SQLiteKeyStore(str(tmp_path / "keys.sqlite3"))
    else:
        made = RedisKeyStore(request.getfixturevalue("redis_url"), prefix=f"t{id(tmp_path)}:")
    try:
        yield made
    finally:
        made.close()


def test_every_engine_keeps_keys_and_usage(store: Any) -> None:
    today = utc_day(time.time())
    version = store.version()
    key, record = make_record(label="a", daily_credits=10, networks=["main"],
                              methods=["eth_call"])
    store.add(record)
    assert store.version() > version
    assert store.records() == [record]
    assert record.key_id == key_id_of(key) and record.prefix == key[:8]
    store.add_usage(today, {(record.key_id, "eth_call", "ok"): 3})
    store.add_usage(today, {(record.key_id, "eth_call", "ok"): 2,
                                   (record.key_id, "batch", "error"): 1})
    assert store.usage(record.key_id, today) == {("eth_call", "ok"): 5,
                                                        ("batch", "error"): 1}
    assert store.usage(record.key_id, "1999-01-01") == {}
    before = store.version()
    assert store.revoke(record.key_id, 123.0) is True
    assert store.revoke(record.key_id, 124.0) is False
    assert store.version() > before
    assert store.records()[0].revoked == 123.0


@pytest.mark.parametrize(("fields", "named"), [
    ({"daily_credits": -1}, "daily_credits"),
    ({"daily_credits": 10**16}, "daily_credits"),
    ({"daily_credits": True}, "daily_credits"),
    ({"credits_per_second": 0}, "credits_per_second"),
    ({"credits_per_second": "5"}, "credits_per_second"),
    ({"label": "x" * 101}, "label"),
    ({"label": "tab\there"}, "label"),
    ({"networks": ["a b"]}, "networks"),
    ({"methods": ["m"] * 0 + [f"m{i}" for i in range(65)]}, "methods"),
    ({"methods": [None]}, "methods"),
])
def test_bad_key_fields_are_named(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(KeyStoreError, match=named):
        make_record(**fields)


def test_keys_are_found_by_id_prefix_or_text() -> None:
    key, record = make_record()
    _, other = make_record()
    records = [record, other]
    assert find(records, key) is record
    assert find(records, record.key_id) is record
    assert find(records, record.prefix) is record
    assert find(records, record.key_id[:12]) is record
    for bad in ("", "ek_", "x" * 300, "ek_zzzzzzzz-not-a-key"):
        with pytest.raises(KeyStoreError):
            find(records, bad)


def test_the_ring_takes_issued_keys_and_marks_revoked_ones() -> None:
    key, record = make_record(daily_credits=7, networks=["main"])
    ring = KeyRing((KeyConfig(key="configured-key-1"),))
    assert ring.lookup(key) is None
    ring.update([record])
    found = ring.lookup(key)
    assert found is not None and found.daily_credits == 7 and found.networks == {"main"}
    assert ring.by_id(record.key_id) is found and ring.configured == 1
    ring.update([record])  # unchanged: the same object, so cached gates stay valid
    assert ring.lookup(key) is found and not found.revoked
    ring.update([])
    assert ring.lookup(key) is None and found.revoked
    assert ring.lookup("configured-key-1") is not None


def test_the_abuse_table_refuses_and_stays_bounded() -> None:
    now = [0.0]
    table = FailedAttempts(limit=3, window=60, max_addresses=100, clock=lambda: now[0])
    for _ in range(3):
        assert table.refused_for("10.0.0.1") == 0
        table.failed("10.0.0.1")
    assert table.refused_for("10.0.0.1") == 1
    now[0] += 1.5
    assert table.refused_for("10.0.0.1") == 0
    for _ in range(3):
        table.failed("10.0.0.1")
    assert table.refused_for("10.0.0.1") == 2  # doubled
    for i in range(10_000):
        table.failed(f"192.168.{i // 256}.{i % 256}")
    assert len(table) == 100
    assert address_of(("2001:db8::1", 5)) == address_of(("2001:db8::ffff", 6))
    assert address_of(None) is None


def test_sessions_are_signed_and_expire() -> None:
    sessions = Sessions("a-token-of-sixteen-chars")
    value = sessions.issue("admin", "admin", now=1000.0)
    assert sessions.check(value, "admin", now=1001.0) is not None
    assert sessions.check(value, "key", now=1001.0) is None
    assert sessions.check(value, "admin", now=10**9) is None
    forged = value.replace("admin.admin", "admin.other", 1)
    assert sessions.check(forged, "admin", now=1001.0) is None
    assert Sessions("another-token-sixteen").check(value, "admin", now=1001.0) is None
    token = sessions.csrf(value)
    assert sessions.csrf_ok(value, token)
    assert not sessions.csrf_ok(value, None) and not sessions.csrf_ok(None, token)
    assert not sessions.csrf_ok(sessions.issue("admin", "admin"), token)


@pytest.mark.parametrize(("status", "answer", "outcome"), [
    (200, b'{"jsonrpc":"2.0","id":1,"result":"0x1"}', "ok"),
    (200, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}', "error"),
    (200, b'[{"jsonrpc":"2.0","id":1,"error":{"code":3}}]', "error"),
    (401, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001}}', "refused"),
    (429, None, "refused"),
    (204, None, "ok"),
])
def test_answers_are_classed(status: int, answer: bytes | None, outcome: str) -> None:
    assert outcome_of(status, answer) == outcome


def test_method_labels_are_bounded() -> None:
    assert method_label("eth_call") == "eth_call"
    assert method_label("batch(7)") == "batch"
    assert method_label("x" * 1000) == "other"
    assert method_label("invalid") == "invalid"


@pytest.mark.parametrize("argv", [
    ["keys", "list", "--ledger", ":memory:"],
    ["keys", "list", "--ledger", "redis://"],
    ["keys", "revoke", "ek_nobody-at-all", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "usage", "ek_nobody-at-all", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "create", "--daily-credits", "-5", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "create", "--network", "two words", "--ledger", "{tmp}/k.sqlite3"],
    ["keys", "list", "--config", "{tmp}/missing.toml"],
])
def test_keys_command_errors_are_messages(argv: list[str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code in (1, 2)
    assert err.startswith("ethread keys: error: ") and "Traceback" not in err


def test_keys_command_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = str(tmp_path / "credits.ledger")  # a mapped ledger: keys in credits.keys.sqlite3
    assert main(["keys", "create", "--ledger", ledger, "--label", "cli"]) == 0
    key = capsys.readouterr().out.strip()
    assert (tmp_path / "credits.keys.sqlite3").exists()
    assert main(["keys", "list", "--ledger", ledger]) == 0
    listed = capsys.readouterr().out
    assert key[:8] in listed and key not in listed
    assert main(["keys", "usage", key, "--ledger", ledger]) == 0
    assert "credits spent: 0" in capsys.readouterr().out
    assert main(["keys", "revoke", key[:8], "--ledger", ledger]) == 0
    assert main(["keys", "revoke", key[:8], "--ledger", ledger]) == 1
    assert "already revoked" in capsys.readouterr().err
