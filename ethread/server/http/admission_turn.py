"""Requests read in one turn of the event loop, charged together at its end (docs/scaling.md,
"Many connections").

A busy worker wakes with several requests ready; charging each takes the ledger's lock once a
request. Here the turn's requests are parsed, charged in one ledger transaction
(:meth:`~ethread.server.service.Service.admit_many`) and answered in order, each charged or
refused as if it came alone after those before it. A worker holding few connections gathers
nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from ...codec.envelope import Call
from ...codec.pipeline import Exchange, LocalMethod, Opened, Pipeline, Refused
from ...errors import EthreadError
from ..keys.auth import ApiKey
from ..networks import Network
from ..service import Service

log = logging.getLogger("ethread.server")

GATHER_ABOVE_CONNECTIONS = 2
"""A worker gathers a turn's requests only while it holds more connections than this."""

Answer = Callable[[Exchange | None], None]
"""What a request does with its exchange when the turn is charged (None: client gone, or
failed)."""


class Gathered(Protocol):
    """A request waiting for its turn's end: whom it is for, and whether its client left."""

    network: Network
    key: ApiKey

    def gone(self) -> bool:
        """Whether its client left or its connection is closing (then it is not charged)."""
        ...


class AdmissionTurn:
    """The requests of the current turn of one event loop, to be charged at its end."""

    __slots__ = ("_loop", "_waiting", "local", "pipeline", "service")

    def __init__(self, loop: asyncio.AbstractEventLoop, service: Service, pipeline: Pipeline,
                 local: Mapping[str, LocalMethod] | None = None) -> None:
        self._loop = loop
        self.service = service
        self.pipeline = pipeline
        self.local = local
        self._waiting: list[tuple[Gathered, bytes, Answer]] = []

    def add(self, request: Gathered, body: bytes, answer: Answer) -> None:
        """Charge and dispatch ``body`` at the turn's end, then hand the exchange to
        ``answer``."""
        waiting = self._waiting
        if not waiting:
            self._loop.call_soon(self.run)
        waiting.append((request, body, answer))

    def run(self) -> None:
        """Open every request of the turn, charge them in one transaction, dispatch each."""
        waiting, self._waiting = self._waiting, []
        pipeline, local = self.pipeline, self.local
        opened: list[Exchange | Opened | None] = []
        charged: list[tuple[ApiKey, Sequence[Call | EthreadError]]] = []
        for request, body, _ in waiting:
            if request.gone():
                opened.append(None)
                continue
            try:
                step = pipeline.open(request.network.dispatcher, body, local)
            except Exception:
                log.exception("answering a request failed")
                step = None
            opened.append(step)
            if isinstance(step, Opened):
                charged.append((request.key, step.calls))
        admitted: Sequence[Refused | None] | None
        try:
            admitted = self.service.admit_many(charged) if charged else ()
        except Exception:
            log.exception("charging a turn's requests failed")
            admitted = None  # every request that needed charging answers the failure
        place = 0
        for (_, _, answer), step in zip(waiting, opened, strict=True):
            exchange: Exchange | None
            if isinstance(step, Opened):
                if admitted is None:
                    exchange = None
                else:
                    refused = admitted[place]
                    place += 1
                    try:
                        exchange = pipeline.dispatch(step, refused)
                    except Exception:
                        log.exception("answering a request failed")
                        exchange = None
            else:
                exchange = step
            try:
                answer(exchange)
            except Exception:  # one connection's failure must not leave the others unanswered
                log.exception("answering a request failed")
