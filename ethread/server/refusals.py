"""The service's own refusals: each an HTTP status plus a JSON-RPC error object
(:class:`~ethread.codec.pipeline.Refused`), so a client library reports the message instead of
choking on an HTML page (the table: ``docs/server.md``; the size refusals are the pipeline's).
"""

from __future__ import annotations

from ..codec.pipeline import Refused
from ..errors import EthreadError, InternalError, InvalidRequest, LimitExceeded, MethodNotFound
from .billing.ledger import DAILY_LIMIT_REACHED, LEDGER_UNAVAILABLE

UNAUTHORIZED_CODE = -32001


def _retry_after(seconds: int) -> tuple[tuple[bytes, bytes], ...]:
    return ((b"retry-after", str(seconds).encode()),)


class Unauthorized(EthreadError):
    """A request without a known API key."""

    code = UNAUTHORIZED_CODE


def unauthorized() -> Refused:
    """The refusal (HTTP 401) of a missing or unknown API key."""
    return Refused(401, Unauthorized("unauthorized: the API key in the path is missing or unknown"))


def forbidden(message: str) -> Refused:
    """The refusal (HTTP 403) of a known key used where it is not allowed (another network, a
    method outside its list)."""
    return Refused(403, Unauthorized(f"forbidden: {message}"))


def too_many_failures(retry_after: int) -> Refused:
    """The refusal (HTTP 429) of an address that keeps presenting unknown keys or wrong
    credentials (:mod:`.abuse`)."""
    return Refused(429, LimitExceeded(
        f"too many failed authentication attempts from this address: retry after "
        f"{retry_after} s"), _retry_after(retry_after))


def not_found(path_hint: str = "POST to /v3/<API_KEY>") -> Refused:
    """The refusal (HTTP 404) of a path nothing is served at."""
    return Refused(404, InvalidRequest(f"not found: {path_hint}"))


def unknown_network(host: str | None, port: int | None) -> Refused:
    """The refusal (HTTP 404) of a host and port no network is served on."""
    return Refused(404, InvalidRequest(
        f"unknown network: nothing is served for host {host or '(none)'!r} on port {port}"))


def method_not_allowed() -> Refused:
    """The refusal (HTTP 405) of anything but POST on the JSON-RPC path."""
    return Refused(405, InvalidRequest("method not allowed: JSON-RPC requests use POST"),
                   ((b"allow", b"POST"),))


def unsupported_media_type() -> Refused:
    """The refusal (HTTP 415) of a body that is not declared as JSON."""
    return Refused(415, InvalidRequest("unsupported content type: use application/json"))


def body_too_slow(timeout: float) -> Refused:
    """The refusal (HTTP 408) of a request whose body did not arrive in time."""
    return Refused(408, InvalidRequest(
        f"request body not received in time: the limit is {timeout:g} s"))


def shutting_down() -> Refused:
    """The refusal (HTTP 503) of a request arriving while the server stops."""
    return Refused(503, LimitExceeded("the server is shutting down: retry"),
                   ((b"connection", b"close"),))


def internal_error() -> Refused:
    """The answer (HTTP 500) when answering a request failed on a bug: a JSON-RPC -32603, not a
    text page."""
    return Refused(500, InternalError("internal error"))


def over_credits(reason: str, retry_after: int) -> Refused:
    """Out of daily credits or over the rate: -32005, with Retry-After in seconds. A ledger
    that cannot be reached is the service's fault, not the key's: 503 with the same shape."""
    if reason == DAILY_LIMIT_REACHED:
        message = "daily credit limit reached: the balance resets at 00:00 UTC"
    else:
        message = f"{reason}: retry after {retry_after} s"
    return Refused(503 if reason == LEDGER_UNAVAILABLE else 429, LimitExceeded(message),
                   _retry_after(retry_after))


def key_busy(limit: int) -> Refused:
    """The refusal (HTTP 429, -32005, Retry-After) of a request with slow calls from a key
    with ``limit`` such requests running already, so that no key fills the shared threads."""
    return Refused(429, LimitExceeded(
        f"too many slow requests in flight for this API key: at most {limit} at once in a "
        f"worker; retry after 1 s"), _retry_after(1))


def too_many_connections(limit: int) -> Refused:
    """The refusal (HTTP 429, -32005) of a WebSocket handshake from a key that holds ``limit``
    connections open already."""
    return Refused(429, LimitExceeded(
        f"too many WebSocket connections for this API key: the limit is {limit}"),
        _retry_after(1))


def subscriptions_need_websocket() -> MethodNotFound:
    """The error for eth_subscribe over HTTP."""
    return MethodNotFound("notifications not supported: subscribe over the WebSocket endpoint")

