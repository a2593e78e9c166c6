"""web3.py providers that answer from a backend in this process: no server, no socket.

    from web3 import Web3
    from ethread.web3 import EthreadProvider
    w3 = Web3(EthreadProvider(backend))
    w3.eth.get_block("latest")

Given a :class:`~ethread.devchain.DevChain` instead of a backend, the provider serves
its backend and can also send: eth_accounts (the dev accounts, unlocked), eth_sendTransaction,
eth_sendRawTransaction, and the test controls (evm_snapshot, evm_revert, anvil_setBalance...):

    w3 = Web3(EthreadProvider(DevChain(ethread.MemoryBackend())))

Requests still go through the JSON-RPC codec as bytes, exactly as they would over HTTP, so a
test suite on this provider sees the answers (and the errors, such as a revert that web3.py
turns into ``ContractLogicError``) the server would give. Needs the ``web3`` extra
(``pip install 'ethread[web3]'``); this module is never imported by the rest of ethread.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson

try:
    from web3._utils.encoding import FriendlyJsonSerde, Web3JsonEncoder
    from web3.providers.async_base import AsyncJSONBaseProvider
    from web3.providers.base import JSONBaseProvider
    from web3.types import RPCEndpoint, RPCResponse
except ImportError as _missing:  # the web3 extra is optional: say how to get it
    raise ImportError("ethread.web3 needs web3.py, which is not installed: "
                      "pip install 'ethread[web3]'", name="web3") from _missing

from ethread.backend import Backend
from ethread.codec.dispatch import DEFAULT_CONTEXT, Context
from ethread.codec.jsonrpc import Dispatcher
from ethread.devchain import DevChain
from ethread.errors import InternalError

__all__ = ["AsyncEthreadProvider", "EthreadProvider"]


def _no_answer() -> bytes:
    return (b'{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"no response"}}'
            % InternalError.code)


_WEB3_JSON = Web3JsonEncoder()


def _request_body(method: RPCEndpoint, params: Any, request_id: int) -> bytes:
    """The request as web3.py's providers encode it, with orjson: web3.py's own encoder
    (``json`` with a class for bytes and attribute dicts) costs more than a dev chain's
    quick answers. Anything orjson cannot take (an integer beyond 64 bits) goes through
    web3.py's encoder as before."""
    body = {"jsonrpc": "2.0", "method": method, "params": params or [], "id": request_id}
    try:
        return orjson.dumps(body, default=_WEB3_JSON.default)
    except TypeError:
        return FriendlyJsonSerde().json_encode(body, Web3JsonEncoder).encode()


def _response(raw: bytes) -> RPCResponse:
    """The response decoded as web3.py decodes it (``json``: orjson would turn an integer
    beyond 64 bits into a float), without its text conversion and wrapper."""
    try:
        return json.loads(raw)  # type: ignore[no-any-return]
    except ValueError:
        return JSONBaseProvider.decode_rpc_response(raw)  # web3.py's error for bad JSON


def _sorted_batch(response: Any) -> list[RPCResponse] | RPCResponse:
    """Batch answers in request order (ids are the provider's counter), or the one error
    object a refused batch gets."""
    if not isinstance(response, list):
        return response  # type: ignore[no-any-return]
    return sorted(response, key=lambda r: (r.get("id") is None, r.get("id") or 0))


def _dispatcher(source: Backend | DevChain, context: Context) -> Dispatcher:
    """A dispatcher over a backend, or over a dev chain's backend with its sending methods."""
    if isinstance(source, DevChain):
        addresses = tuple(account.address for account in source.accounts)
        return Dispatcher(source.backend, context.for_dev_chain(source, addresses))
    return Dispatcher(source, context)


class EthreadProvider(JSONBaseProvider):
    """Synchronous provider over a backend or a dev chain, with its own answer cache."""

    def __init__(self, backend: Backend | DevChain, context: Context = DEFAULT_CONTEXT,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dispatcher = _dispatcher(backend, context)
        self.chain = backend if isinstance(backend, DevChain) else None

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """Answer one web3.py request through the in-process dispatcher."""
        raw = self.dispatcher.handle(_request_body(method, params, next(self.request_counter)))
        return _response(raw or _no_answer())

    def make_batch_request(self, requests: list[tuple[RPCEndpoint, Any]],
                           ) -> list[RPCResponse] | RPCResponse:
        """Answer a web3.py batch through the in-process dispatcher, responses in request order."""
        raw = self.dispatcher.handle(self.encode_batch_rpc_request(requests))
        return _sorted_batch(self.decode_rpc_response(raw or _no_answer()))

    def is_connected(self, show_traceback: bool = False) -> bool:
        """Always True: the chain is in this process."""
        return True


class AsyncEthreadProvider(AsyncJSONBaseProvider):
    """Asynchronous provider over ``backend``: each request runs in a worker thread, so a slow
    call (a wide eth_getLogs, a long eth_call) does not stall the caller's event loop."""

    def __init__(self, backend: Backend | DevChain, context: Context = DEFAULT_CONTEXT,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dispatcher = _dispatcher(backend, context)
        self.chain = backend if isinstance(backend, DevChain) else None

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """Answer one web3.py request through the dispatcher, in a worker thread."""
        raw = await asyncio.to_thread(self.dispatcher.handle,
                                      self.encode_rpc_request(method, params))
        return self.decode_rpc_response(raw or _no_answer())

    async def make_batch_request(self, requests: list[tuple[RPCEndpoint, Any]],
                                 ) -> list[RPCResponse] | RPCResponse:
        """Answer a web3.py batch through the dispatcher in a worker thread, responses in request
        order."""
        raw = await asyncio.to_thread(self.dispatcher.handle,
                                      self.encode_batch_rpc_request(requests))
        return _sorted_batch(self.decode_rpc_response(raw or _no_answer()))

    async def is_connected(self, show_traceback: bool = False) -> bool:
        """Always True: the chain is in this process."""
        return True
