"""The JSON edge: hex, params, model serialization and the JSON-RPC envelope."""

from .jsonrpc import Dispatcher, error_object, handle

__all__ = ["Dispatcher", "error_object", "handle"]
