"""web3.py providers that answer from a backend in this process: no server, no socket.

    w3 = Web3(EthreadProvider(backend))

Given a :class:`~ethread.devchain.DevChain`, it can also send: eth_accounts (unlocked dev
accounts), eth_sendTransaction, eth_sendRawTransaction, and the test controls (evm_snapshot,
evm_revert, anvil_setBalance...). Requests go through the JSON-RPC codec as bytes, so a test
suite sees the answers and errors the server would give. On a dev chain the provider also
explains (:class:`Explainer`): a failed transaction or call is traced and kept as a call tree
with revert reasons and custom errors of ``provider.abis`` decoded (:data:`FAILURES`, shown
by the pytest plugin); once a contract calls hardhat's console, its ``console.log`` lines are
printed. Needs the ``web3`` extra; nothing else in ethread imports this module.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson

from ethread.extras import install_hint

try:
    from web3._utils.encoding import FriendlyJsonSerde, Web3JsonEncoder
    from web3.providers.async_base import AsyncJSONBaseProvider
    from web3.providers.base import JSONBaseProvider
    from web3.types import RPCEndpoint, RPCResponse
except ImportError as _missing:  # the web3 extra is optional: say how to get it
    raise ImportError("ethread.web3 needs web3.py, which is not installed: "
                      f"{install_hint('web3')}", name="web3") from _missing

from ethread.backend import Backend
from ethread.devchain import DevChain
from ethread.errors import InternalError
from ethread.methods.tracing.explain import (
    CONSOLE_MARK,
    ContractAbis,
    console_logs,
    render_tree,
)
from ethread.methods.tracing.models import CallFrame, CallLog
from ethread.rpc.context import DEFAULT_CONTEXT, Context
from ethread.rpc.dispatcher import Dispatcher

__all__ = ["FAILURES", "AsyncEthreadProvider", "EthreadProvider", "Explainer", "Failure"]


@dataclass(frozen=True, slots=True)
class Failure:
    """A transaction or call that failed on a dev chain, explained."""

    method: str
    tree: str
    """The call tree as text (see :func:`ethread.methods.tracing.explain.render_tree`)."""
    console: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.method} failed:\n{self.tree}"


FAILURES: deque[Failure] = deque(maxlen=16)
"""The latest failures explained by any provider of this process (the pytest plugin empties it
before each test and shows what a failed test left in it)."""

_EXPLAINED = frozenset({"eth_sendTransaction", "eth_sendRawTransaction", "eth_call",
                        "eth_estimateGas"})
_CALL_TRACER = {"tracer": "callTracer"}


class Explainer:
    """What a dev-chain provider adds to an answer: a failure's call tree, console.log lines
    (traced with callTracer after a failure, or once the console address has been seen)."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.abis = ContractAbis()
        self.console = False
        """Whether a contract that calls the console has been seen (then everything is traced)."""
        self.failures: deque[Failure] = deque(maxlen=16)

    def _ask(self, method: str, params: list[Any]) -> Any:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        answer = orjson.loads(self.dispatcher.handle(body) or b"{}")
        return answer.get("result")

    def _notice_console(self, data: Any, to: Any) -> None:
        if self.console:
            return
        if isinstance(data, str) and CONSOLE_MARK.hex() in data.lower():
            self.console = True
        elif isinstance(to, str):
            code = self._ask("eth_getCode", [to, "latest"])
            self.console = isinstance(code, str) and CONSOLE_MARK.hex() in code.lower()

    def after(self, method: str, params: Any, response: Any) -> None:
        """Look at one answered request; never raises (an explanation is a courtesy)."""
        if method not in _EXPLAINED or not isinstance(response, dict):
            return
        try:
            self._after(method, list(params) if isinstance(params, list | tuple) else [], response)
        except Exception:  # (a failed explanation must not fail the request)
            return

    def _after(self, method: str, params: list[Any], response: dict[str, Any]) -> None:
        request = params[0] if params and isinstance(params[0], dict) else None
        if request is not None:
            self._notice_console(request.get("data", request.get("input")), request.get("to"))
        error = response.get("error")
        if error is not None:
            if request is None or method == "eth_sendRawTransaction" or not _reverted(error):
                return
            block = _traceable(params[1] if len(params) > 1 and method != "eth_sendTransaction"
                               else "latest")
            tree = self._ask("debug_traceCall", [_without_nonce(request), block, _CALL_TRACER])
            self._report(method, tree, failed=True)
            return
        if method in ("eth_call", "eth_estimateGas"):
            if self.console and request is not None:
                block = _traceable(params[1] if len(params) > 1 else "latest")
                tree = self._ask("debug_traceCall", [request, block, _CALL_TRACER])
                self._report(method, tree, failed=False)
            return
        tx_hash = response.get("result")
        receipt = self._ask("eth_getTransactionReceipt", [tx_hash])
        if not isinstance(receipt, dict):
            return  # (not mined yet: automine is off)
        if method == "eth_sendRawTransaction":
            tx = self._ask("eth_getTransactionByHash", [tx_hash]) or {}
            self._notice_console(tx.get("input"), tx.get("to"))
        failed = receipt.get("status") == "0x0"
        if failed or self.console:
            tree = self._ask("debug_traceTransaction", [tx_hash, _CALL_TRACER])
            self._report(method, tree, failed=failed)

    def _report(self, method: str, tree: Any, *, failed: bool) -> None:
        if not isinstance(tree, dict):
            return
        frame = frame_of(tree)
        lines = tuple(console_logs(frame))
        for line in lines:
            print(line, file=sys.stdout)
        if failed:
            failure = Failure(method, render_tree(frame, self.abis), lines)
            self.failures.append(failure)
            FAILURES.append(failure)


def _reverted(error: Any) -> bool:
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    return message.startswith("execution reverted") or "revert" in message


def _traceable(block: Any) -> Any:
    """The block a failed call is traced on (a dev chain mines at once: pending is latest)."""
    return "latest" if block in (None, "pending") else block


def _without_nonce(request: dict[str, Any]) -> dict[str, Any]:
    """A failed send's request as a call (its nonce may be taken by then)."""
    return {k: v for k, v in request.items() if k != "nonce"}


def frame_of(data: dict[str, Any]) -> CallFrame:
    """callTracer's JSON frame as a typed :class:`CallFrame`."""
    def raw(key: str) -> bytes:
        value = data.get(key)
        return bytes.fromhex(value[2:]) if isinstance(value, str) else b""

    return CallFrame(
        type=str(data.get("type", "CALL")), sender=raw("from"),
        to=raw("to") if data.get("to") else None,
        value=int(data["value"], 16) if data.get("value") else None,
        gas=int(data.get("gas", "0x0"), 16), gas_used=int(data.get("gasUsed", "0x0"), 16),
        input=raw("input"), output=raw("output"), error=data.get("error"),
        revert_reason=data.get("revertReason"),
        calls=tuple(frame_of(call) for call in data.get("calls", ())),
        logs=tuple(CallLog(address=bytes.fromhex(log["address"][2:]),
                           topics=tuple(bytes.fromhex(t[2:]) for t in log.get("topics", ())),
                           data=bytes.fromhex(log.get("data", "0x")[2:]),
                           index=int(log.get("index", "0x0"), 16),
                           position=int(log.get("position", "0x0"), 16))
                   for log in data.get("logs", ())))


def _no_answer() -> bytes:
    return (b'{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"no response"}}'
            % InternalError.code)


_WEB3_JSON = Web3JsonEncoder()


def _request_body(method: RPCEndpoint, params: Any, request_id: int) -> bytes:
    """The request as web3.py encodes it, but with orjson (faster); what orjson cannot take (an
    integer beyond 64 bits) goes through web3.py's encoder."""
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
    """Batch answers in request order, or the one error object a refused batch gets."""
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
        self.explainer = Explainer(self.dispatcher) if self.chain is not None else None

    @property
    def abis(self) -> ContractAbis:
        """The ABIs failures are decoded with (add a contract's: ``provider.abis.add(abi)``)."""
        return self.explainer.abis if self.explainer is not None else ContractAbis()

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """Answer one web3.py request through the in-process dispatcher (explained on a dev chain)."""
        raw = self.dispatcher.handle(_request_body(method, params, next(self.request_counter)))
        response = _response(raw or _no_answer())
        if self.explainer is not None:
            self.explainer.after(method, params, response)
        return response

    def make_batch_request(self, requests: list[tuple[RPCEndpoint, Any]],
                           ) -> list[RPCResponse] | RPCResponse:
        """Answer a web3.py batch through the in-process dispatcher, responses in request order."""
        raw = self.dispatcher.handle(self.encode_batch_rpc_request(requests))
        return _sorted_batch(self.decode_rpc_response(raw or _no_answer()))

    def is_connected(self, show_traceback: bool = False) -> bool:
        """Always True: the chain is in this process."""
        return True


class AsyncEthreadProvider(AsyncJSONBaseProvider):
    """Asynchronous provider over ``backend``: each request runs in a worker thread."""

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
        """Answer a web3.py batch through the dispatcher in a worker thread, in request order."""
        raw = await asyncio.to_thread(self.dispatcher.handle,
                                      self.encode_batch_rpc_request(requests))
        return _sorted_batch(self.decode_rpc_response(raw or _no_answer()))

    async def is_connected(self, show_traceback: bool = False) -> bool:
        """Always True: the chain is in this process."""
        return True
