"""The request pipeline without I/O: a request body in, its answer out. Every host (HTTP,
WebSocket, :func:`ethread.handle`) drives the same steps:

1. **parse** the body into calls (not JSON, or an empty batch: one error object at once);
2. **limits**: the body size (:func:`body_too_large`) and the batch size;
3. **admission**: the host's hook (API keys, credits, a rate limit); a refusal answers every
   call with its error and nothing runs;
4. **dispatch**: invalid calls become their errors, host methods go to the host's handlers,
   cached answers are taken, cheap calls (``on_caller``) run at once; the rest is *pending*;
5. **join**: the answers, in request order, as one body (None when only notifications came).

Like h11, the pipeline never waits: the host decides where :meth:`Exchange.run` does the
pending work, then asks :meth:`~Exchange.answer` for the bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import orjson

from ..backend import CancelToken, cancellable
from ..errors import Cancelled, EthreadError, InternalError, InvalidRequest, ResponseTooLarge
from .envelope import (
    Call,
    error_object,
    error_response,
    parse_request,
    result_parts,
    result_response,
)

log = logging.getLogger("ethread.rpc")


class Responder(Protocol):
    """What the pipeline needs of a dispatcher (:class:`~ethread.rpc.dispatcher.Dispatcher`)."""

    def respond(self, call: Call, body: bytes | None = None) -> bytes:
        """The JSON bytes answering one call; with ``body``, kept for :meth:`answered`."""
        ...

    def run_notification(self, call: Call) -> None:
        """Run a call sent as a notification, discarding its result."""
        ...

    def cached_result(self, call: Call, body: bytes | None = None) -> bytes | None:
        """The cached JSON result of a call on the same chain, else None (``body``: :meth:`answered`)."""
        ...

    def answered(self, body: bytes) -> tuple[Call, Any, bytes] | None:
        """The call, this body's id and the whole answer of a one-call body answered before, or None."""
        ...


@dataclass(frozen=True, slots=True)
class Refused:
    """A whole request turned away before any call ran (never charged)."""

    status: int
    error: EthreadError
    headers: tuple[tuple[bytes, bytes], ...] = ()

    def body(self, ids: Sequence[Any] | None = None, single_id: Any = None) -> bytes:
        """One error object under ``single_id``, or for a batch one per id in ``ids``."""
        error = error_object(self.error)
        if ids is None:
            return orjson.dumps({"jsonrpc": "2.0", "id": single_id, "error": error})
        return orjson.dumps([{"jsonrpc": "2.0", "id": i, "error": error} for i in ids])


def body_too_large(limit: int) -> Refused:
    """The refusal of a request body longer than ``limit`` bytes (HTTP 413)."""
    return Refused(413, InvalidRequest(f"request body too large: the limit is {limit} bytes"))


def batch_too_large(count: int, limit: int) -> Refused:
    """The refusal of a batch with more calls than ``limit`` (HTTP 413)."""
    return Refused(413, InvalidRequest(
        f"batch too large: {count} calls, the limit is {limit} per batch"))


LARGE_ANSWER_BYTES = 64 * 1024
"""A cached answer at least this large is kept in pieces (:meth:`Exchange.answer_parts`)."""

Admission = Callable[[Sequence[Call | EthreadError]], Refused | None]
"""Admits a parsed request (all its calls at once) or says why not."""
LocalMethod = Callable[[Call], bytes]
"""A method the host answers itself: the JSON bytes of the result, or raises EthreadError."""
OnCaller = Callable[[Any, Call], bool]
"""Whether a call of a dispatcher is cheap enough to run right away on the caller."""


def everything_on_caller(dispatcher: Any, call: Call) -> bool:
    """The policy that runs every call on the caller's thread (in-process use)."""
    return True


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a client sends; None leaves a quantity unbounded (in-process use)."""

    max_body_bytes: int | None = None
    max_batch_calls: int | None = None
    max_response_bytes: int | None = None
    """Bytes of one answer (single or batch): the call that would pass it, and every call
    after it (not run), answers -32003 "response too large"."""


class Exchange:
    """One request on its way through the pipeline: what is answered, what is left to run."""

    __slots__ = ("_answers", "_budget", "_final", "_parts", "calls", "dispatcher", "is_batch",
                 "pending", "refused", "token", "what")

    def __init__(self, dispatcher: Responder | None, what: str, is_batch: bool = False,
                 max_response_bytes: int | None = None) -> None:
        self.dispatcher = dispatcher
        self.what = what
        """What the request asked, for an access log: a method, ``batch(n)`` or ``invalid``."""
        self.is_batch = is_batch
        self.refused: Refused | None = None
        self.calls: Sequence[Call | EthreadError] = ()
        """The calls of a dispatched request (given back when its answer cannot be sent)."""
        self.pending: list[tuple[int, Call]] = []
        """The calls still to run (:meth:`run`), with their positions in the request."""
        self._answers: list[bytes | None] = []
        self._final: bytes | None = None
        self._parts: tuple[bytes, ...] | None = None
        """The answer of a single call in pieces, not joined (a large cached answer)."""
        self._budget = max_response_bytes
        """Bytes the answer may still grow by (None: unbounded; below 0: the bound was hit)."""
        self.token = CancelToken()
        """Cancelled by the host when the answer is no longer wanted (:meth:`cancel`)."""

    def cancel(self, reason: str = "request cancelled: the client disconnected") -> None:
        """Stop the pending work (any thread); unfinished calls answer -32000 with ``reason``."""
        self.token.cancel(reason)

    def _fits(self, size: int) -> bool:
        """Take ``size`` bytes from the answer's bound; False (the bound hit) if they do not fit."""
        budget = self._budget
        if budget is None:
            return True
        if budget < 0 or size > budget:
            self._budget = -1
            return False
        self._budget = budget - size
        return True

    def _keep(self, index: int, call_id: Any, answer: bytes) -> None:
        """Keep one call's answer, or its -32003 once the answer would pass its bound."""
        self._answers[index] = (answer if self._fits(len(answer))
                                else error_response(call_id, ResponseTooLarge()))

    def _keep_parts(self, call_id: Any, parts: tuple[bytes, ...]) -> None:
        """Keep the answer of a single call as pieces (within the bound as :meth:`_keep`)."""
        if self._fits(sum(len(part) for part in parts)):
            self._parts = parts
        else:
            self._answers[0] = error_response(call_id, ResponseTooLarge())

    @property
    def over_bound(self) -> bool:
        """Whether the answer hit its size bound (the rest of its calls are not run)."""
        return self._budget is not None and self._budget < 0

    @classmethod
    def finished(cls, what: str, body: bytes, refused: Refused | None = None) -> Exchange:
        """An exchange already answered: ``body`` is sent as it is."""
        exchange = cls(None, what)
        exchange._final = body
        exchange.refused = refused
        return exchange

    @property
    def status(self) -> int:
        """The HTTP status an HTTP host answers with."""
        return 200 if self.refused is None else self.refused.status

    @property
    def headers(self) -> tuple[tuple[bytes, bytes], ...]:
        """Extra HTTP headers to send with the answer (those of a refusal, such as Retry-After)."""
        return () if self.refused is None else self.refused.headers

    def pending_calls(self) -> list[Call]:
        """The calls :meth:`run` will run, for a host choosing where to run them."""
        return [call for _, call in self.pending]

    def run(self) -> None:
        """Run the pending calls (blocking). Never raises but for
        :class:`~ethread.evm.time_limit.BudgetSpent` under a host's budget (the call then runs
        again with the next :meth:`run`)."""
        dispatcher = self.dispatcher
        token = self.token
        with cancellable(token):
            for index, call in self.pending:
                assert dispatcher is not None  # only a dispatched request has pending calls
                if token.cancelled:
                    if not call.is_notification:
                        self._answers[index] = error_response(call.id, Cancelled(token.reason))
                elif call.is_notification:
                    if not self.over_bound:
                        dispatcher.run_notification(call)
                elif self.over_bound:
                    self._answers[index] = error_response(call.id, ResponseTooLarge())
                else:
                    self._keep(index, call.id, dispatcher.respond(call))
        self.pending = []

    def answer_parts(self) -> tuple[bytes, ...] | None:
        """:meth:`answer` as pieces to write one after another, without joining them."""
        if self._parts is not None:
            return self._parts
        answer = self.answer()
        return None if answer is None else (answer,)

    def answer(self) -> bytes | None:
        """The response body, once nothing is pending; None when only notifications came."""
        if self._final is not None:
            return self._final
        if self._parts is not None:
            return b"".join(self._parts)
        if not self.is_batch:
            return self._answers[0]
        present = [a for a in self._answers if a is not None]
        return b"[" + b",".join(present) + b"]" if present else None


class Pipeline:
    """The steps of the module docstring, configured once per host."""

    __slots__ = ("_all_on_caller", "limits", "on_caller")

    def __init__(self, limits: Limits = Limits(), on_caller: OnCaller = everything_on_caller,
                 ) -> None:
        self.limits = limits
        self.on_caller = on_caller
        self._all_on_caller = on_caller is everything_on_caller  # spares a call per call

    def submit(self, dispatcher: Responder, body: bytes, admit: Admission | None = None,
               local: Mapping[str, LocalMethod] | None = None) -> Exchange:
        """Parse, check, admit and dispatch ``body``; cheap work is done before this returns."""
        opened = self.open(dispatcher, body, local)
        if isinstance(opened, Exchange):
            return opened
        return self.dispatch(opened, None if admit is None else admit(opened.calls))

    def open(self, dispatcher: Responder, body: bytes,
             local: Mapping[str, LocalMethod] | None = None) -> Exchange | Opened:
        """Steps 1 and 2 (and a request answered before): an :class:`Opened` request to admit,
        or the finished exchange of one that ends here. A host admitting several requests at
        once opens each, admits them together, then calls :meth:`dispatch` for each."""
        limit = self.limits.max_body_bytes
        if limit is not None and len(body) > limit:
            too_large = body_too_large(limit)
            return Exchange.finished("-", too_large.body(), too_large)
        known = dispatcher.answered(body)
        if known is not None and (local is None or known[0].method not in local):
            bound = self.limits.max_response_bytes
            if bound is None or len(known[2]) <= bound:
                # charged as the call it holds; one past this pipeline's bound goes the whole
                # way instead, and answers -32003
                call, call_id, answer = known
                return Opened(dispatcher, body, local, call.method, False, (call,),
                              (call_id,), answer)
        try:
            is_batch, calls, ids = parse_request(body)
        except EthreadError as exc:
            return Exchange.finished("invalid", error_response(None, exc))
        if is_batch:
            what = f"batch({len(calls)})"
            limit = self.limits.max_batch_calls
            if limit is not None and len(calls) > limit:
                too_many = batch_too_large(len(calls), limit)
                return Exchange.finished(what, too_many.body(), too_many)
        else:
            first = calls[0]
            what = first.method if isinstance(first, Call) else "invalid"
        return Opened(dispatcher, body, local, what, is_batch, calls, ids, None)

    def dispatch(self, opened: Opened, refused: Refused | None) -> Exchange:
        """Steps 3 to 5 for an opened request, given what admitting its calls said."""
        what, is_batch, calls, ids = opened.what, opened.is_batch, opened.calls, opened.ids
        if refused is not None:
            if opened.answer is not None:
                return Exchange.finished(what, refused.body(single_id=ids[0]), refused)
            wanted = [i for c, i in zip(calls, ids, strict=True)
                      if not (isinstance(c, Call) and c.is_notification)]
            refusal = (refused.body(wanted) if is_batch
                       else refused.body(single_id=wanted[0] if wanted else None))
            return Exchange.finished(what, refusal, refused)
        if opened.answer is not None:
            exchange = Exchange.finished(what, opened.answer)
            exchange.calls = calls
            return exchange
        dispatcher, body, local = opened.dispatcher, opened.body, opened.local
        exchange = Exchange(dispatcher, what, is_batch, self.limits.max_response_bytes)
        exchange.calls = calls
        exchange._answers = [None] * len(calls)
        keep = exchange._keep
        on_caller = None if self._all_on_caller else self.on_caller
        for index, call in enumerate(calls):
            if not isinstance(call, Call):
                keep(index, ids[index], error_response(ids[index], call))
                continue
            if index and exchange.over_bound:
                if not call.is_notification:
                    exchange._answers[index] = error_response(call.id, ResponseTooLarge())
                continue
            handler = None if local is None else local.get(call.method)
            if handler is not None:
                answer = _run_local(handler, call)
                if answer is not None:
                    keep(index, call.id, answer)
            elif on_caller is None or on_caller(dispatcher, call):
                if call.is_notification:
                    dispatcher.run_notification(call)
                else:
                    keep(index, call.id, dispatcher.respond(call, None if is_batch else body))
            else:
                hit = (None if call.is_notification
                       else _cached(dispatcher, call, None if is_batch else body))
                if hit is None:
                    exchange.pending.append((index, call))
                elif is_batch or len(hit) < LARGE_ANSWER_BYTES:
                    keep(index, call.id, result_response(call.id, hit))
                else:  # kept in pieces: a large cached answer is written without a copy
                    exchange._keep_parts(call.id, result_parts(call.id, hit))
        return exchange


class Opened(NamedTuple):
    """A request parsed and within its limits, its calls not yet admitted."""

    dispatcher: Responder
    body: bytes
    local: Mapping[str, LocalMethod] | None
    what: str
    is_batch: bool
    calls: Sequence[Call | EthreadError]
    """What admission charges for."""
    ids: Sequence[Any]
    answer: bytes | None
    """The whole answer of a request answered before (its one call is charged still)."""


def _cached(dispatcher: Responder, call: Call, body: bytes | None) -> bytes | None:
    """A cached answer, if any; a cache that fails is a miss, never a failed request."""
    try:
        return dispatcher.cached_result(call, body)
    except Exception:
        return None


def _run_local(handler: LocalMethod, call: Call) -> bytes | None:
    """A host-answered method; a notification runs it and gets no answer."""
    try:
        result = handler(call)
    except EthreadError as exc:
        return None if call.is_notification else error_response(call.id, exc)
    except Exception:
        log.exception("internal error in %s", call.method)
        return None if call.is_notification else error_response(call.id,
                                                                InternalError("internal error"))
    return None if call.is_notification else result_response(call.id, result)


IN_PROCESS = Pipeline()
"""No limits, no admission, everything on the caller: the pipeline of ``ethread.handle``."""
