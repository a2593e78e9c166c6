"""Running calls of the synchronous core without stalling the event loop.

Three lanes, cheapest first:

1. a cached answer (the dispatcher's cache, keyed on the chain's generation) is taken on the
   event loop itself: no thread hop, which is most of the cost of a cheap call;
2. the chain-metadata methods (chain id, head number, client version) run inline: they read
   one value; so do the one-block lookups (a block, a transaction, an uncle, a block's
   receipts) on a backend that holds its history in memory, where they take microseconds and
   a thread hop would cost more than the work;
3. everything else runs in a thread pool. Calls that can run long (eth_call, eth_getLogs,
   eth_getProof) have a pool of their own, so a few slow calls cannot starve the block and
   transaction getters of threads.

The event loop keeps serving other clients while a pool thread works: Python switches threads
every few milliseconds, and eth_getLogs stops its own work at its deadline.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..codec.jsonrpc import Call, Dispatcher, result_response
from ..errors import EthreadError

log = logging.getLogger("ethread.rpc")

INLINE_METHODS = frozenset({"eth_chainId", "eth_blockNumber", "net_version",
                            "web3_clientVersion"})
SLOW_METHODS = frozenset({"eth_call", "eth_getLogs", "eth_getProof"})
LOOKUP_METHODS = frozenset({
    "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getTransactionByHash",
    "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex",
    "eth_getUncleByBlockHashAndIndex", "eth_getUncleByBlockNumberAndIndex", "eth_getBlockReceipts",
})


def runs_inline(dispatcher: Dispatcher, method: str) -> bool:
    if method in INLINE_METHODS:
        return True
    return method in LOOKUP_METHODS and getattr(dispatcher.backend, "holds_history_in_memory", False)


def cached_answer(dispatcher: Dispatcher, call: Call) -> bytes | None:
    """The answer from the dispatcher's cache, or None."""
    hit = dispatcher.cached_result(call)
    return None if hit is None else result_response(call.id, hit)


class CallRunner:
    """Answers calls for the server: cache and inline lanes on the loop, the rest in pools."""

    def __init__(self, threads: int = 4) -> None:
        self.fast_pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="ethread-rpc")
        self.slow_pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="ethread-slow")

    async def answer(self, dispatcher: Dispatcher, call: Call) -> bytes | None:
        """The response to one call; None for a notification (which still runs)."""
        if call.is_notification:
            if runs_inline(dispatcher, call.method):
                dispatcher.run_notification(call)
            else:
                await asyncio.get_running_loop().run_in_executor(
                    self._pool(call.method), dispatcher.run_notification, call)
            return None
        cached = cached_answer(dispatcher, call)
        if cached is not None:
            return cached
        if runs_inline(dispatcher, call.method):
            return dispatcher.respond(call)
        return await asyncio.get_running_loop().run_in_executor(
            self._pool(call.method), dispatcher.respond, call)

    def _pool(self, method: str) -> ThreadPoolExecutor:
        return self.slow_pool if method in SLOW_METHODS else self.fast_pool

    async def answer_batch(self, dispatcher: Dispatcher, calls: list[Call | EthreadError],
                           ids: list[Any]) -> list[bytes]:
        cached = [
            None if isinstance(c, EthreadError) or c.is_notification else cached_answer(dispatcher, c)
            for c in calls
        ]
        if all(a is not None for a in cached):
            return [a for a in cached if a is not None]
        slow = any(isinstance(c, Call) and c.method in SLOW_METHODS for c in calls)
        pool = self.slow_pool if slow else self.fast_pool
        return await asyncio.get_running_loop().run_in_executor(
            pool, dispatcher.answers, calls, ids)

    def close(self) -> None:
        self.fast_pool.shutdown(wait=False, cancel_futures=True)
        self.slow_pool.shutdown(wait=False, cancel_futures=True)
