"""The opcode logger's bounds: the client's ``limit`` (geth's: the log stops growing, the
answer is shorter) and the service's answer-byte limit, which a server passes down (its
``max_response_bytes``): past it the trace stops with -32003 and a message saying what to ask
for instead, before the whole log is built."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher
from ethread.server.config import NetworkConfig, ServerConfig
from ethread.server.networks import service_context

LOOPS = 400


@pytest.fixture(scope="module")
def long_trace() -> tuple[Any, str]:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    looper = dev.deploy_runtime(a[0], contracts.assemble(
        LOOPS, "top:", 1, "SWAP1", "SUB", "DUP1", "@top", "JUMPI", "STOP"))
    dev.mine()
    tx_hash = dev.send(a[1], looper, gas=200_000)
    dev.mine()
    return dev.backend, "0x" + bytes(tx_hash).hex()


def _ask(dispatcher: Dispatcher, tx_hash: str, config: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
                       "params": [tx_hash, config]}).encode()
    answer = dispatcher.handle(body)
    assert answer is not None
    return json.loads(answer)  # type: ignore[no-any-return]


def test_under_the_cap_the_whole_log(long_trace: tuple[Any, str]) -> None:
    backend, tx_hash = long_trace
    answer = _ask(Dispatcher(backend, Context(answer_bytes=10_000_000)), tx_hash, {})
    assert len(answer["result"]["structLogs"]) == 1 + 7 * LOOPS + 1


def test_past_the_cap_an_error(long_trace: tuple[Any, str]) -> None:
    backend, tx_hash = long_trace
    answer = _ask(Dispatcher(backend, Context(answer_bytes=20_000)), tx_hash, {})
    error = answer["error"]
    assert error["code"] == -32003
    assert error["message"].startswith("response too large: the opcode log passed the "
                                       "service's limit of 20000 bytes")
    # a lean log of the same steps fits, and so does callTracer
    lean = _ask(Dispatcher(backend, Context(answer_bytes=200_000)), tx_hash,
                {"disableStack": True, "disableStorage": True})
    assert "result" in lean
    calls = _ask(Dispatcher(backend, Context(answer_bytes=20_000)), tx_hash,
                 {"tracer": "callTracer"})
    assert calls["result"]["type"] == "CALL"


def test_the_clients_limit_under_the_cap_is_geths(long_trace: tuple[Any, str]) -> None:
    backend, tx_hash = long_trace
    answer = _ask(Dispatcher(backend, Context(answer_bytes=20_000)), tx_hash, {"limit": 5_000})
    logs = answer["result"]["structLogs"]
    assert 0 < len(logs) < 1 + 7 * LOOPS
    assert len(json.dumps(logs)) < 20_000


def test_the_server_passes_its_answer_limit() -> None:
    config = ServerConfig(networks=(NetworkConfig(name="demo"),))
    assert service_context(config).answer_bytes == config.limits.max_response_bytes


def test_the_cheap_bound_is_never_under_the_size(long_trace: tuple[Any, str]) -> None:
    """The cap is checked against a bound of each step's JSON, measured exactly only when the
    bound passes it: the bound must never be under the exact size."""
    from ethread.methods.tracing import TraceOptions, trace_transaction
    from ethread.methods.tracing.tracers import LoggerConfig, _size_bound, struct_log_size

    backend, tx_hash = long_trace
    options = TraceOptions(logger=LoggerConfig(enable_memory=True, enable_return_data=True))
    result = trace_transaction(backend, bytes.fromhex(tx_hash[2:]), options)
    logs = result.struct_logs  # type: ignore[union-attr]
    assert logs and all(_size_bound(log) >= struct_log_size(log) for log in logs)
