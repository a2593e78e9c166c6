"""Where the server's blocking work runs: the one place that decides between the event loop
and the thread pools (docs/server.md, "Not blocking the event loop", has the measurements).

Four places, cheapest first:

1. the event loop: a cached answer, :data:`INLINE_METHODS` and, on a backend holding its
   history in memory, :data:`LOOKUP_METHODS`: microseconds, less than a thread hop
   (:meth:`Execution.on_loop`);
2. tried on the loop: a single call of :data:`TRIED_ON_LOOP` runs under
   :data:`LOOP_BUDGET_SECONDS` of the loop thread's CPU time
   (:func:`~ethread.evm.time_limit.budget`); one still running then stops, its state reverted
   (:class:`~ethread.evm.time_limit.BudgetSpent`), and runs again in the slow pool, so a long
   call costs the loop at most the budget once;
3. the *fast* pool: every other call, and the server's other blocking work
   (:meth:`Execution.blocking`);
4. the *slow* pool: calls that can run long (:data:`SLOW_METHODS`), so that a few cannot
   starve the getters. It has more threads: its calls are bounded by their deadlines, and a
   quick eth_call must find a free thread beside a few running to their limit. A batch runs in
   one hop, in the slow pool when any of its pending calls is slow.

An exchange in a pool is cancelled after ``request_timeout`` seconds; each key's slow
exchanges are counted (:attr:`Execution.slow_in_flight`); :meth:`Execution.drain` cancels every
running one at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..backend import HistoryInMemory
from ..codec.envelope import Call
from ..codec.pipeline import Exchange
from ..evm import time_limit
from ..rpc.dispatcher import Dispatcher
from ..rpc.table import TABLE

log = logging.getLogger("ethread.rpc")
T = TypeVar("T")
SHUTTING_DOWN = "request cancelled: the server is shutting down"

INLINE_METHODS = frozenset({"eth_chainId", "eth_blockNumber", "net_version",
                            "web3_clientVersion", "eth_syncing", "eth_accounts", "net_listening",
                            "net_peerCount"})
SLOW_METHODS = frozenset(name for name, row in TABLE.items() if row.slow)
"""The methods whose rows say they may run long (:attr:`ethread.rpc.row.Method.slow`)."""
TRIED_ON_LOOP = frozenset({"eth_call", "eth_simulateV1", "eth_getLogs"})
"""Single calls tried on the event loop under the budget; eth_getLogs only on a backend whose
history is in memory (or memory-mapped), where its reads never wait for a disk."""
LOOP_BUDGET_SECONDS = 0.002
"""CPU time a call tried on the event loop may take before it moves to the slow pool."""
LOOKUP_METHODS = frozenset({
    "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getTransactionByHash",
    "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex",
    "eth_getUncleByBlockHashAndIndex", "eth_getUncleByBlockNumberAndIndex", "eth_getBlockReceipts",
    "eth_getTransactionReceipt", "eth_getBlockTransactionCountByHash",
    "eth_getBlockTransactionCountByNumber", "eth_getUncleCountByBlockHash",
    "eth_getUncleCountByBlockNumber", "debug_getRawTransaction",
})


class Execution:
    """The server's places to run blocking work (see the module docstring)."""

    def __init__(self, threads: int = 4, slow_threads: int = 16,
                 loop_budget: float = LOOP_BUDGET_SECONDS, request_timeout: float = 0.0,
                 ) -> None:
        self.loop_budget = loop_budget
        """Seconds of CPU time a call tried on the loop may take (0: none is tried)."""
        self.request_timeout = request_timeout
        """Seconds an exchange (a whole batch) may run in a pool before it is cancelled: its
        running call stops, the rest answer -32000 (0: no limit)."""
        self.slow_in_flight: dict[str, int] = {}
        """Exchanges running (or waiting) in the slow pool, by key id."""
        self.fast_pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="ethread-rpc")
        self.slow_pool = ThreadPoolExecutor(max(1, slow_threads),
                                            thread_name_prefix="ethread-slow")
        self.running: set[Exchange] = set()
        self.draining = False
        self._in_memory: dict[type, bool] = {}

    def on_loop(self, dispatcher: Dispatcher, call: Call) -> bool:
        """Whether ``call`` is cheap enough to run on the event loop."""
        method = call.method
        if method in INLINE_METHODS:
            return True
        return method in LOOKUP_METHODS and self._history_in_memory(dispatcher.backend)

    def _history_in_memory(self, backend: object) -> bool:
        """Whether ``backend`` is :class:`HistoryInMemory`, decided once per backend class (a
        protocol check is too slow for every request)."""
        kind = type(backend)
        known = self._in_memory.get(kind)
        if known is None:
            known = self._in_memory[kind] = (isinstance(backend, HistoryInMemory)
                                             and bool(backend.holds_history_in_memory))
        return known

    def try_on_loop(self, exchange: Exchange) -> bool:
        """Run a single call of :data:`TRIED_ON_LOOP` on the event loop under the loop budget;
        whether it is answered (False: left pending, for :meth:`finish`)."""
        pending = exchange.pending
        if (self.draining or not self.loop_budget or len(pending) != 1 or exchange.is_batch
                or pending[0][1].method not in TRIED_ON_LOOP):
            return False
        if pending[0][1].method == "eth_getLogs" and not self._history_in_memory(
                getattr(exchange.dispatcher, "backend", None)):
            return False
        try:
            time_limit.run_under_budget(self.loop_budget, exchange.run)
        except time_limit.BudgetSpent:
            return False  # nothing was kept: the call runs again in the pool
        return True

    async def finish(self, exchange: Exchange, tried: bool = False,
                     owner: str | None = None) -> None:
        """Run what the pipeline left pending: on the loop if :meth:`try_on_loop` takes it
        (unless already ``tried``), else in the fitting pool until :attr:`request_timeout`.
        ``owner`` (a key id) is counted in :attr:`slow_in_flight` while in the slow pool."""
        if not tried and self.try_on_loop(exchange):
            return
        pending = exchange.pending_calls()
        if self.draining:
            exchange.cancel(SHUTTING_DOWN)
        slow = any(c.method in SLOW_METHODS for c in pending)
        loop = asyncio.get_running_loop()
        counted = owner if slow else None
        if counted is not None:
            self.slow_in_flight[counted] = self.slow_in_flight.get(counted, 0) + 1
        timeout = self.request_timeout
        timer = (loop.call_later(timeout, exchange.cancel, _timed_out(timeout, exchange))
                 if timeout else None)
        self.running.add(exchange)
        try:
            await asyncio.shield(loop.run_in_executor(
                self.slow_pool if slow else self.fast_pool, exchange.run))
        except asyncio.CancelledError:
            exchange.cancel(SHUTTING_DOWN)  # the task awaiting the answer is being torn down
            raise
        finally:
            self.running.discard(exchange)
            if timer is not None:
                timer.cancel()
            if counted is not None:
                left = self.slow_in_flight[counted] - 1
                if left:
                    self.slow_in_flight[counted] = left
                else:
                    del self.slow_in_flight[counted]

    def busy(self, owner: str) -> int:
        """Exchanges of ``owner`` in the slow pool now."""
        return self.slow_in_flight.get(owner, 0)

    def drain(self) -> None:
        """The server is shutting down: cancel the running work, refuse to start more."""
        self.draining = True
        for exchange in list(self.running):
            exchange.cancel(SHUTTING_DOWN)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Other blocking work of the server, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.fast_pool, fn, *args)

    def close(self) -> None:
        """Shut the worker thread pools down without waiting for running calls."""
        self.fast_pool.shutdown(wait=False, cancel_futures=True)
        self.slow_pool.shutdown(wait=False, cancel_futures=True)


def _timed_out(timeout: float, exchange: Exchange) -> str:
    what = "the batch" if exchange.is_batch else "the request"
    return f"request timeout: {what} ran past the server's limit of {timeout:g} s"
