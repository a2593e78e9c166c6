"""The router chain's code and the tracer configurations: the transactions the traces are
compared on (with anvil in tests/differential, between the fast and plain paths in
tests/methods/tracing, and read by the frames, evm-trace and the trace cache).

The router contract: the first calldata byte picks what it does. It logs, calls a storage
contract, delegate-calls it, calls the sha256 and identity precompiles, calls a contract that
reverts with a reason (and goes on), creates contracts with CREATE and CREATE2 (one of which
self-destructs in its constructor), reverts with a custom error, and reverts after a
successful inner call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_utils import keccak

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS

from .anvil import Peer

BENEFICIARY = b"\xbe" * 20
TOPIC = keccak(b"router")


def _call(address: bytes, size: int, value: int = 0, op: str = "CALL") -> list[Any]:
    """A call with calldata memory[0:size], output discarded, result popped."""
    if op in ("DELEGATECALL", "STATICCALL"):
        return [0, 0, size, 0, address, "GAS", op, "POP"]
    return [0, 0, size, 0, value, address, "GAS", op, "POP"]


def router(storage: bytes, reverter: bytes) -> bytes:
    """The router's code: the first calldata byte picks what it does."""
    child = contracts.initcode(b"\x00")
    doomed = contracts.assemble(BENEFICIARY, "SELFDESTRUCT")
    custom = bytes.fromhex("deadbeef") + (42).to_bytes(32, "big")
    return contracts.assemble(
        0, "CALLDATALOAD", 0, "BYTE",
        [["DUP1", n, "EQ", f"@case{n}", "JUMPI"] for n in (1, 2, 3, 5)],
        "STOP",
        "case1:",
        TOPIC, 0, 0, "LOG1",
        contracts.store_bytes(0, contracts.store_calldata({1: 7})), _call(storage, 64),
        contracts.store_bytes(0, contracts.store_calldata({2: 9})), _call(storage, 64, op="DELEGATECALL"),
        32, 0x80, 32, 0, 2, "GAS", "STATICCALL", "POP",
        contracts.store_bytes(0, contracts.ERROR_CALL), _call(reverter, 1),
        32, 0xA0, 32, 0, 0, 4, "GAS", "CALL", "POP",
        TOPIC, 0, 0, "LOG1",
        "STOP",
        "case2:",
        contracts.store_bytes(0, child), len(child), 0, 0, "CREATE", "POP",
        0x42, len(child), 0, 0, "CREATE2", "POP",
        contracts.store_bytes(0, doomed), len(doomed), 0, 1000, "CREATE", "POP",
        "STOP",
        "case3:",
        contracts.store_bytes(0, custom), len(custom), 0, "REVERT",
        "case5:",
        contracts.store_bytes(0, contracts.store_calldata({5: 5})), _call(storage, 64),
        TOPIC, 0, 0, "LOG1",
        contracts.store_bytes(0, contracts.error_data("outer")), 100, 0, "REVERT",
    )


CONFIGS = {
    "callTracer": {"tracer": "callTracer"},
    "callTracer-withLog": {"tracer": "callTracer", "tracerConfig": {"withLog": True}},
    "prestateTracer": {"tracer": "prestateTracer"},
    "prestateTracer-diffMode": {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}},
    "structLogs": {},
    "structLogs-memory": {"enableMemory": True, "enableReturnData": True},
}
"""The tracer options compared: the native tracers with and without their options, and the
opcode logger with and without memory and return data."""


@dataclass
class Traced:
    """The router chain in ethread and in anvil, and its transactions' hashes."""

    backend: ethread.MemoryBackend
    peer: Peer
    hashes: list[str]


@dataclass(frozen=True)
class RouterChain:
    """A Prague dev chain of four accounts with the router deployed beside the contracts it
    calls (block 1), and a contract that self-destructs when paid."""

    chain: DevChain
    storage: bytes
    routed: bytes
    doomed: bytes

    @classmethod
    def deployed(cls) -> RouterChain:
        chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=4)
        a = chain.accounts
        storage = chain.deploy_runtime(a[0], contracts.STORAGE)
        reverter = chain.deploy_runtime(a[0], contracts.REVERTER)
        doomed = chain.deploy_runtime(a[0], contracts.assemble(BENEFICIARY, "SELFDESTRUCT"))
        routed = chain.deploy_runtime(a[0], router(storage, reverter))
        chain.mine()
        return cls(chain, storage, routed, doomed)

    def send_calls(self, logging_value: int = 0) -> None:
        """The router's four calls (the third with ``logging_value`` wei), a payment that
        self-destructs ``doomed``, and a plain transfer: the transactions of one block."""
        a = self.chain.accounts
        for selector, value in ((b"\x01", 0), (b"\x02", 10**6), (b"\x03", logging_value),
                                (b"\x05", 0)):
            self.chain.send(a[1], self.routed, data=selector, value=value, gas=1_000_000)
        self.chain.send(a[2], self.doomed, value=10**15)
        self.chain.send(a[3], a[2].address, value=10**12)
