"""The key ring (``ethread.server.keys.auth``): keys issued while serving are taken, revoked
ones marked."""

from __future__ import annotations

from ethread.server.config import KeyConfig
from ethread.server.keys.auth import KeyRing
from ethread.server.keys.keystore import (
    make_record,
)


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
