"""Tracing's plain path, the oracle its fast paths are proven equal to (kept here rather than
in the package, which replays one way): each request's block decoded from its RLP and replayed
from its start on the fork's own VM class (py-evm's classes and tries), every tracer on
py-evm's loop, no replay kept between requests."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import rlp
from eth_typing import Hash32

from ethread.errors import StateUnavailable
from ethread.methods.raw import get_raw_block
from ethread.methods.tracing import ReplayStates
from ethread.models import BlockHashRef

REPLAY = importlib.import_module("ethread.methods.tracing.replay")
"""The module (``ethread.methods.tracing`` names its functions) whose steps are replaced."""


def replay_on_fork_classes(backend: Any, block: Any) -> Any:
    """A block ready to replay on its parent's state, its system calls done, decoded from its
    RLP and run on the fork's own VM class (py-evm's classes and tries)."""
    config, chaindb = REPLAY._replayable(backend, block)
    raw = get_raw_block(backend, BlockHashRef(hash=block.hash))
    if raw is None:
        raise REPLAY.NotTraceable(f"block {'0x' + block.hash.hex()} not found")
    header = block.header
    vm_class = config.vm_class(header.number, header.timestamp)
    try:
        parent = chaindb.get_block_header_by_hash(Hash32(header.parent_hash))
        evm_block = rlp.decode(raw, sedes=vm_class.get_block_class())
    except Exception as exc:
        raise StateUnavailable(f"no state for block {header.number - 1}") from exc
    senders = {itx.hash: itx.sender for itx in block.transactions}
    return REPLAY._replay_decoded(evm_block, parent, block.hash, senders, config.chain_id,
                                  vm_class, chaindb)


@contextmanager
def plain_tracing() -> Iterator[None]:
    """Inside the block, every trace (through the module's functions or a dispatcher) runs on
    the plain path; the module's own steps are put back after."""
    replay, traced = REPLAY._replay, REPLAY._traced
    take, give = ReplayStates.take, ReplayStates.give

    def plain_replay(backend: Any, block: Any, keep: bool = False, shared: Any = None) -> Any:
        return replay_on_fork_classes(backend, block)

    def on_py_evm_loop(state: Any, tracer: Any, limit: Any, log_index: int = 0,
                       block_classes: bool = True) -> Any:
        return traced(state, tracer, limit, log_index, block_classes=False)

    REPLAY._replay, REPLAY._traced = plain_replay, on_py_evm_loop
    ReplayStates.take = lambda self, block_hash: None  # type: ignore[method-assign]
    ReplayStates.give = lambda self, replay: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        REPLAY._replay, REPLAY._traced = replay, traced
        ReplayStates.take, ReplayStates.give = take, give  # type: ignore[method-assign]


def on_path(fast: bool) -> AbstractContextManager[None]:
    """The fast paths (nothing replaced) if ``fast``, else :func:`plain_tracing`."""
    return nullcontext() if fast else plain_tracing()


def plain_trace_transaction(backend: Any, tx_hash: bytes, options: Any, **given: Any) -> Any:
    """:func:`~ethread.methods.tracing.trace_transaction` on the plain path."""
    with plain_tracing():
        return REPLAY.trace_transaction(backend, tx_hash, options, **given)
