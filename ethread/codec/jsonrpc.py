"""The JSON-RPC 2.0 envelope: single and batch requests, notifications, error objects.

:func:`handle` is the whole codec: bytes in, bytes out, never an exception. Any host (an HTTP
server, a WebSocket, a web3.py provider) embeds it as it is.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import Any

import orjson

from ..backend import Backend
from ..errors import EthreadError, InternalError, InvalidRequest, MethodNotFound, ParseError
from .dispatch import DEFAULT_CONTEXT, METHODS, Context, call_method
from .response_cache import ResponseCache

log = logging.getLogger("ethread.rpc")

_NO_ID = object()


@dataclass(frozen=True, slots=True)
class Call:
    """One parsed call of a request. ``id`` is ``_NO_ID`` for a notification."""

    method: str
    params: list[Any]
    id: Any

    @property
    def is_notification(self) -> bool:
        return self.id is _NO_ID


def error_object(error: EthreadError) -> dict[str, Any]:
    """The one place an error becomes its JSON-RPC form."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return body


def result_response(request_id: Any, result: bytes) -> bytes:
    """A success response around result bytes that are already JSON (one copy of them, which
    matters for answers of megabytes)."""
    return b"".join((b'{"jsonrpc":"2.0","id":', orjson.dumps(request_id), b',"result":', result, b"}"))


def error_response(request_id: Any, error: EthreadError) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error_object(error)})


def parse_call(item: Any) -> Call | EthreadError:
    """Validate one request object; an invalid one comes back as the error to answer."""
    if not isinstance(item, dict):
        return InvalidRequest("invalid request")
    request_id = item.get("id", _NO_ID)
    if request_id is not _NO_ID and not (
        request_id is None or isinstance(request_id, str)
        or (isinstance(request_id, int | float) and not isinstance(request_id, bool))
    ):
        return InvalidRequest("invalid request: id must be a string, a number or null")
    if item.get("jsonrpc") != "2.0":
        return InvalidRequest("invalid request: jsonrpc must be \"2.0\"")
    method = item.get("method")
    if not isinstance(method, str):
        return InvalidRequest("invalid request: method must be a string")
    params = item.get("params", [])
    if params is None:
        params = []
    if not isinstance(params, list):
        return InvalidRequest("invalid request: params must be an array")
    return Call(method=method, params=params, id=request_id)


def _id_of(item: Any) -> Any:
    if isinstance(item, dict):
        value = item.get("id")
        if value is None or isinstance(value, str) or (
            isinstance(value, int | float) and not isinstance(value, bool)
        ):
            return value
    return None


def parse_request(body: bytes) -> tuple[bool, list[Call | EthreadError], list[Any]]:
    """Parse a body into its calls: (is_batch, calls or errors, ids for the errors).

    Raises ParseError for bytes that are not JSON, InvalidRequest for an empty batch.
    """
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ParseError("parse error") from None
    if isinstance(document, list):
        if not document:
            raise InvalidRequest("empty batch")
        return True, [parse_call(item) for item in document], [_id_of(i) for i in document]
    return False, [parse_call(document)], [_id_of(document)]


class Dispatcher:
    """Runs calls against one backend, with a cache of answers keyed on the chain's
    generation (history is immutable: an answer changes only when the chain does)."""

    def __init__(self, backend: Backend, context: Context = DEFAULT_CONTEXT,
                 cache: ResponseCache | None = None) -> None:
        self.backend = backend
        self.context = context
        self.cache = cache if cache is not None else ResponseCache()

    def result(self, call: Call) -> bytes:
        """The JSON bytes of one call's result. Raises EthreadError."""
        spec = METHODS.get(call.method)
        if spec is None:
            raise MethodNotFound(f"the method {call.method} does not exist/is not available")
        if not spec.cacheable:
            return call_method(self.backend, call.method, call.params, self.context)
        generation = self.backend.generation()
        key = _cache_key(call)
        cached = self.cache.get(generation, key)
        if cached is not None:
            return cached
        result = call_method(self.backend, call.method, call.params, self.context)
        self.cache.put(generation, key, result)
        return result

    def cached_result(self, call: Call) -> bytes | None:
        """The result bytes of a call if an answer is cached for the chain as it is now: cheap
        enough for a server to try on its event loop before handing work to a thread."""
        spec = METHODS.get(call.method)
        if spec is None or not spec.cacheable:
            return None
        return self.cache.get(self.backend.generation(), _cache_key(call))

    def respond(self, call: Call) -> bytes:
        """The response to one call, errors included, never raising."""
        try:
            return result_response(call.id, self.result(call))
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

    def handle(self, body: bytes) -> bytes | None:
        try:
            is_batch, calls, ids = parse_request(body)
        except EthreadError as exc:
            return error_response(None, exc)
        answers = self.answers(calls, ids)
        if not is_batch:
            return answers[0] if answers else None
        if not answers:
            return None
        return b"[" + b",".join(answers) + b"]"

    def answers(self, calls: list[Call | EthreadError], ids: list[Any]) -> list[bytes]:
        """The answers to parsed calls, in order; notifications run and get none."""
        out: list[bytes] = []
        for call, request_id in zip(calls, ids, strict=True):
            if isinstance(call, EthreadError):
                out.append(error_response(request_id, call))
            elif call.is_notification:
                self.run_notification(call)
            else:
                out.append(self.respond(call))
        return out


def _cache_key(call: Call) -> tuple[str, bytes]:
    return call.method, orjson.dumps(call.params)


_dispatchers: weakref.WeakKeyDictionary[Any, Dispatcher] = weakref.WeakKeyDictionary()


def handle(backend: Backend, request: bytes) -> bytes | None:
    """Answer a JSON-RPC 2.0 request body (single or batch) against ``backend``.

    Returns the response body, or None when every call was a notification. Never raises:
    every failure is an error object in the answer.
    """
    try:
        dispatcher = _dispatchers.get(backend)
        if dispatcher is None:
            dispatcher = _dispatchers[backend] = Dispatcher(backend)
    except TypeError:  # a backend that cannot be weakly referenced: no shared cache
        dispatcher = Dispatcher(backend)
    return dispatcher.handle(request)
