"""Which source answers a call, from what its row declares (:class:`~ethread.rpc.row.Source`)
and the network's context. The first that answers, in order:

1. a dev chain's pool, or a served chain's (:attr:`~ethread.rpc.row.Method.pool`);
2. a forked dev chain's history at or below the fork block
   (:attr:`~ethread.rpc.row.Method.history`);
3. the chain: the dev chain's pending state for "pending"
   (:attr:`~ethread.rpc.row.Method.pending`), else the backend, a mined transaction's trace
   from the trace cache.

Whether an answer may be cached follows from the same declarations (:func:`cacheable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import orjson

from ..backend import Backend
from .context import Context
from .fork_history import NOT_HISTORY, Local, read_history
from .pool_reads import NOT_PENDING
from .row import Method, Scope, read_args
from .trace_cache import RECORDED_METHOD


def answer(method: Method, backend: Backend, params: list[Any], ctx: Context) -> Any:
    """``method``'s JSON value for ``params`` (their count checked), from its source."""
    dev = ctx.dev
    if dev is None and not (method.served_pool or method.keeps_traces):  # (most calls)
        return method.answer(Scope(backend, ctx, method.name),
                             *(read_args(method, params) if method.params else ()))
    if dev is not None:
        if method.pool is not None:
            found = method.pool(dev, params, ctx.answers)
            if found is not NOT_PENDING:
                return found
        history = dev.fork_history if method.history is not None else None
        if history is not None:
            assert method.history is not None
            local = Local(backend, lambda other: from_chain(method, backend, other, ctx),
                          ctx.log_limits.max_results, ctx.log_limits.max_parameters)
            found = read_history(method.history, history, params, local)
            if found is not NOT_HISTORY:
                return found
        if _names_pending(method, params):
            # (the pending state changes with no new block: no call states kept for it)
            return from_chain(method, dev.pending_state(), params, replace(ctx, call_states=None))
    elif method.served_pool and ctx.txpool is not None:
        assert method.pool is not None
        found = method.pool(ctx.txpool, params, ctx.answers)
        if found is not NOT_PENDING:
            return found
    if method.keeps_traces and ctx.traces is not None:
        return _kept_trace(method, backend, params, ctx)
    return from_chain(method, backend, params, ctx)


def from_chain(method: Method, backend: Backend, params: Sequence[Any], ctx: Context) -> Any:
    """``method`` answered by ``backend``: its parameters read, its function called."""
    return method.answer(Scope(backend, ctx, method.name), *read_args(method, params))


def _kept_trace(method: Method, backend: Backend, params: list[Any], ctx: Context) -> Any:
    """A mined transaction's trace as recorded or kept before, else made and kept."""
    cache = ctx.traces
    assert cache is not None
    if method.name == RECORDED_METHOD:
        recorded = cache.recorded(backend, params)
        if recorded is not None:
            return orjson.Fragment(recorded)
    return cache.answer(cache.key(backend, method.name, params),
                        lambda: from_chain(method, backend, params, ctx))


def _names_pending(method: Method, params: Sequence[Any]) -> bool:
    position = method.pending
    return position is not None and len(params) > position and params[position] == "pending"


def cacheable(method: Method, ctx: Context, params: Sequence[Any] | None = None) -> bool:
    """Whether ``method``'s answers (for ``params``, if known) may be kept: not from a pool or pending."""
    if not method.cacheable or (method.pool is not None and ctx.dev is not None) or (
            method.served_pool and ctx.txpool is not None):
        return False
    if method.pending is None or ctx.dev is None:
        return True
    return params is not None and not _names_pending(method, params)
