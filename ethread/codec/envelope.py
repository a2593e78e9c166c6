"""The JSON-RPC 2.0 envelope on the wire: parsing a request body into calls, and writing
result and error objects (every error through :func:`error_object`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import EthreadError, InvalidParams, InvalidRequest, ParseError

_NO_ID = object()
MAX_PARAMS_DEPTH = 128
"""Deepest nesting of arrays and objects in a call's params: well under orjson's own (254 when
encoding), so hostile nesting is a clean -32602."""


@dataclass(frozen=True, slots=True)
class Call:
    """One parsed call of a request. ``id`` is ``_NO_ID`` for a notification."""

    method: str
    params: list[Any]
    id: Any

    @property
    def is_notification(self) -> bool:
        """Whether the call came without an ``id`` (a notification: run, never answered)."""
        return self.id is _NO_ID


def error_object(error: EthreadError) -> dict[str, Any]:
    """The one place an error becomes its JSON-RPC form."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return body


def result_response(request_id: Any, result: bytes) -> bytes:
    """A success response around result bytes that are already JSON (copied once)."""
    return b"".join((b'{"jsonrpc":"2.0","id":', orjson.dumps(request_id), b',"result":', result, b"}"))


def result_parts(request_id: Any, result: bytes) -> tuple[bytes, bytes, bytes]:
    """:func:`result_response` as three pieces, for a host that writes them without joining."""
    return (b'{"jsonrpc":"2.0","id":%s,"result":' % orjson.dumps(request_id), result, b"}")


def error_response(request_id: Any, error: EthreadError) -> bytes:
    """The JSON-RPC error response for ``request_id`` carrying ``error``."""
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error_object(error)})


_PLAIN_IDS = frozenset((int, str, type(None)))
"""The types of almost every id sent: valid without the checks of :func:`_valid_id`."""


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str | orjson.Fragment) or (
        isinstance(value, int | float) and not isinstance(value, bool))


def parse_call(item: Any, shallow: bool = False) -> Call | EthreadError:
    """Validate one request object; an invalid one comes back as the error to answer.
    ``shallow``: its body cannot nest as deep as :data:`MAX_PARAMS_DEPTH` (no depth walk)."""
    if not isinstance(item, dict):
        return InvalidRequest("invalid request")
    request_id = item.get("id", _NO_ID)
    if (request_id is not _NO_ID and type(request_id) not in _PLAIN_IDS
            and not _valid_id(request_id)):
        return InvalidRequest("invalid request: id must be a string, a number or null")
    if item.get("jsonrpc") != "2.0":
        return InvalidRequest("invalid request: jsonrpc must be \"2.0\"")
    method = item.get("method")
    if not isinstance(method, str):
        return InvalidRequest("invalid request: method must be a string")
    params = item.get("params")
    if params is None:
        params = []
    elif not isinstance(params, list):
        return InvalidRequest("invalid request: params must be an array")
    elif params and not shallow and _too_deep(params, MAX_PARAMS_DEPTH):
        return InvalidParams(f"invalid params: nested more than {MAX_PARAMS_DEPTH} levels deep")
    return Call(method=method, params=params, id=request_id)


def _too_deep(value: list[Any] | dict[str, Any], levels: int) -> bool:
    """Whether the arrays and objects in ``value`` (the first level) nest deeper than ``levels``."""
    if levels <= 0:
        return True
    children = value.values() if isinstance(value, dict) else value
    return any(isinstance(child, list | dict) and _too_deep(child, levels - 1)
               for child in children)


def _id_of(item: Any) -> Any:
    if isinstance(item, dict):
        value = item.get("id")
        if _valid_id(value):
            return value
    return None


def parse_request(body: bytes) -> tuple[bool, list[Call | EthreadError], list[Any]]:
    """Parse a body into (is_batch, calls or errors, ids for the errors). Raises ParseError
    for bytes that are not JSON, InvalidRequest for an empty batch."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ParseError("parse error") from None
    if isinstance(document, list):
        if not document:
            raise InvalidRequest("empty batch")
        if any(isinstance(i, dict) and isinstance(i.get("id"), float) for i in document):
            _exact_ids(body, document)
        return True, [parse_call(item) for item in document], [_id_of(i) for i in document]
    if isinstance(document, dict) and isinstance(document.get("id"), float):
        _exact_ids(body, [document])
    # nothing nests deeper than the body has opening brackets (those in strings included)
    call = parse_call(document, body.count(b"[") + body.count(b"{") < MAX_PARAMS_DEPTH)
    if isinstance(call, Call):  # its id is the one to answer under (a notification's: null)
        return False, [call], [None if call.id is _NO_ID else call.id]
    return False, [call], [_id_of(document)]


def _exact_ids(body: bytes, items: list[Any]) -> None:
    """Replace each float id by its text as sent, to echo it exactly (orjson reads big integers as floats)."""
    import json

    def raw(text: str) -> orjson.Fragment:
        return orjson.Fragment(text.encode())

    try:
        again = json.loads(body, parse_int=raw, parse_float=raw, parse_constant=raw)
    except (ValueError, RecursionError):
        return
    originals = again if isinstance(again, list) else [again]
    for item, original in zip(items, originals, strict=False):
        if isinstance(item, dict) and isinstance(item.get("id"), float) and isinstance(
                original, dict):
            item["id"] = original.get("id")
