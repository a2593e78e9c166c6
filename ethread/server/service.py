"""What every request of a running service needs, shared by HTTP and WebSocket handling:
the networks, the keys, the billing, where blocking work runs, and the request pipelines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..codec.envelope import Call
from ..codec.pipeline import Limits, Pipeline, Refused
from ..errors import EthreadError
from . import refusals
from .asgi import Scope, header
from .auth import ApiKey, KeyRing
from .config import ServiceLimits
from .credits import Billing, request_cost
from .execution import Execution
from .ledger import Charge, Refusal
from .networks import Network, NetworkRouter
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

    def admit(self, key: ApiKey, calls: Sequence[Call | EthreadError]) -> Refused | None:
        """Charge every call of the request at once, or refuse it and charge nothing."""
        charge = _charge_of(key, calls)
        return None if charge is None else _refused(self.billing.charge(*charge))

    def admit_many(self, requests: Sequence[tuple[ApiKey, Sequence[Call | EthreadError]]],
                   ) -> list[Refused | None]:
        """:meth:`admit` for several requests, in their order, in one ledger transaction (each
        is charged in full or refused as if it came alone, after those before it)."""
        wanted = [_charge_of(key, calls) for key, calls in requests]
        charges = [charge for charge in wanted if charge is not None]
        outcomes = iter(self.billing.charge_many(charges) if charges else ())
        return [None if charge is None else _refused(next(outcomes)) for charge in wanted]

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
    config = key.config
    return key.key_id, config.daily_credits, config.credits_per_second, cost, need


def _refused(refusal: Refusal | None) -> Refused | None:
    """The answer a ledger's refusal makes (None: admitted)."""
    return None if refusal is None else refusals.over_credits(refusal.reason,
                                                              refusal.retry_after)
