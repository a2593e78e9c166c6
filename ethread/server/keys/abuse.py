"""Slowing down whoever keeps presenting wrong credentials.

A client address presenting :attr:`FailedAttempts.limit` unknown API keys (or wrong admin
tokens or dashboard logins) within :attr:`FailedAttempts.window` seconds gets HTTP 429 before
its key is looked at: 1 s the first time (10 s for admin tokens and logins), doubling with
each strike up to :data:`MAX_PENALTY`. A revoked key counts as unknown. The table is per
worker and holds at most :attr:`FailedAttempts.max_addresses` addresses (least recently seen
forgotten first); an IPv6 client counts by its /64.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable

MAX_PENALTY = 900.0
"""Longest refusal, in seconds (15 minutes)."""


def address_of(client: object) -> str | None:
    """The address an ASGI ``client`` (host, port) counts under; None when unknown."""
    if not isinstance(client, tuple | list) or not client:
        return None
    host = str(client[0])
    if ":" in host:
        try:
            return str(ipaddress.IPv6Network(f"{host}/64", strict=False).network_address)
        except ValueError:
            return host
    return host


class FailedAttempts:
    """Failed credential checks per client address, and who is refused for now."""

    __slots__ = ("_clock", "_entries", "first_penalty", "limit", "max_addresses", "window")

    def __init__(self, limit: int = 20, window: float = 60.0, max_addresses: int = 10_000,
                 first_penalty: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.first_penalty = first_penalty
        self.max_addresses = max_addresses
        self._clock = clock
        self._entries: OrderedDict[str, list[float]] = OrderedDict()
        """address -> [window start, failures in it, refused until, strikes]."""

    def __len__(self) -> int:
        return len(self._entries)

    def refused_for(self, address: str | None) -> int:
        """Seconds ``address`` must wait before it is heard again (0: it may go on)."""
        entries = self._entries
        if not entries or address is None:
            return 0
        entry = entries.get(address)
        if entry is None:
            return 0
        left = entry[2] - self._clock()
        return math.ceil(left) if left > 0 else 0

    def failed(self, address: str | None) -> None:
        """Count a wrong credential from ``address``; past the limit, refuse it for a while."""
        if address is None:
            return
        now = self._clock()
        entries = self._entries
        entry = entries.get(address)
        if entry is None:
            entry = entries[address] = [now, 0.0, 0.0, 0.0]
            while len(entries) > self.max_addresses:
                entries.popitem(last=False)
        else:
            entries.move_to_end(address)
        if now - entry[0] > self.window:
            entry[0], entry[1] = now, 0.0
        entry[1] += 1
        if entry[1] >= self.limit:
            entry[3] += 1
            entry[2] = now + min(MAX_PENALTY, self.first_penalty * 2.0 ** (entry[3] - 1))
            entry[0], entry[1] = now, 0.0

    def succeeded(self, address: str | None) -> None:
        """A right credential: forget the address's failures (unless it is refused now)."""
        entry = self._entries.get(address) if address is not None else None
        if entry is not None and entry[2] <= self._clock():
            del self._entries[address]  # type: ignore[arg-type]
