"""The dashboard's routes (under ``/dashboard``).

On the admin address (``admin_host:admin_port``) both logins are offered; on the JSON-RPC
ports (with ``dashboard = true``) only a key's holder logs in, with the key. Every form is
posted with its CSRF token, and a request whose ``Origin`` is not the page's own is refused.
Wrong keys or tokens count against the client's address like unknown keys on ``/v3/``
(:mod:`..abuse`), in a stricter table of their own.
"""

from __future__ import annotations

import hmac
from typing import Any, Protocol
from urllib.parse import parse_qs

from ...asgi import Receive, Scope, Send
from ...billing.ledger import LedgerError
from ...keys.abuse import FailedAttempts, address_of
from ...keys.keystore import KeyStore, KeyStoreError, find
from ...keys.manage import issue, revoke, usage_report
from ...service import Service
from ..web import (
    BadRequest,
    cookie,
    cookies_of,
    headers_of,
    is_https,
    read_form,
    redirect,
    send_bytes,
    send_html,
)
from . import pages
from .sessions import ADMIN, KEY, SESSION_SECONDS, Sessions, new_login_nonce


class Site(Protocol):
    """What the pages need of the admin site that holds them (:class:`..admin.AdminSite`)."""

    service: Service
    store: KeyStore
    failed_logins: FailedAttempts

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the admin token."""

    async def reload(self) -> None:
        """Read the keys again in this worker."""

ADMIN_COOKIE, KEY_COOKIE, LOGIN_COOKIE = "ethread_admin", "ethread_key", "ethread_login"
PATH = "/dashboard"


class Dashboard:
    """The pages of one server process."""

    def __init__(self, site: Site, sessions: Sessions) -> None:
        self.site = site
        self.service = site.service
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send, *,
                       admin: bool) -> None:
        path: str = scope["path"].rstrip("/") or "/"
        method = scope["method"]
        try:
            if method == "GET" and path == PATH + "/style.css":
                await send_bytes(send, 200, pages.STYLE, b"text/css; charset=utf-8")
            elif method == "GET" and path == PATH:
                await self.home(scope, send, admin)
            elif method == "GET" and path == PATH + "/key":
                await self.key_page(scope, send)
            elif method == "GET" and admin and path == PATH + "/admin":
                await self.admin_page(scope, send)
            elif method == "GET" and admin and path == PATH + "/admin/key":
                await self.admin_key_page(scope, send)
            elif method == "POST" and path in (PATH + "/login", PATH + "/logout",
                                               PATH + "/admin/issue", PATH + "/admin/revoke"):
                if not _same_origin(scope):
                    await send_html(send, 403, pages.problem(
                        "Refused", "the form was posted from another site"))
                    return
                form = await read_form(scope, receive)
                if path == PATH + "/login":
                    await self.login(scope, send, form, admin)
                elif path == PATH + "/logout":
                    await self.logout(scope, send, form)
                elif admin and path == PATH + "/admin/issue":
                    await self.issue(scope, send, form)
                elif admin:
                    await self.revoke(scope, send, form)
                else:
                    await send_html(send, 404, pages.problem("Not found", "no such page"))
            else:
                await send_html(send, 404 if method in ("GET", "POST") else 405,
                                pages.problem("Not found", "no such page"))
        except BadRequest as exc:
            await send_html(send, exc.status, pages.problem("Bad request", exc.message))
        except LedgerError:
            await send_html(send, 503, pages.problem(
                "Unavailable", "the key store or the ledger cannot be read: try again"))

    # -- sessions ------------------------------------------------------------------------------

    async def _session(self, scope: Scope, kind: str) -> Any:
        """The cookie's signed, unexpired session of ``kind``, unless logged out (the key store
        keeps ended sessions until they would expire, so every worker refuses them)."""
        name = ADMIN_COOKIE if kind == ADMIN else KEY_COOKIE
        session = self.sessions.check(cookies_of(scope).get(name), kind)
        if session is None:
            return None
        ended = await self.service.execution.blocking(self.site.store.session_ended,
                                                      session.nonce)
        return None if ended else session

    def _set(self, scope: Scope, name: str, value: str, max_age: int) -> tuple[bytes, bytes]:
        return (b"set-cookie", cookie(name, value, PATH, max_age, is_https(scope)))

    async def home(self, scope: Scope, send: Send, admin: bool) -> None:
        """``/dashboard``: the page of the session, or the login page."""
        if admin and (await self._session(scope, ADMIN)) is not None:
            await redirect(send, PATH + "/admin")
            return
        if (await self._session(scope, KEY)) is not None:
            await redirect(send, PATH + "/key")
            return
        await self._login_page(scope, send, admin, 200)

    async def _login_page(self, scope: Scope, send: Send, admin: bool, status: int,
                          message: str = "") -> None:
        nonce = cookies_of(scope).get(LOGIN_COOKIE)
        if not nonce or len(nonce) > 64:
            nonce = new_login_nonce()
        await send_html(send, status,
                        pages.login(self.sessions.csrf("login." + nonce), admin, message),
                        (self._set(scope, LOGIN_COOKIE, nonce, 3600),))

    async def login(self, scope: Scope, send: Send, form: dict[str, str], admin: bool) -> None:
        """A login with a key or (on the admin address) the admin token."""
        nonce = cookies_of(scope).get(LOGIN_COOKIE)
        if not self.sessions.csrf_ok(nonce and "login." + nonce, form.get("csrf")):
            await _refuse_stale_form(send)
            return
        address = address_of(scope.get("client"))
        failed = self.site.failed_logins
        wait = failed.refused_for(address)
        if wait:
            await send_html(send, 429, pages.problem(
                "Too many attempts", f"too many failed logins: retry after {wait} s"),
                ((b"retry-after", str(wait).encode()),))
            return
        kind, secret = form.get("kind"), form.get("secret", "")
        if kind == ADMIN and admin:
            if self.site.token_matches(secret):
                failed.succeeded(address)
                value = self.sessions.issue(ADMIN, "admin")
                await redirect(send, PATH + "/admin",
                               (self._set(scope, ADMIN_COOKIE, value, SESSION_SECONDS),))
                return
        elif kind == KEY and len(secret) <= 200:
            key = self.service.keys.lookup(secret)
            if key is not None:
                failed.succeeded(address)
                value = self.sessions.issue(KEY, key.key_id)
                await redirect(send, PATH + "/key",
                               (self._set(scope, KEY_COOKIE, value, SESSION_SECONDS),))
                return
        failed.failed(address)
        await self._login_page(scope, send, admin, 401, "that key or token is not known")

    async def logout(self, scope: Scope, send: Send, form: dict[str, str]) -> None:
        """End this browser's sessions: cookies cleared, sessions ended in the key store too
        (a copy of a cookie no longer opens them)."""
        sessions = [s for s in (await self._session(scope, ADMIN),
                                await self._session(scope, KEY)) if s]
        if not any(self.sessions.csrf_ok(s.value, form.get("csrf")) for s in sessions):
            await _refuse_stale_form(send)
            return
        store = self.site.store
        for session in sessions:
            await self.service.execution.blocking(store.end_session, session.nonce,
                                                  session.expires)
        await redirect(send, PATH, (self._set(scope, ADMIN_COOKIE, "", 0),
                                    self._set(scope, KEY_COOKIE, "", 0)))

    # -- a key's holder --------------------------------------------------------------------------

    async def key_page(self, scope: Scope, send: Send) -> None:
        """A key's holder's figures of the day."""
        session = await self._session(scope, KEY)
        key = None if session is None else self.service.keys.by_id(session.subject)
        if session is None or key is None:
            await redirect(send, PATH, (self._set(scope, KEY_COOKIE, "", 0),))
            return
        report = await self._report(key.key_id, key.daily_credits)
        await send_html(send, 200, pages.usage(
            "Your usage", {"prefix": key.masked, "label": key.label}, report,
            self.sessions.csrf(session.value)))

    async def _report(self, key_id: str, daily_credits: int) -> dict[str, Any]:
        service = self.service
        store = self.site.store
        return await service.execution.blocking(usage_report, store, service.billing.ledger,
                                                key_id, daily_credits)

    # -- the administrator -----------------------------------------------------------------------

    async def admin_page(self, scope: Scope, send: Send, *, status: int = 200,
                         issued: tuple[str, Any] | None = None, message: str = "") -> None:
        """The administrator's list of keys and the issue form."""
        session = await self._admin_session(scope, send)
        if session is None:
            return
        records = await self.service.execution.blocking(self.site.store.records)
        await send_html(send, status, pages.admin(
            records, self.service.keys.configured, self.sessions.csrf(session.value),
            issued[0] if issued else None, issued[1] if issued else None, message))

    async def admin_key_page(self, scope: Scope, send: Send) -> None:
        """A key's figures of the day, for the administrator."""
        session = await self._admin_session(scope, send)
        if session is None:
            return
        ident = parse_qs(scope.get("query_string", b"").decode("latin-1")[:300]).get("id", [""])
        try:
            records = await self.service.execution.blocking(self.site.store.records)
            record = find(records, ident[0])
        except KeyStoreError as exc:
            await send_html(send, 404, pages.problem("Not found", str(exc)))
            return
        report = await self._report(record.key_id, record.daily_credits)
        await send_html(send, 200, pages.usage(
            "Key usage", {"prefix": record.prefix + "…", "label": record.label}, report,
            self.sessions.csrf(session.value), back=True))

    async def _admin_session(self, scope: Scope, send: Send) -> Any:
        """The administrator's session; without one, the browser is sent to the login page."""
        session = await self._session(scope, ADMIN)
        if session is None:
            await redirect(send, PATH)
        return session

    async def _admin_form_ok(self, scope: Scope, send: Send, form: dict[str, str]) -> bool:
        """Whether a form comes from the administrator's session; refused (403) if not."""
        session = await self._session(scope, ADMIN)
        if session is None or not self.sessions.csrf_ok(session.value, form.get("csrf")):
            await _refuse_stale_form(send)
            return False
        return True

    async def issue(self, scope: Scope, send: Send, form: dict[str, str]) -> None:
        """Issue a key from the form; the page shows it this once."""
        if not await self._admin_form_ok(scope, send, form):
            return
        try:
            fields = _key_fields(form)
            key, record = await self.service.execution.blocking(issue, self.site.store, fields)
        except KeyStoreError as exc:
            await self.admin_page(scope, send, status=400, message=str(exc))
            return
        await self.site.reload()
        await self.admin_page(scope, send, issued=(key, record))

    async def revoke(self, scope: Scope, send: Send, form: dict[str, str]) -> None:
        """Revoke a key from its row's form."""
        if not await self._admin_form_ok(scope, send, form):
            return
        try:
            await self.service.execution.blocking(revoke, self.site.store, form.get("id", ""))
        except KeyStoreError as exc:
            await self.admin_page(scope, send, status=400, message=str(exc))
            return
        await self.site.reload()
        await redirect(send, PATH + "/admin")


async def _refuse_stale_form(send: Send) -> None:
    """403 for a form whose security token is missing or stale (a forged or an old page)."""
    await send_html(send, 403, pages.problem(
        "Refused", "the form's security token is missing or stale: reload the page"))


def _key_fields(form: dict[str, str]) -> dict[str, Any]:
    """The issue form's fields, typed (KeyStoreError naming a bad one)."""
    fields: dict[str, Any] = {"label": form.get("label", "").strip()}
    credits = form.get("daily_credits", "").strip().replace("_", "").replace(",", "")
    if credits:
        if not credits.isdigit() or len(credits) > 16:
            raise KeyStoreError("daily credits: a whole number")
        fields["daily_credits"] = int(credits)
    rate = form.get("credits_per_second", "").strip()
    if rate:
        try:
            fields["credits_per_second"] = float(rate[:32])
        except ValueError:
            raise KeyStoreError("credits per second: a number") from None
    for name in ("networks", "methods"):
        text = form.get(name, "")
        fields[name] = [part.strip() for part in text.split(",") if part.strip()]
    return fields


def _same_origin(scope: Scope) -> bool:
    """Whether a form post comes from a page of this address (no ``Origin``: not a browser;
    the CSRF token alone guards it)."""
    headers = headers_of(scope)
    origin = headers.get(b"origin")
    if origin is None:
        return True
    host = headers.get(b"host", b"")
    return any(hmac.compare_digest(origin, scheme + b"://" + host)
               for scheme in (b"http", b"https"))
