"""methods/tracing/states.py: the replays kept between trace requests. Keeping a block's replay
never changes an answer: its transactions traced in any order, with the replays kept, answer
what a fresh replay of each answers; the replays kept are bounded by count and bytes; one
whose trace failed part-way is not kept. Beneath: the overlay a replay notes its positions in
(reads through, keeps its own writes, counts their bytes once) and the block's transactions
decoded only when reached."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.errors import ExecutionFailed
from ethread.methods.tracing import ReplayStates, TraceOptions, trace_transaction
from ethread.methods.tracing.states import BASE_WEIGHT, LazyTransactions, Overlay
from tests.support.contracts import load_calldata

OPTIONS = TraceOptions(tracer="callTracer", tracer_config={"withLog": True})


@pytest.fixture(scope="module")
def block() -> tuple[Any, list[bytes]]:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=3)
    a = chain.accounts
    store = chain.deploy_runtime(a[0], contracts.STORAGE)
    emitter = chain.deploy_runtime(a[0], contracts.LOG_EMITTER)
    chain.mine()
    hashes = [
        chain.send(a[1], store, data=contracts.store_calldata({1: 5})),
        chain.send(a[2], emitter, data=contracts.log_calldata([b"\x01" * 32])),
        chain.send(a[1], store, data=contracts.store_calldata({1: 6, 2: 1})),
        chain.send(a[2], store, data=load_calldata(1)),
        chain.send(a[0], a[1].address, value=1),
    ]
    chain.mine()
    return chain.backend, hashes


def test_kept_replays_answer_as_fresh_ones_in_any_order(block: tuple[Any, list[bytes]]) -> None:
    backend, hashes = block
    fresh = [trace_transaction(backend, h, OPTIONS) for h in hashes]
    states = ReplayStates()
    for order in ([4, 3, 2, 1, 0], [0, 1, 2, 3, 4], [2, 0, 4, 1, 3], [3, 3, 1]):
        for index in order:
            assert trace_transaction(backend, hashes[index], OPTIONS, states=states) == fresh[index]
    assert len(states) == 1 and states.weight > BASE_WEIGHT  # one block, its positions noted
    assert len({repr(trace) for trace in fresh}) == len(hashes)  # five different answers


def test_kept_replays_are_bounded(block: tuple[Any, list[bytes]]) -> None:
    backend, hashes = block
    nothing_fits = ReplayStates(max_bytes=1)
    for tx_hash in hashes:
        assert trace_transaction(backend, tx_hash, OPTIONS, states=nothing_fits) == \
            trace_transaction(backend, tx_hash, OPTIONS)
    assert len(nothing_fits) == 0
    states = ReplayStates()
    trace_transaction(backend, hashes[0], OPTIONS, states=states)
    block_hash = backend.transaction_location(hashes[0])[0]
    replay = states.take(block_hash)
    assert replay is not None and replay.block_hash == block_hash and len(states) == 0
    assert states.take(block_hash) is None
    states.give(replay)
    assert len(states) == 1 and states.weight == replay.weight
    states.clear()
    assert len(states) == 0 and states.weight == 0


def test_a_replay_whose_trace_failed_is_not_kept(block: tuple[Any, list[bytes]]) -> None:
    backend, hashes = block
    states = ReplayStates()
    with pytest.raises(ExecutionFailed, match="execution timeout"):
        trace_transaction(backend, hashes[2], TraceOptions(tracer="callTracer", timeout=1e-9),
                          states=states)
    assert len(states) == 0
    assert trace_transaction(backend, hashes[2], OPTIONS, states=states) == \
        trace_transaction(backend, hashes[2], OPTIONS)


def test_the_overlay_reads_through_and_keeps_its_own_writes() -> None:
    base = {b"a": b"1", b"b": b"2"}
    overlay = Overlay(base)
    assert overlay[b"a"] == b"1" and b"b" in overlay and b"c" not in overlay
    overlay[b"c"] = b"333"
    overlay[b"c"] = b"333"  # content addressed: written again, counted once
    overlay[b"a"] = b"9"
    assert overlay.size == len(b"c") + 3 + len(b"a") + 1
    assert overlay[b"c"] == b"333" and overlay[b"a"] == b"9" and base[b"a"] == b"1"
    del overlay[b"b"]
    assert b"b" not in overlay and base[b"b"] == b"2"
    with pytest.raises(KeyError):
        overlay[b"b"]


def test_transactions_are_decoded_when_reached() -> None:
    decoded: list[int] = []

    def decode(index: int) -> str:
        decoded.append(index)
        return f"tx{index}"

    lazy = LazyTransactions(5, decode)
    assert len(lazy) == 5 and decoded == []
    assert lazy[2] == "tx2" and lazy[2] == "tx2" and decoded == [2]
    assert lazy[1:4] == ["tx1", "tx2", "tx3"] and decoded == [2, 1, 3]
    assert list(itertools.islice(lazy, 1)) == ["tx0"]
