"""Answering JSON-RPC against one backend: the :class:`Dispatcher` (the method table, the
answer cache) and :func:`handle`, the whole service in one call: bytes in, bytes out, never an
exception.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import replace
from typing import Any

import orjson

from ..backend import Backend
from ..codec.answers import DEFAULT_ANSWERS, AnswerStyle
from ..codec.envelope import Call, error_object, error_response, parse_request, result_response
from ..codec.pipeline import IN_PROCESS
from ..codec.response_cache import BodyAnswers, ResponseCache
from ..errors import EthreadError, InternalError, StoreError, StoreUnreadable
from ..models import Block
from . import table
from .context import DEFAULT_CONTEXT, Context
from .row import not_available
from .sources import cacheable
from .table import call_method, call_row
from .trace_cache import RECORDED_CONFIGS, RECORDED_METHOD, TraceCache

log = logging.getLogger("ethread.rpc")

__all__ = ["Call", "Dispatcher", "error_object", "error_response", "handle", "parse_request",
           "result_response"]


class Dispatcher:
    """Runs calls against one backend, with a cache of answers keyed on the chain's generation."""

    def __init__(self, backend: Backend, context: Context = DEFAULT_CONTEXT,
                 cache: ResponseCache | None = None) -> None:
        self.backend = backend
        self.context = context.for_backend()
        """The context with this dispatcher's own caches and state."""
        self.cache = cache if cache is not None else ResponseCache()
        self.bodies = BodyAnswers()
        """Whole answers by the request body that asked them (:meth:`answered`)."""
        self._trace_window = 0
        """The latest blocks whose traces are recorded (:meth:`record_traces`; 0: none)."""

    def result(self, call: Call) -> bytes:
        """The JSON bytes of one call's result. Raises EthreadError."""
        return self._result(call)[0]

    def _result(self, call: Call) -> tuple[bytes, int | None]:
        """The result and the chain generation it holds for (None: not cached)."""
        row = table.TABLE.get(call.method)
        if row is None:
            raise not_available(call.method)
        if not cacheable(row, self.context, call.params):
            return call_row(row, self.backend, call.params, self.context), None
        generation = self.backend.generation()
        key = _cache_key(call)
        cached = self.cache.get(generation, key)
        if cached is not None:
            return cached, generation
        result = call_row(row, self.backend, call.params, self.context)
        self.cache.put(generation, key, result)
        return result, generation

    def cached_result(self, call: Call, body: bytes | None = None) -> bytes | None:
        """The result bytes of a call if an answer is cached for the chain as it is now (cheap
        enough for an event loop). With the request ``body`` (of this one call alone), the
        whole answer is also kept under it (:meth:`answered`)."""
        row = table.TABLE.get(call.method)
        traces = self.context.traces
        if call.method == RECORDED_METHOD and row is not None and traces is not None:
            recorded = traces.recorded(self.backend, call.params)  # (recorded ahead of requests)
            if recorded is not None:
                return recorded
        if row is None or not cacheable(row, self.context, call.params):
            return None
        generation = self.backend.generation()
        result = self.cache.get(generation, _cache_key(call))
        if result is not None and body is not None:
            self.bodies.put(generation, body, call, result_response(call.id, result))
        return result

    def answered(self, body: bytes) -> tuple[Call, Any, bytes] | None:
        """The call, this body's id and the whole answer of a one-call body answered before, or None."""
        known = self.bodies.get(self.backend.generation(), body)
        if known is None:
            return None
        row = table.TABLE.get(known[0].method)  # the table as it is now (tests patch it)
        return known if row is not None and cacheable(row, self.context, known[0].params) else None

    def respond(self, call: Call, body: bytes | None = None) -> bytes:
        """The response to one call, errors included, never raising. A store that fails
        answers -32000 without its details (the log has them). With the request ``body``, an
        answered result is also kept under it (:meth:`answered`)."""
        try:
            result, generation = self._result(call)
            answer = result_response(call.id, result)
            if body is not None and generation is not None:
                self.bodies.put(generation, body, call, answer)
            return answer
        except StoreUnreadable as exc:
            return error_response(call.id, exc)
        except StoreError as exc:
            log.error("store failure in %s: %s", call.method, exc.message)
            return error_response(call.id, StoreUnreadable(
                "the chain store cannot be read (the server's log has the details)"))
        except EthreadError as exc:
            return error_response(call.id, exc)
        except Exception:
            log.exception("internal error in %s", call.method)
            return error_response(call.id, InternalError("internal error"))

    def run_notification(self, call: Call) -> None:
        """A notification is run (the caller may count on its effects) but never answered."""
        try:
            self.result(call)
        except EthreadError:
            pass
        except Exception:
            log.exception("internal error in notification %s", call.method)

    def record_traces(self, blocks: int) -> int:
        """Trace every transaction of the latest ``blocks`` blocks now with each of
        :data:`~ethread.rpc.trace_cache.RECORDED_CONFIGS` and keep the answers (as anvil's
        ``--steps-tracing``); :meth:`record_block` keeps the window at ``blocks``. The number
        of transactions recorded (one whose trace fails is left to be traced when asked)."""
        traces = self.context.traces
        head = self.backend.pointer("latest")
        if traces is None or head is None or blocks <= 0:
            return 0
        self._trace_window = blocks
        recorded = 0
        for number in range(max(0, head - blocks + 1), head + 1):  # (the window: none to forget)
            block_hash = self.backend.canonical_hash(number)
            block = None if block_hash is None else self.backend.block_by_hash(block_hash)
            if block is not None:
                recorded += self._record(traces, block)
        return recorded

    def record_block(self, block: Block) -> int:
        """Record the traces of a block just mined, within the window; how many transactions."""
        traces = self.context.traces
        window = self._trace_window
        if traces is None or not window:
            return 0
        traces.forget_below(block.number - window + 1)
        return self._record(traces, block)

    def _record(self, traces: TraceCache, block: Block) -> int:
        """Record the traces of ``block``'s transactions; how many."""
        recorded = 0
        for tx in block.transactions:
            tx_hex = "0x" + tx.hash.hex()
            for config in RECORDED_CONFIGS:
                params = [tx_hex, config] if config else [tx_hex]
                try:
                    encoded = call_method(self.backend, RECORDED_METHOD, params, self.context)
                except EthreadError as exc:
                    log.warning("transaction %s of block %d not recorded: %s", tx_hex,
                                block.number, exc.message)
                    continue
                traces.record(bytes(tx.hash), config, bytes(block.hash), block.number, encoded)
            recorded += 1
        return recorded

    def handle(self, body: bytes) -> bytes | None:
        """Answer a request body in process: the pipeline with no limits and no admission."""
        exchange = IN_PROCESS.submit(self, body)  # everything runs on the caller: none pending
        return exchange.answer()


def _cache_key(call: Call) -> tuple[str, bytes]:
    return call.method, orjson.dumps(call.params)


_dispatchers: weakref.WeakKeyDictionary[Any, dict[str, Dispatcher]] = weakref.WeakKeyDictionary()
"""The dispatchers :func:`handle` made, by backend and then by answer style."""


def handle(backend: Backend, request: bytes, *,
           answers: AnswerStyle = DEFAULT_ANSWERS) -> bytes | None:
    """Answer a JSON-RPC 2.0 request body (single or batch) against ``backend``, as the geth
    release ``answers`` names does (:mod:`ethread.codec.answers`). Returns the response body,
    or None when every call was a notification. Never raises."""
    try:
        by_style = _dispatchers.get(backend)
        if by_style is None:
            by_style = _dispatchers[backend] = {}
    except TypeError:  # a backend that cannot be weakly referenced: no shared cache
        by_style = {}
    dispatcher = by_style.get(answers.name)
    if dispatcher is None:
        dispatcher = by_style[answers.name] = Dispatcher(backend, replace(DEFAULT_CONTEXT,
                                                                          answers=answers))
    return dispatcher.handle(request)
