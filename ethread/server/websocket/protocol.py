"""uvicorn's sans-I/O WebSocket protocol as the server runs it: it keeps the server's polling
window (:mod:`.busy_poll`), and a handshake refused with an HTTP answer counts as finished, or
uvicorn would log ``ASGI callable returned without completing handshake`` at ERROR for every
refusal (a key prober would fill the error log).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from ..busy_poll import BusyPoll, KeepsPolling


class ServerWebSocketProtocol(KeepsPolling, WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol with the server's polling window and quiet refusals."""

    def data_received(self, data: bytes) -> None:
        """Keep polling, then what uvicorn does with the bytes."""
        self.keep_polling(True)
        super().data_received(data)

    async def send(self, message: Any) -> None:
        """What uvicorn sends; after a refusal's last body part the handshake is over."""
        await super().send(message)
        if (message["type"] == "websocket.http.response.body"
                and not message.get("more_body", False) and self.initial_response is not None):
            self.handshake_complete = True  # refused, and the refusal is written
        self.keep_polling(False)


def websocket_protocol(poll: BusyPoll | None) -> Any:
    """The WebSocket protocol class uvicorn is given, polling with ``poll`` (None: never)."""
    return type("ServerWebSocketProtocol", (ServerWebSocketProtocol,), {"busy_poll": poll})
