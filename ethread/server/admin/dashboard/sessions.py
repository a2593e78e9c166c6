"""Sessions in a cookie saying who (``admin``, or a key's id) and until when, signed with a key
derived from the admin token, so every server sharing the token accepts it. A logout keeps
the session's random part in the key store until it would have expired. Each form carries a
CSRF token, an HMAC of its session (or of the login page's random cookie). The cookies are
HttpOnly and SameSite=Strict (Secure over HTTPS).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

SESSION_SECONDS = 8 * 3600
ADMIN, KEY = "admin", "key"


@dataclass(frozen=True, slots=True)
class Session:
    """Who a valid cookie speaks for."""

    kind: str
    """``admin`` or ``key``."""
    subject: str
    """``admin``, or the key's id."""
    value: str
    """The cookie's value (what the CSRF token is made from)."""
    nonce: str = ""
    """The session's random part: what a logout ends it by (in the key store)."""
    expires: float = 0.0
    """When it would have expired (a logout is kept until then)."""


class Sessions:
    """Signs and checks session cookies and CSRF tokens."""

    def __init__(self, admin_token: str) -> None:
        self._secret = hmac.new(admin_token.encode(), b"ethread dashboard sessions",
                                hashlib.sha256).digest()

    def _mac(self, text: str) -> str:
        digest = hmac.new(self._secret, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def issue(self, kind: str, subject: str, now: float | None = None) -> str:
        """A cookie value for a new session."""
        expires = int((time.time() if now is None else now) + SESSION_SECONDS)
        payload = f"{kind}.{subject}.{expires}.{secrets.token_urlsafe(12)}"
        return f"{payload}.{self._mac(payload)}"

    def check(self, value: str | None, kind: str, now: float | None = None) -> Session | None:
        """The session a cookie value holds, if it is signed, of ``kind`` and not expired."""
        if not value or len(value) > 512:
            return None
        payload, _, mac = value.rpartition(".")
        if not payload or not hmac.compare_digest(mac, self._mac(payload)):
            return None
        parts = payload.split(".")
        if len(parts) != 4 or parts[0] != kind or not parts[2].isdigit():
            return None
        if int(parts[2]) < (time.time() if now is None else now):
            return None
        return Session(kind, parts[1], value, parts[3], float(parts[2]))

    def csrf(self, bound_to: str) -> str:
        """The CSRF token of forms served to the session (or login cookie) ``bound_to``."""
        return self._mac("csrf." + bound_to)

    def csrf_ok(self, bound_to: str | None, token: str | None) -> bool:
        """Whether a posted form's token was made for ``bound_to``."""
        return bool(bound_to) and bool(token) and hmac.compare_digest(
            str(token), self.csrf(str(bound_to)))


def new_login_nonce() -> str:
    """The random value of the login page's cookie (what its form's token is bound to)."""
    return secrets.token_urlsafe(16)
