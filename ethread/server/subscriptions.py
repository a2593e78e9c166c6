"""eth_subscribe on WebSocket: ``newHeads`` and ``logs``, fed as the served chain grows.

One :class:`ChainFeed` per network watches the head, woken by the miner or every
``poll_interval`` seconds, and sends each new canonical block once to every subscriber, in
order, each notification built once. Served chains only grow, so no reorganisation is replayed
and ``removed`` is always false.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from ..backend import Backend, LogQuery
from ..codec.params import parse_log_filter
from ..codec.serialize import header_json, to_json
from ..errors import InvalidParams
from ..models import Block

log = logging.getLogger("ethread.server")

Kind = Literal["newHeads", "logs"]
Sink = Callable[[bytes], None]


@dataclass(frozen=True, slots=True)
class Subscription:
    """One eth_subscribe subscription (``matcher``: a logs filter)."""

    id: str
    kind: Kind
    sink: Sink
    matcher: LogQuery | None = None


def parse_subscription(params: list[Any]) -> tuple[Kind, LogQuery | None]:
    """The kind and, for ``logs``, the address/topics filter of eth_subscribe's params."""
    if not params or not isinstance(params[0], str):
        raise InvalidParams("missing subscription kind: newHeads or logs")
    kind = params[0]
    if kind == "newHeads":
        if len(params) > 1:
            raise InvalidParams("newHeads takes no options")
        return "newHeads", None
    if kind == "logs":
        if len(params) > 2:
            raise InvalidParams("too many arguments, want at most 2")
        options = params[1] if len(params) > 1 and params[1] is not None else {}
        if not isinstance(options, dict):
            raise InvalidParams("invalid argument 1: the logs filter must be an object")
        # Only the address and topics apply: a subscription follows the head.
        filt = parse_log_filter({k: options[k] for k in ("address", "topics") if k in options})
        return "logs", LogQuery(0, 0, addresses=filt.addresses, topics=filt.topics)
    raise InvalidParams(f"unsupported subscription kind {kind!r}: newHeads or logs")


def _notification(subscription_id: str, result: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"'
            + subscription_id.encode() + b'","result":' + result + b"}}")


class ChainFeed:
    """Follows one backend's head and notifies its subscribers."""

    def __init__(self, backend: Backend, poll_interval: float = 0.25) -> None:
        self.backend = backend
        self.poll_interval = poll_interval
        self._subscriptions: dict[str, Subscription] = {}
        self._wake = asyncio.Event()
        self._seen = backend.pointer("latest")

    def __len__(self) -> int:
        return len(self._subscriptions)

    def subscribe(self, kind: Kind, sink: Sink, matcher: LogQuery | None = None) -> str:
        """Add a subscription; returns its id."""
        subscription_id = "0x" + secrets.token_hex(16)
        self._subscriptions[subscription_id] = Subscription(subscription_id, kind, sink, matcher)
        return subscription_id

    def unsubscribe(self, subscription_id: str) -> bool:
        """Remove a subscription; False if there was none with this id."""
        return self._subscriptions.pop(subscription_id, None) is not None

    def poke(self) -> None:
        """The chain may have grown: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Publish new blocks until cancelled."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_interval)
            self._wake.clear()
            try:
                self.publish_new_blocks()
            except Exception:  # a broken store must not end the feed for good
                log.exception("subscription feed failed")

    def publish_new_blocks(self) -> None:
        """Notify the subscriptions of every block past the last one seen."""
        head = self.backend.pointer("latest")
        if head is None:
            return
        start = 0 if self._seen is None else self._seen + 1
        if head < start:
            self._seen = head  # the store shrank (replaced): follow it, replay nothing
            return
        if self._subscriptions:
            for number in range(max(start, head - 127), head + 1):  # a bounded catch-up
                block_hash = self.backend.canonical_hash(number)
                block = self.backend.block_by_hash(block_hash) if block_hash else None
                if block is not None:
                    self._publish(block)
        self._seen = head

    def _publish(self, block: Block) -> None:
        subscriptions = list(self._subscriptions.values())
        if any(s.kind == "newHeads" for s in subscriptions):
            head = orjson.dumps(header_json(block.header, block.size))
            for s in subscriptions:
                if s.kind == "newHeads":
                    s.sink(_notification(s.id, head))
        log_subscriptions = [s for s in subscriptions if s.kind == "logs"]
        if not log_subscriptions:
            return
        receipts = self.backend.receipts(block.hash) or ()
        logs = [entry for receipt in receipts for entry in receipt.logs]
        encoded: dict[int, bytes] = {}
        for s in log_subscriptions:
            assert s.matcher is not None
            for position, entry in enumerate(logs):
                if s.matcher.matches(entry.address, entry.topics):
                    if position not in encoded:
                        encoded[position] = orjson.dumps(to_json(entry))
                    s.sink(_notification(s.id, encoded[position]))
