"""The dashboard's sessions (``ethread.server.admin.dashboard.sessions``): signed, and expiring."""

from __future__ import annotations

from ethread.server.admin.dashboard.sessions import Sessions


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
