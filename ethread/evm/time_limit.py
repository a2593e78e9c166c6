"""Stopping an EVM execution while it runs: at its time limit (geth's ``--rpc.evmtimeout``) or
when the request it serves is cancelled.

py-evm offers no way to stop a run from outside. Every long execution needs a jump or a
nested message, so a computation class derived from the fork's own checks the deadline at
those opcodes and at the start of every message; :meth:`TimeLimit.applied` swaps it in on a
state for one run. The limit is thread-local.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ..deadline import Deadline
from ..errors import ExecutionAborted
from ..models import trusted_maker
from .hooks import watched_class

T = TypeVar("T")

JUMP, JUMPI, CREATE, CALL, CALLCODE, DELEGATECALL, CREATE2, STATICCALL = (
    0x56, 0x57, 0xF0, 0xF1, 0xF2, 0xF4, 0xF5, 0xFA)
CHECKED_OPCODES = (JUMP, JUMPI, CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE, CREATE2)
"""The opcodes before which the deadline is checked: every loop and every nesting. (Written
here, not imported from py-evm: that would load all of py-evm for the budget functions.)"""


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """When the runs of one execution must stop (its deadline and cancel token) and its timeout."""

    deadline: Deadline
    timeout: float

    @classmethod
    def start(cls, timeout: float | None) -> TimeLimit:
        """A limit ``timeout`` seconds from now (None or 0: none but cancellation)."""
        deadline = Deadline.after(timeout if timeout else _NEVER)
        if cls is TimeLimit:  # (every field of the declared type: no constructor needed)
            return _TIME_LIMIT(deadline, timeout or 0.0)
        return cls(deadline, timeout or 0.0)

    @contextmanager
    def applied(self, state: Any) -> Iterator[None]:
        """Run what the block does on ``state`` (a py-evm state) under this limit."""
        entered = self.enter(state)
        try:
            yield
        finally:
            self.leave(state, entered)

    def enter(self, state: Any) -> tuple[Any, TimeLimit | None]:
        """:meth:`applied` without a context manager, until :meth:`leave` with what this returns."""
        previous = state.computation_class
        state.computation_class = interruptible(previous)
        outer = _running.limit
        _running.limit = self
        return previous, outer

    def leave(self, state: Any, entered: tuple[Any, TimeLimit | None]) -> None:
        """End what :meth:`enter` began."""
        _running.limit = entered[1]
        state.computation_class = entered[0]


_TIME_LIMIT = trusted_maker(TimeLimit, "deadline timeout")
_NEVER = float("inf")

NO_LIMIT = TimeLimit(Deadline(float("inf")), 0.0)
"""No time limit and no cancellation (a library caller that runs a message directly)."""


class BudgetSpent(BaseException):
    """An execution ran past its host's :func:`budget`: it stops, its state reverted, for the
    host to run it again elsewhere. Not an :class:`Exception`, so no method answers it."""


class _Running(threading.local):
    limit: TimeLimit | None = None
    budget_ends: float = 0.0
    """When executions on this thread hand back to their host (0: never), with ``budget_cpu_ends``."""
    budget_cpu_ends: float = 0.0


_running = _Running()


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Executions started inside the block on this thread raise :class:`BudgetSpent` once
    they have run for ``seconds`` of this thread's CPU time (a server trying a call on its
    event loop). Waiting for a core does not count; the cheaper wall clock is checked first."""
    outer = _start_budget(seconds)
    try:
        yield
    finally:
        _running.budget_ends, _running.budget_cpu_ends = outer


def run_under_budget(seconds: float, work: Callable[[], T]) -> T:
    """``work()`` under :func:`budget`, without a context manager (a server's per-request path)."""
    outer = _start_budget(seconds)
    try:
        return work()
    finally:
        _running.budget_ends, _running.budget_cpu_ends = outer


def _start_budget(seconds: float) -> tuple[float, float]:
    """Start this thread's budget of ``seconds``; the budget it had, to put back after."""
    running = _running
    outer = running.budget_ends, running.budget_cpu_ends
    running.budget_ends = time.monotonic() + seconds
    running.budget_cpu_ends = time.thread_time() + seconds
    return outer


def current_limit() -> TimeLimit | None:
    """The limit of the execution running on this thread (None outside one)."""
    return _running.limit


def under_budget() -> bool:
    """Whether work on this thread runs under a host's :func:`budget`."""
    return bool(_running.budget_ends)


def check_budget() -> None:
    """Raise :class:`BudgetSpent` when this thread's work is past its host's budget."""
    ends = _running.budget_ends
    if ends and time.monotonic() > ends and time.thread_time() > _running.budget_cpu_ends:
        raise BudgetSpent


def check(_: Any = None) -> None:
    """Raise :class:`ExecutionAborted` (or Cancelled) past the limit, :class:`BudgetSpent` past the budget."""
    running = _running
    ends = running.budget_ends  # first (check_budget's): the host runs it again, under its own limit
    if ends and time.monotonic() > ends and time.thread_time() > running.budget_cpu_ends:
        raise BudgetSpent
    limit = running.limit
    if limit is not None and limit.deadline.expired():
        raise ExecutionAborted(limit.timeout)


def interruptible(computation_class: type) -> type:
    """``computation_class`` with the limit checked before :data:`CHECKED_OPCODES` and each message."""
    return watched_class(computation_class, _CHECKS, check, "Interruptible")


_CHECKS = tuple((value, check) for value in CHECKED_OPCODES)
