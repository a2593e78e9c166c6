"""What every request of a running service needs, shared by HTTP and WebSocket handling:
the networks, the keys, the billing, where blocking work runs, and the request pipelines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..codec.envelope import Call
from ..codec.pipeline import Exchange, Limits, Pipeline, Refused
from ..errors import EthreadError
from . import refusals
from .access_log import log_request
from .asgi import Scope, header
from .billing.credits import Billing, request_cost
from .billing.ledger import Charge, Refusal
from .config import ServiceLimits
from .execution import SLOW_METHODS, Execution
from .keys.abuse import FailedAttempts, address_of
from .keys.auth import ApiKey, KeyRing
from .keys.sync import KeySync
from .method_rules import rules_of
from .networks import Network, NetworkRouter
from .observe import Observer
from .subscriptions import ChainFeed
from .workers_board import WorkerBoard


@dataclass
class Service:
    """Everything a request is answered with: the networks, the keys, billing, the worker pools,
    the limits and the chain feeds."""

    router: NetworkRouter
    keys: KeyRing
    billing: Billing
    execution: Execution
    limits: ServiceLimits
    access_log: bool = True
    poll_interval: float = 0.25
    workers: WorkerBoard | None = None
    """The supervisor's board when this process is one of several workers."""
    slot: int = 0
    """This worker's slot on the board."""
    feeds: dict[str, ChainFeed] = field(default_factory=dict)
    observer: Observer = field(default_factory=Observer)
    """Usage counts per key and the metrics (:mod:`.observe`)."""
    key_sync: KeySync | None = None
    """The link with the key store (None: the configured keys only)."""
    failed_keys: FailedAttempts = field(default_factory=FailedAttempts)
    """Addresses presenting unknown keys (:mod:`.abuse`)."""
    sessions: dict[str, set[Any]] = field(default_factory=dict)
    """The open WebSocket sessions of each key (by key id): what its per-key limits count,
    and what a revocation closes (:meth:`end_revoked_sessions`)."""
    admin: Any = None
    """The admin API and dashboard (:mod:`.admin`), when an admin token is configured."""
    http: Pipeline = field(init=False)
    """The request pipeline of an HTTP body."""
    websocket: Pipeline = field(init=False)
    """The request pipeline of a WebSocket message (its own size limit)."""

    def __post_init__(self) -> None:
        limits = self.limits
        on_loop = self.execution.on_loop
        self.http = Pipeline(Limits(limits.max_body_bytes, limits.max_batch_calls,
                                    limits.max_response_bytes), on_loop)
        self.websocket = Pipeline(Limits(limits.max_ws_message_bytes, limits.max_batch_calls,
                                         limits.max_response_bytes),
                                  on_loop)

    def network_for(self, scope: Scope, host: str | None = None) -> Network | None:
        """The network a request is for, by the port it came in on and its Host header."""
        server = scope.get("server")
        port = server[1] if server else None
        return self.router.find(port, host if host is not None else header(scope, b"host"))

    @property
    def timed(self) -> bool:
        """Whether requests are timed (for the access log or the metrics)."""
        return self.access_log or self.observer.metrics is not None

    def authenticate(self, presented: str, network: Network, client: Any,
                     ) -> tuple[ApiKey | None, Refused | None]:
        """The key a client presented on ``network``, or why it is refused: an address that
        keeps presenting unknown keys is refused before the key is looked at (429), an unknown
        key is 401, a key limited to other networks 403."""
        address = address_of(client)
        failed = self.failed_keys
        wait = failed.refused_for(address)
        if wait:
            return None, refusals.too_many_failures(wait)
        key = self.keys.lookup(presented) if presented and "/" not in presented else None
        if key is None:
            failed.failed(address)
            return None, refusals.unauthorized()
        if key.networks is not None and network.name not in key.networks:
            return key, refusals.forbidden(f"this API key may not be used on network "
                                           f"{network.name!r}")
        return key, None

    def admit(self, key: ApiKey, calls: Sequence[Call | EthreadError]) -> Refused | None:
        """Charge every call of the request at once, or refuse it and charge nothing."""
        if key.revoked or key.methods is not None:
            refused = _not_allowed(key, calls)
            if refused is not None:
                return refused
        if self.execution.slow_in_flight:
            refused = self._busy(key, calls)
            if refused is not None:
                return refused
        charge = _charge_of(key, calls)
        return None if charge is None else _refused(self.billing.charge(*charge))

    def admit_many(self, requests: Sequence[tuple[ApiKey, Sequence[Call | EthreadError]]],
                   ) -> list[Refused | None]:
        """:meth:`admit` for several requests, in their order, in one ledger transaction (each
        is charged in full or refused as if it came alone, after those before it)."""
        refused = [_not_allowed(key, calls) if key.revoked or key.methods is not None
                   else self._busy(key, calls) if self.execution.slow_in_flight
                   else None for key, calls in requests]
        wanted = [None if no is not None else _charge_of(key, calls)
                  for (key, calls), no in zip(requests, refused, strict=True)]
        charges = [charge for charge in wanted if charge is not None]
        outcomes = iter(self.billing.charge_many(charges) if charges else ())
        return [no if no is not None else None if charge is None else _refused(next(outcomes))
                for charge, no in zip(wanted, refused, strict=True)]

    def _busy(self, key: ApiKey, calls: Sequence[Call | EthreadError]) -> Refused | None:
        """The refusal of a request with slow calls from a key at its limit of slow requests
        in flight (:attr:`ServiceLimits.slow_requests_per_key`); None when it may run."""
        limit = self.limits.slow_requests_per_key
        if (limit and self.execution.busy(key.key_id) >= limit
                and any(isinstance(c, Call) and c.method in SLOW_METHODS for c in calls)):
            return refusals.key_busy(limit)
        return None

    def refund(self, key: ApiKey, exchange: Exchange) -> None:
        """Give back what admitting ``exchange`` took, once: its answer could not be sent (its
        client left, or its connection closed first). Nothing for a refused request, which
        was never charged."""
        calls = exchange.calls
        if not calls or exchange.refused is not None:
            return
        exchange.calls = ()
        charge = _charge_of(key, calls)
        if charge is not None:
            self.billing.refund(charge[0], charge[3])

    def end_revoked_sessions(self) -> None:
        """Close the WebSocket sessions of keys the key store has revoked (after each poll of
        the store: within one poll of the revocation)."""
        for sessions in list(self.sessions.values()):
            for session in list(sessions):
                if session.key.revoked:
                    session.revoked()

    def subscriptions_of(self, key_id: str) -> int:
        """Subscriptions the key holds over all its open WebSocket sessions in this worker."""
        return sum(len(session.subscriptions) for session in self.sessions.get(key_id, ()))

    def record(self, client: Any, network: str, key: ApiKey | None, what: str, status: int,
               size: int, seconds: float, answer: bytes | None = None) -> None:
        """What an HTTP request leaves behind: its usage count and metrics (:mod:`.observe`),
        and its access log line."""
        self.observer.request(network, key, what, status, answer, seconds)
        if self.access_log:
            log_request(client, network, "-" if key is None else key.masked, what, status, size,
                        seconds)

    def feed(self, network: Network) -> ChainFeed:
        """The chain feed of ``network`` (made on first use)."""
        feed = self.feeds.get(network.name)
        if feed is None:
            feed = self.feeds[network.name] = ChainFeed(network.backend, self.poll_interval)
        return feed


def _charge_of(key: ApiKey, calls: Sequence[Call | EthreadError]) -> Charge | None:
    """What admitting ``calls`` for ``key`` charges on the ledger; None when it costs nothing
    (no valid call)."""
    cost, need = request_cost(calls)
    if cost == 0:
        return None
    return key.key_id, key.daily_credits, key.credits_per_second, cost, need


def _not_allowed(key: ApiKey, calls: Sequence[Call | EthreadError]) -> Refused | None:
    """The refusal of a revoked key (401), or of a call to a method the key may not call
    (403, the whole request); None when neither."""
    if key.revoked:
        return refusals.unauthorized()
    methods = key.methods
    if methods is not None:
        for call in calls:
            if isinstance(call, Call):
                reason = rules_of(methods).refusal(call.method)
                if reason is not None:
                    return refusals.forbidden(reason)
    return None


def _refused(refusal: Refusal | None) -> Refused | None:
    """The answer a ledger's refusal makes (None: admitted)."""
    return None if refusal is None else refusals.over_credits(refusal.reason,
                                                              refusal.retry_after)
