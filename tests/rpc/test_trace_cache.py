"""The dispatcher's trace cache: a mined transaction's trace answered from the cache is the
same, byte for byte, as the trace computed afresh, for every cached method and tracer; a
transaction mined again in another block (a dev chain reverted) is traced afresh; errors and
unknown transactions are never kept."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

import ethread
import ethread.codec.envelope
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.rpc.dispatcher import Dispatcher
from ethread.rpc.table import call_method
from ethread.rpc.trace_cache import TraceCache
from tests.support.router import BENEFICIARY, router

CONFIGS: list[tuple[str, list[Any]]] = [
    ("debug_traceTransaction", [{"tracer": "callTracer", "tracerConfig": {"withLog": True}}]),
    ("debug_traceTransaction", [{"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}}]),
    ("debug_traceTransaction", [{"enableMemory": True}]),
    ("debug_traceTransaction", []),
    ("trace_transaction", []),
    ("trace_get", [["0x0"]]),
    ("trace_replayTransaction", [["trace", "stateDiff"]]),
]


@pytest.fixture(scope="module")
def chain() -> DevChain:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=3)
    a = dev.accounts
    storage = dev.deploy_runtime(a[0], contracts.STORAGE)
    reverter = dev.deploy_runtime(a[0], contracts.REVERTER)
    routed = dev.deploy_runtime(a[0], router(storage, reverter))
    dev.deploy_runtime(a[0], contracts.assemble(BENEFICIARY, "SELFDESTRUCT"))
    dev.mine()
    for selector, value in ((b"\x01", 0), (b"\x02", 10**6), (b"\x03", 0), (b"\x05", 0)):
        dev.send(a[1], routed, data=selector, value=value, gas=1_000_000)
    dev.send(a[2], a[1].address, value=10**12)
    dev.mine()
    return dev


def _fresh(backend: Any, method: str, params: list[Any]) -> bytes:
    return call_method(backend, method, params)  # (the default context keeps no trace)


def _dispatched(dispatcher: Dispatcher, method: str, params: list[Any]) -> Any:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    return json.loads(dispatcher.handle(body) or b"null")


def test_cached_answers_equal_fresh_ones(chain: DevChain) -> None:
    dispatcher = Dispatcher(chain.backend)
    cache = dispatcher.context.traces
    assert isinstance(cache, TraceCache)
    hashes = ["0x" + itx.hash.hex() for n in (1, 2) for itx in chain.block(n).transactions]
    for method, extra in CONFIGS:
        for tx_hash in hashes:
            params = [tx_hash, *extra]
            fresh = json.loads(_fresh(chain.backend, method, params))
            first = _dispatched(dispatcher, method, params)
            kept = len(cache)
            again = _dispatched(dispatcher, method, params)
            assert len(cache) == kept  # (the second came from the cache)
            assert first["result"] == again["result"] == fresh, (method, extra, tx_hash)
    assert len(cache) == len(CONFIGS) * len(hashes)


def test_what_is_not_kept(chain: DevChain) -> None:
    dispatcher = Dispatcher(chain.backend)
    cache = dispatcher.context.traces
    assert cache is not None
    unknown = "0x" + "11" * 32
    assert _dispatched(dispatcher, "trace_transaction", [unknown])["result"] is None
    assert "error" in _dispatched(dispatcher, "debug_traceTransaction", [unknown])
    tx_hash = "0x" + chain.block(2).transactions[0].hash.hex()
    refused = _dispatched(dispatcher, "trace_replayTransaction", [tx_hash, ["vmTraces"]])
    assert refused["error"]["code"] == -32602
    block = _dispatched(dispatcher, "trace_block", ["0x2"])
    assert len(block["result"]) > 0
    assert len(cache) == 0  # (blocks are not kept: only single mined transactions)


class MinedTwice:
    """A transfer mined in block 1, then (:meth:`again`) the chain reverted and the same signed
    transfer mined in block 2."""

    def __init__(self) -> None:
        self.dev = DevChain(ethread.MemoryBackend(), accounts=2)
        self._snapshot = self.dev.snapshot()
        self.tx_hash = self._send()
        self.dev.mine()

    def _send(self) -> bytes:
        a = self.dev.accounts
        return self.dev.send(a[0], a[1].address, value=5)

    def again(self) -> None:
        self.dev.revert(self._snapshot)
        self.dev.mine()  # (the same signed transaction now lands one block later)
        assert self._send() == self.tx_hash
        self.dev.mine()


def test_a_transaction_mined_again_is_traced_again() -> None:
    mined = MinedTwice()
    dev = mined.dev
    dispatcher = Dispatcher(dev.backend)
    params = ["0x" + mined.tx_hash.hex()]
    first = _dispatched(dispatcher, "trace_transaction", params)["result"]
    mined.again()
    second = _dispatched(dispatcher, "trace_transaction", params)["result"]
    assert first[0]["blockNumber"] == 1 and second[0]["blockNumber"] == 2
    assert second == json.loads(_fresh(dev.backend, "trace_transaction", params))


# -- traces recorded ahead of requests (--record-traces) ------------------------------------


def test_recorded_traces_equal_traces_made_when_asked(chain: DevChain) -> None:
    recording = Dispatcher(chain.backend)
    hashes = ["0x" + itx.hash.hex() for n in (1, 2) for itx in chain.block(n).transactions]
    assert recording.record_traces(2) == len(hashes)
    traces = recording.context.traces
    assert traces is not None and traces.recording
    for tx_hash in hashes:
        for config in ({}, {"tracer": "callTracer"}):
            params = [tx_hash, config] if config else [tx_hash]
            fresh = _fresh(chain.backend, "debug_traceTransaction", params)
            assert traces.recorded(chain.backend, params) == fresh
            # the same configuration with a timeout, or with its fields in another order,
            # is the same trace: answered from the record, on the event loop's path too
            timed = [tx_hash, {**config, "timeout": "1ms"}]
            call = ethread.codec.envelope.Call("debug_traceTransaction", timed, 1)
            assert recording.cached_result(call) == fresh
            assert _dispatched(recording, "debug_traceTransaction", timed)["result"] == \
                json.loads(fresh)
    # another configuration is not recorded: it runs, and answers what it would have
    other = [hashes[0], {"enableMemory": True}]
    assert traces.recorded(chain.backend, other) is None
    assert _dispatched(recording, "debug_traceTransaction", other)["result"] == json.loads(
        _fresh(chain.backend, "debug_traceTransaction", other))


def test_a_recorded_transaction_mined_again_is_traced_again() -> None:
    mined = MinedTwice()
    dev = mined.dev
    dispatcher = Dispatcher(dev.backend)
    assert dispatcher.record_traces(10) == 1
    params = ["0x" + mined.tx_hash.hex(), {"tracer": "callTracer"}]
    assert dispatcher.context.traces is not None
    assert dispatcher.context.traces.recorded(dev.backend, params) is not None
    mined.again()  # (in block 2 now: the record of block 1 no longer answers for it)
    assert dispatcher.context.traces.recorded(dev.backend, params) is None
    assert _dispatched(dispatcher, "debug_traceTransaction", params)["result"] == json.loads(
        _fresh(dev.backend, "debug_traceTransaction", params))


def test_blocks_mined_while_recording_are_recorded_and_the_window_slides() -> None:
    dev = DevChain(ethread.MemoryBackend(), accounts=2)
    a = dev.accounts
    dispatcher = Dispatcher(dev.backend)
    assert dispatcher.record_traces(2) == 0  # nothing mined yet
    dev.after_block.append(dispatcher.record_block)
    traces = dispatcher.context.traces
    assert traces is not None
    sent = []
    for value in (1, 2, 3):
        sent.append("0x" + dev.send(a[0], a[1].address, value=value).hex())
        dev.mine()
    for tx_hash, kept in zip(sent, (False, True, True), strict=True):
        for config in ({}, {"tracer": "callTracer"}):
            params = [tx_hash, config] if config else [tx_hash]
            recorded = traces.recorded(dev.backend, params)
            assert (recorded is not None) == kept, (tx_hash, config)
            if recorded is not None:
                assert recorded == _fresh(dev.backend, "debug_traceTransaction", params)
