"""The key store (``ethread.server.keys.keystore``), each engine (memory, SQLite, Redis): keys
and usage kept, bad key fields named, keys found by id, prefix or text."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ethread.server.billing.ledger import utc_day
from ethread.server.keys.keystore import (
    KeyStoreError,
    RedisKeyStore,
    SQLiteKeyStore,
    find,
    key_id_of,
    make_record,
)


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        made: Any = SQLiteKeyStore(":memory:")
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
