"""What each answered request leaves behind: the key's usage counts and the metrics, as plain
dictionary increments on the event loop's thread (:mod:`.keys.sync` writes them out). A batch
counts once, as ``batch``.
"""

from __future__ import annotations

from typing import Protocol

from .billing.credits import CREDITS
from .metrics import Metrics

KNOWN_METHODS = frozenset({*CREDITS, "eth_chainId", "eth_blockNumber", "net_version",
                           "web3_clientVersion", "eth_subscribe", "eth_unsubscribe"})
"""Methods that are their own label; any other name a client sends counts as ``other``."""
OK, ERROR, REFUSED, ABANDONED = "ok", "error", "refused", "abandoned"
CLIENT_GONE = 499
"""The status of a request whose client left after its work started (and was charged), as
nginx's "client closed request"."""
_ERROR_MARK = b'"error":{'
_REASONS = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "bad_method",
            408: "body_too_slow", 413: "too_large", 415: "bad_content_type"}
"""Transport refusals by HTTP status (credit refusals are counted where they are decided)."""


def method_label(what: str) -> str:
    """A bounded name for what a request asked."""
    if what in KNOWN_METHODS:
        return what
    if what.startswith("batch("):
        return "batch"
    return what if what in ("invalid", "-") else "other"


def outcome_of(status: int, answer: bytes | None) -> str:
    """``abandoned`` (:data:`CLIENT_GONE`), ``refused`` (by the transport), ``error`` (a
    JSON-RPC error object, near the start of the answer; a batch's first) or ``ok``."""
    if status >= 400:
        return ABANDONED if status == CLIENT_GONE else REFUSED
    if answer is not None and answer.find(_ERROR_MARK, 0, 160) >= 0:
        return ERROR
    return OK


class Counted(Protocol):
    """What usage is counted by: a key's id (as :class:`~ethread.server.keys.auth.ApiKey`)."""

    @property
    def key_id(self) -> str:
        """The key's stable id."""
        ...


class Observer:
    """The per-key usage counts and the metrics of one worker."""

    __slots__ = ("metrics", "usage")

    def __init__(self, metrics: Metrics | None = None) -> None:
        self.metrics = metrics
        self.usage: dict[tuple[str, str, str], int] = {}
        """(key id, method, outcome) -> requests since the last flush."""

    def request(self, network: str, key: Counted | None, what: str, status: int,
                answer: bytes | None, seconds: float) -> None:
        """One request answered (or refused) on ``network``."""
        method = method_label(what)
        outcome = outcome_of(status, answer)
        if key is not None:
            slot = (key.key_id, method, outcome)
            usage = self.usage
            usage[slot] = usage.get(slot, 0) + 1
        metrics = self.metrics
        if metrics is not None:
            metrics.request(network, method, outcome, seconds)
            reason = _REASONS.get(status)
            if reason is not None:
                metrics.refused(reason)

    def take_usage(self) -> dict[tuple[str, str, str], int]:
        """The counts since the last call (for the key store)."""
        usage, self.usage = self.usage, {}
        return usage
