"""methods/tracing/models.py: the tracers' answers as values. They are frozen and compared by
what geth's JSON shows (a frame's ``reverted`` and ``created``, kept for ethread's own use,
do not count); a block's trace is one :class:`TransactionTrace` per transaction in order, each
answer of the type its tracer gives; a failed create keeps the address it would have had."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.methods.tracing import (
    CallFrame,
    FlatCalls,
    FourBytes,
    MuxResult,
    NoResult,
    Prestate,
    PrestateDiff,
    StructLogResult,
    TraceOptions,
    TransactionTrace,
    trace_block,
    trace_transaction,
)

TRACERS: dict[str, tuple[str | None, dict[str, Any] | None, type]] = {
    "structLogs": (None, None, StructLogResult),
    "callTracer": ("callTracer", None, CallFrame),
    "prestateTracer": ("prestateTracer", None, Prestate),
    "prestateTracer-diff": ("prestateTracer", {"diffMode": True}, PrestateDiff),
    "4byteTracer": ("4byteTracer", None, FourBytes),
    "noopTracer": ("noopTracer", None, NoResult),
    "flatCallTracer": ("flatCallTracer", None, FlatCalls),
    "muxTracer": ("muxTracer", {"noopTracer": {}}, MuxResult),
}


@pytest.fixture(scope="module")
def block() -> tuple[Any, Any, bytes]:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = chain.accounts
    store = chain.deploy_runtime(a[0], contracts.STORAGE)
    chain.mine()
    chain.send(a[1], store, data=contracts.store_calldata({1: 2}))
    chain.send(a[0], a[1].address, value=3)
    # a create whose constructor reverts
    chain.send(a[1], None, data=contracts.assemble(0, 0, "REVERT"), gas=100_000)
    mined = chain.mine()
    return chain.backend, mined, chain.accounts[1].address


@pytest.mark.parametrize("name", sorted(TRACERS))
def test_a_block_trace_is_one_answer_per_transaction_in_order(block: tuple[Any, Any, bytes],
                                                              name: str) -> None:
    backend, mined, _ = block
    tracer, config, kind = TRACERS[name]
    traces = trace_block(backend, mined, TraceOptions(tracer=tracer, tracer_config=config))
    assert [t.tx_hash for t in traces] == [t.hash for t in mined.transactions]
    assert all(isinstance(t, TransactionTrace) and isinstance(t.result, kind) and t.error is None
               for t in traces)


def test_frames_compare_by_what_geth_shows(block: tuple[Any, Any, bytes]) -> None:
    backend, mined, sender = block
    failed_create = trace_transaction(backend, mined.transactions[2].hash,
                                      TraceOptions(tracer="callTracer"))
    assert isinstance(failed_create, CallFrame) and failed_create.type == "CREATE"
    assert failed_create.to is None and failed_create.error == "execution reverted"
    assert failed_create.reverted and failed_create.created is not None
    receipt = backend.receipts(mined.hash)[2]
    assert receipt.status == 0 and receipt.sender == sender
    shown = dataclasses.replace(failed_create, reverted=False, created=None)
    assert shown == failed_create and hash(shown) == hash(failed_create)
    assert dataclasses.replace(failed_create, gas_used=1) != failed_create
    with pytest.raises(dataclasses.FrozenInstanceError):
        failed_create.error = None  # type: ignore[misc]
