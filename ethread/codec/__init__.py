"""The JSON edge: hex, params, model serialization and the JSON-RPC envelope.

The names below are imported from :mod:`.jsonrpc` when first read (PEP 562): a module that
needs only :mod:`.hex` or :mod:`.answers` does not load the dispatcher and every method."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .jsonrpc import Dispatcher, error_object, handle

_FROM_JSONRPC = ("Dispatcher", "error_object", "handle")


def __getattr__(name: str) -> Any:
    if name not in _FROM_JSONRPC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import jsonrpc

    value = getattr(jsonrpc, name)
    globals()[name] = value
    return value


__all__ = ["Dispatcher", "error_object", "handle"]
