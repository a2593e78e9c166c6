"""The few HTTP pieces the admin API and the dashboard share: bounded bodies, cookies, the
security headers every page carries, and answers of each kind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl

import orjson

from ...errors import Picklable
from ..asgi import Receive, Scope, Send

MAX_FORM_BYTES = 16 * 1024
MAX_FORM_FIELDS = 32
BODY_TIMEOUT = 10.0
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", b"default-src 'none'; style-src 'self'; img-src 'self'; "
     b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # (no-referrer would make a form's Origin "null")
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


class BadRequest(Picklable, Exception):
    """A body that is too large, too slow, or not what the endpoint reads."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def headers_of(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by lower-case name (the last of repeated ones)."""
    return {name: value for name, value in scope.get("headers", ())}


async def read_body(receive: Receive, limit: int = MAX_FORM_BYTES) -> bytes:
    """The whole body, at most ``limit`` bytes, within :data:`BODY_TIMEOUT` seconds."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(BODY_TIMEOUT):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise BadRequest(400, "the client left")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BadRequest(413, f"the body is over {limit} bytes")
                chunks.append(chunk)
                if not message.get("more_body"):
                    return b"".join(chunks)
    except TimeoutError:
        raise BadRequest(408, "the body did not arrive in time") from None


async def read_form(scope: Scope, receive: Receive) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body's fields (the first of each name)."""
    content_type = headers_of(scope).get(b"content-type", b"").split(b";", 1)[0].strip()
    if content_type.lower() != b"application/x-www-form-urlencoded":
        raise BadRequest(415, "a form is sent as application/x-www-form-urlencoded")
    body = await read_body(receive)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True,
                          max_num_fields=MAX_FORM_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise BadRequest(400, "the form cannot be read") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        form.setdefault(name, value)
    return form


def cookies_of(scope: Scope) -> dict[str, str]:
    """The request's cookies (none when the header cannot be read)."""
    raw = headers_of(scope).get(b"cookie")
    if not raw or len(raw) > 8192:
        return {}
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except CookieError:
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


def cookie(name: str, value: str, path: str, max_age: int, secure: bool) -> bytes:
    """A ``Set-Cookie`` value: HttpOnly and SameSite=Strict always, Secure over HTTPS."""
    parts = [f"{name}={value}", f"Path={path}", f"Max-Age={max_age}", "HttpOnly",
             "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts).encode()


def is_https(scope: Scope) -> bool:
    """Whether the browser reached us over HTTPS (directly, or through a proxy that says so)."""
    return (scope.get("scheme") == "https"
            or headers_of(scope).get(b"x-forwarded-proto", b"").lower() == b"https")


async def send_html(send: Send, status: int, html: str,
                    extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A page, with the security headers."""
    await send_bytes(send, status, html.encode(), b"text/html; charset=utf-8", extra)


async def send_bytes(send: Send, status: int, body: bytes, content_type: bytes,
                     extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """Any other answer, with the security headers."""
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type), (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS, *extra]})
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Send, status: int, value: object,
                    extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A JSON answer of the admin API."""
    await send_bytes(send, status, orjson.dumps(value), b"application/json", extra)


async def redirect(send: Send, location: str,
                   extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """303 See Other: after a form, the browser asks for the page with GET."""
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode()), (b"content-length", b"0"), *SECURITY_HEADERS,
        *extra]})
    await send({"type": "http.response.body", "body": b""})
