"""eth_simulateV1's plain path, the oracle its fast path is proven equal to (kept here rather
than in the package, which simulates one way): each block on its fork's own VM class
(py-evm's classes and py-trie), its system calls run on its own state, every call a py-evm
transaction, the header decoded by pyrlp and the block's size from its whole encoding."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import rlp

from ethread.models import Header, Withdrawal
from ethread.rlpcodec.blocks import block_item
from ethread.rlpcodec.headers import decode_header

SIMULATE = importlib.import_module("ethread.methods.simulate")
"""The module (``ethread.methods`` names its function ``simulate``)."""


class PlainSimulator(SIMULATE._Simulator):  # type: ignore[misc, name-defined]
    """A simulation taking py-evm's own steps where the package takes its shortcuts."""

    def _vm_class(self, fork_vm: Any) -> Any:
        return SIMULATE._simulation_vm_class(fork_vm)

    def _evm_header(self, header_class: Any, encoded: bytes) -> Any:
        return rlp.decode(encoded, sedes=header_class)

    def _after_system_writes(self, *args: Any) -> Any:
        return None

    def _header_and_size(self, built: bytes, work: Any,
                         withdrawals: Sequence[Withdrawal] | None) -> tuple[Header, int]:
        header = decode_header(built)
        return header, len(rlp.encode(block_item(header, work.transactions, (), withdrawals)))

    def _evm_tx(self, vm: Any, request: Any, message: Any, nonce: int, gas: int,
                london: bool) -> Any:
        return self._evm_transaction(vm, request, message, nonce, gas, london)


@contextmanager
def plain_simulation() -> Iterator[None]:
    """Inside the block, every simulation (through :func:`~ethread.methods.simulate.simulate`
    or a dispatcher) runs on the plain path."""
    fast = SIMULATE._Simulator
    SIMULATE._Simulator = PlainSimulator
    try:
        yield
    finally:
        SIMULATE._Simulator = fast
