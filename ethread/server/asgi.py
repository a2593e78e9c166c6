"""The few ASGI shapes the server speaks, shared by the HTTP app and the WebSocket endpoint."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

def header(scope: Scope, name: bytes) -> str | None:
    """The value of the request header ``name`` (lowercase bytes), or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def send_json(send: Send, status: int, body: bytes,
                    extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """Send a complete JSON response with this status and body."""
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
