"""When a query or an execution must stop: a point in time (:class:`Deadline`), or earlier,
when the request it serves is no longer wanted (:class:`CancelToken`). Below every part that
waits or runs long: the stores' scans, the EVM's time limit, a forked chain's reads."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from .errors import Cancelled, QueryTimeout


class CancelToken:
    """Set when a request's work is no longer wanted; a :class:`Deadline` made while the token is
    current (:func:`cancellable`) then stops with :class:`~ethread.errors.Cancelled`."""

    __slots__ = ("cancelled", "reason")

    def __init__(self) -> None:
        self.cancelled = False
        self.reason = ""

    def cancel(self, reason: str = "request cancelled: the client disconnected") -> None:
        """Mark the request's work unwanted, with the reason reported (the first one given)."""
        if not self.cancelled:
            self.reason = reason
            self.cancelled = True


_CURRENT_TOKEN: ContextVar[CancelToken | None] = ContextVar("ethread_cancel_token", default=None)


@contextmanager
def cancellable(token: CancelToken | None) -> Iterator[None]:
    """Make ``token`` the one that deadlines made inside the block obey."""
    reset = _CURRENT_TOKEN.set(token)
    try:
        yield
    finally:
        _CURRENT_TOKEN.reset(reset)


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point in time after which a query must stop working, not only stop waiting.

    ``clock`` reads the time ``at`` is on (monotonic by default); ``token`` stops the work
    earlier when cancelled."""

    at: float
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    token: CancelToken | None = field(default=None, compare=False)

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A deadline ``seconds`` from now on ``clock``, tied to the current cancel token."""
        return cls(clock() + seconds, clock, _CURRENT_TOKEN.get())

    def expired(self) -> bool:
        """Whether the time is up; raises :class:`Cancelled` when the token was cancelled."""
        token = self.token
        if token is not None and token.cancelled:
            raise Cancelled(token.reason)
        return self.clock() > self.at

    def check(self) -> None:
        """Raise :class:`~ethread.errors.QueryTimeout` if the deadline has passed."""
        if self.expired():
            raise QueryTimeout()


NO_DEADLINE = Deadline(float("inf"))
