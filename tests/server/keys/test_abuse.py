"""Failed attempts per address (``ethread.server.keys.abuse``): refused past the limit, and the
table bounded."""

from __future__ import annotations

from ethread.server.keys.abuse import FailedAttempts, address_of


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
