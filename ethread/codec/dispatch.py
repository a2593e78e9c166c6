"""The method table: each JSON-RPC method name to a handler that parses its params, calls the
pure method and writes the result as JSON bytes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .. import methods
from ..backend import Backend
from ..errors import EthreadError, InvalidParams
from ..methods.call import CallStates
from ..methods.logs import DEFAULT_LIMITS, LogLimits
from ..models import BlockRef
from .hex import parse_address, parse_hash, parse_storage_key
from .params import (
    parse_block_ref,
    parse_bool,
    parse_call_request,
    parse_index,
    parse_log_filter,
    parse_number_or_tag,
)
from .serialize import FragmentCache, block_json, to_json

CLIENT_VERSION = "ethread/0.1.0"


@dataclass(frozen=True, slots=True)
class Context:
    """What a handler may need besides the backend: the service's limits and the caches that
    live as long as the backend's dispatcher (give each dispatcher its own, see
    :meth:`for_backend`). Without caches every answer is computed and encoded afresh."""

    log_limits: LogLimits = DEFAULT_LIMITS
    fragments: FragmentCache | None = field(default=None, compare=False)
    call_states: CallStates | None = field(default=None, compare=False)

    def for_backend(self) -> Context:
        """These limits with fresh caches, for one backend's dispatcher."""
        return replace(self, fragments=FragmentCache(), call_states=CallStates())


DEFAULT_CONTEXT = Context()
Params = list[Any]
Handler = Callable[[Backend, Params, Context], Any]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    handler: Handler
    required: int
    optional: int = 0
    cacheable: bool = True
    """The answer depends only on the chain (and so on the backend's generation)."""


def _arg(params: Params, index: int, parse: Callable[[Any], Any]) -> Any:
    """Parse one positional argument, naming its position in any error, as geth does."""
    try:
        return parse(params[index])
    except InvalidParams as exc:
        raise InvalidParams(f"invalid argument {index}: {exc.message}", exc.data) from None


def _get_block_by_hash(backend: Backend, params: Params, ctx: Context) -> Any:
    block = methods.get_block_by_hash(backend, _arg(params, 0, parse_hash))
    full = _arg(params, 1, parse_bool)
    return None if block is None else block_json(block, full, ctx.fragments)


def _get_block_by_number(backend: Backend, params: Params, ctx: Context) -> Any:
    block = methods.get_block_by_number(backend, _arg(params, 0, parse_number_or_tag))
    full = _arg(params, 1, parse_bool)
    return None if block is None else block_json(block, full, ctx.fragments)


def _uncle(block: Any, ctx: Context) -> Any:
    return None if block is None else block_json(block, False, ctx.fragments)


def _get_uncle_by_hash(backend: Backend, params: Params, ctx: Context) -> Any:
    return _uncle(methods.get_uncle_by_block_hash_and_index(
        backend, _arg(params, 0, parse_hash), _arg(params, 1, parse_index)), ctx)


def _get_uncle_by_number(backend: Backend, params: Params, ctx: Context) -> Any:
    return _uncle(methods.get_uncle_by_block_number_and_index(
        backend, _arg(params, 0, parse_number_or_tag), _arg(params, 1, parse_index)), ctx)


def _tx(itx: Any, ctx: Context) -> Any:
    return None if itx is None else to_json(itx, ctx.fragments)


def _get_tx_by_hash(backend: Backend, params: Params, ctx: Context) -> Any:
    return _tx(methods.get_transaction_by_hash(backend, _arg(params, 0, parse_hash)), ctx)


def _get_tx_by_block_hash(backend: Backend, params: Params, ctx: Context) -> Any:
    return _tx(methods.get_transaction_by_block_hash_and_index(
        backend, _arg(params, 0, parse_hash), _arg(params, 1, parse_index)), ctx)


def _get_tx_by_block_number(backend: Backend, params: Params, ctx: Context) -> Any:
    return _tx(methods.get_transaction_by_block_number_and_index(
        backend, _arg(params, 0, parse_number_or_tag), _arg(params, 1, parse_index)), ctx)


def _get_block_receipts(backend: Backend, params: Params, ctx: Context) -> Any:
    ref = _arg(params, 0, lambda v: parse_block_ref(v, allow_decimal=True))
    receipts = methods.get_block_receipts(backend, ref)
    return None if receipts is None else to_json(receipts, ctx.fragments)


def _get_logs(backend: Backend, params: Params, ctx: Context) -> Any:
    return to_json(methods.get_logs(backend, _arg(params, 0, parse_log_filter), ctx.log_limits),
                   ctx.fragments)


def _call(backend: Backend, params: Params, ctx: Context) -> Any:
    request = _arg(params, 0, parse_call_request)
    block: BlockRef = "latest"
    if len(params) > 1 and params[1] is not None:
        block = _arg(params, 1, parse_block_ref)
    return "0x" + methods.call(backend, request, block, ctx.call_states).hex()


def _storage_keys(value: Any) -> list[bytes]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidParams("storage keys must be a list")
    return [parse_storage_key(k) for k in value]


def _get_proof(backend: Backend, params: Params, ctx: Context) -> Any:
    proof = methods.get_proof(
        backend,
        _arg(params, 0, parse_address),
        _arg(params, 1, _storage_keys),
        _arg(params, 2, parse_block_ref) if len(params) > 2 and params[2] is not None else "latest",
    )
    return to_json(proof)


def _chain_id(backend: Backend, params: Params, ctx: Context) -> Any:
    config = backend.chain_config()
    return None if config is None else hex(config.chain_id)


def _net_version(backend: Backend, params: Params, ctx: Context) -> Any:
    config = backend.chain_config()
    return None if config is None else str(config.chain_id)


def _block_number(backend: Backend, params: Params, ctx: Context) -> Any:
    head = backend.pointer("latest")
    return hex(head or 0)


def _client_version(backend: Backend, params: Params, ctx: Context) -> Any:
    return CLIENT_VERSION


METHODS: dict[str, MethodSpec] = {
    "eth_getLogs": MethodSpec(_get_logs, 1),
    "eth_getBlockByHash": MethodSpec(_get_block_by_hash, 2),
    "eth_getBlockByNumber": MethodSpec(_get_block_by_number, 2),
    "eth_getUncleByBlockNumberAndIndex": MethodSpec(_get_uncle_by_number, 2),
    "eth_getUncleByBlockHashAndIndex": MethodSpec(_get_uncle_by_hash, 2),
    "eth_getTransactionByHash": MethodSpec(_get_tx_by_hash, 1),
    "eth_getTransactionByBlockHashAndIndex": MethodSpec(_get_tx_by_block_hash, 2),
    "eth_getTransactionByBlockNumberAndIndex": MethodSpec(_get_tx_by_block_number, 2),
    "eth_getBlockReceipts": MethodSpec(_get_block_receipts, 1),
    "eth_call": MethodSpec(_call, 1, 2),
    "eth_getProof": MethodSpec(_get_proof, 2, 1),
    "eth_chainId": MethodSpec(_chain_id, 0),
    "eth_blockNumber": MethodSpec(_block_number, 0),
    "net_version": MethodSpec(_net_version, 0),
    "web3_clientVersion": MethodSpec(_client_version, 0),
}


def check_arity(spec: MethodSpec, params: Params) -> None:
    """geth's wording for too few or too many positional arguments."""
    if len(params) > spec.required + spec.optional:
        raise InvalidParams(f"too many arguments, want at most {spec.required + spec.optional}")
    for index in range(spec.required):
        if index >= len(params):
            raise InvalidParams(f"missing value for required argument {index}")


def call_method(backend: Backend, method: str, params: Params,
                ctx: Context = DEFAULT_CONTEXT) -> bytes:
    """Run one method and return its result as JSON bytes. Raises EthreadError."""
    spec = METHODS[method]
    check_arity(spec, params)
    return orjson.dumps(spec.handler(backend, params, ctx))


__all__ = ["METHODS", "Context", "EthreadError", "MethodSpec", "call_method"]
