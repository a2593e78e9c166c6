"""A chain whose transactions exercise what traces report (the tracing benchmark's chain, and
the one ``tests/methods/tracing`` compares tracing's paths on): calls nested three deep with
each of CALL, STATICCALL, DELEGATECALL and CALLCODE, caught and uncaught reverts with reasons
and custom errors, CREATE and CREATE2 (one reverting, one running out of gas, one destroyed in
its own constructor, one colliding), logs at several depths, precompiles, inner calls out of
gas, writes under a static call, every kind of SSTORE (set, change, clear, no-op, changed and
restored), legacy, access-list and dynamic-fee transactions.

Two contracts do the work:

- ``hop``: calldata ``[op][mode][target: 20 bytes][rest]`` calls ``target`` with ``rest`` by
  ``op`` (0xF1 CALL, 0xF2 CALLCODE, 0xF4 DELEGATECALL, 0xFA STATICCALL), logs, and returns
  what the callee returned; ``mode`` 1 reverts with it when the call failed, 2 reverts with
  ``Error("outer")`` after the call, 3 gives the callee only 3,000 gas;
- ``writer``: calldata of (slot, value) word pairs stored in turn, then a log; with calldata
  of one word (the custom-error case), reverts with ``Custom(uint256)``.

Hops chain: a hop's ``rest`` may be another hop's calldata, so ``nest`` builds the frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from eth_utils import keccak

from benchlib.chain_files import ChainFiles, raw_blocks, write_chain
from ethread.backends.memory import MemoryBackend
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.models import AccessListEntry

CALL, CALLCODE, DELEGATECALL, STATICCALL = 0xF1, 0xF2, 0xF4, 0xFA
TOPIC = keccak(b"hop")
BENEFICIARY = b"\xbe" * 20
CUSTOM = keccak(b"Custom(uint256)")[:4]


def _call_with(op: int, gas: list[object]) -> list[object]:
    """The call of ``target`` (stack: restlen) with memory[0:restlen], output not copied."""
    valued = op in (CALL, CALLCODE)
    return [0, 0, "DUP4", 0, *([0] if valued else []), 2, "CALLDATALOAD", 0x60, "SHR",
            *gas, {CALL: "CALL", CALLCODE: "CALLCODE", DELEGATECALL: "DELEGATECALL",
                   STATICCALL: "STATICCALL"}[op]]


def hop_code() -> bytes:
    outer = contracts.error_data("outer")
    branches = []
    for op in (CALL, CALLCODE, DELEGATECALL, STATICCALL):
        branches += [f"op{op}:",
                     "DUP3", 3, "EQ", f"@tight{op}", "JUMPI",
                     _call_with(op, ["GAS"]), "@after", "JUMP",
                     f"tight{op}:", _call_with(op, [3000]), "@after", "JUMP"]
    return contracts.assemble(
        22, "CALLDATASIZE", "SUB",                        # restlen
        "DUP1", 22, 0, "CALLDATACOPY",
        1, "CALLDATALOAD", 0xF8, "SHR",                   # mode
        "SWAP1",                                          # [mode, restlen]
        0, "CALLDATALOAD", 0xF8, "SHR",                   # op
        [["DUP1", op, "EQ", f"@op{op}", "JUMPI"] for op in (CALL, CALLCODE, DELEGATECALL,
                                                             STATICCALL)],
        "STOP",
        branches,
        "after:",                                         # [mode, restlen, op, success]
        TOPIC, 0, 0, "LOG1",
        "DUP4", 2, "EQ", "@outer", "JUMPI",
        "DUP1", "ISZERO", "DUP5", 1, "EQ", "AND", "@propagate", "JUMPI",
        "RETURNDATASIZE", 0, 0, "RETURNDATACOPY", "RETURNDATASIZE", 0, "RETURN",
        "propagate:",
        "RETURNDATASIZE", 0, 0, "RETURNDATACOPY", "RETURNDATASIZE", 0, "REVERT",
        "outer:",
        contracts.store_bytes(0, outer), len(outer), 0, "REVERT",
    )


WRITER = contracts.assemble(
    "CALLDATASIZE", 32, "EQ", "@custom", "JUMPI",
    0,
    "loop:",
    "CALLDATASIZE", "DUP2", "LT", "ISZERO", "@done", "JUMPI",
    "DUP1", 32, "ADD", "CALLDATALOAD", "DUP2", "CALLDATALOAD", "SSTORE",
    64, "ADD", "@loop", "JUMP",
    "done:",
    "CALLER", TOPIC, 0, 0, "LOG2",
    0, "SLOAD", 0, "MSTORE", 32, 0, "RETURN",
    "custom:",
    contracts.store_bytes(0, CUSTOM), 0, "CALLDATALOAD", 4, "MSTORE", 36, 0, "REVERT",
)


SPENDER = contracts.assemble(
    # calls the address of its calldata's first 20 bytes with one wei more than it holds
    0, 0, 0, 0, "SELFBALANCE", 1, "ADD", 0, "CALLDATALOAD", 0x60, "SHR", "GAS", "CALL", "POP",
    "STOP",
)


def factory_code() -> bytes:
    """calldata ``[kind][init code]``: kind 1 CREATE, 2 CREATE2 (salt 0x42), with 7 wei; the
    address made (or 0) returned as a word, after a log."""
    return contracts.assemble(
        1, "CALLDATASIZE", "SUB", "DUP1", 1, 0, "CALLDATACOPY",   # [len]
        0, "CALLDATALOAD", 0xF8, "SHR", 2, "EQ", "@two", "JUMPI",
        0, 7, "CREATE", "@made", "JUMP",
        "two:", 0x42, "SWAP1", 0, 7, "CREATE2",
        "made:", "DUP1", TOPIC, 0, 0, "LOG2", 0, "MSTORE", 32, 0, "RETURN",
    )


def writes(*pairs: tuple[int, int]) -> bytes:
    """The writer's calldata storing each (slot, value) in turn."""
    return b"".join(s.to_bytes(32, "big") + v.to_bytes(32, "big") for s, v in pairs)


def nest(*hops: tuple[int, bytes, int], data: bytes = b"") -> bytes:
    """A hop's calldata for the chain of ``(op, target, mode)``: the first hop calls the
    second's target ... the last calls its target with ``data``."""
    for op, target, mode in reversed(hops):
        data = bytes([op, mode]) + target + data
    return data


@dataclass(frozen=True)
class Scenario:
    """The chain, its contracts and its scenario transactions."""

    chain: DevChain
    tx_hashes: tuple[str, ...]
    """The scenario's transactions (not the deployments), 0x-hex, in chain order."""
    labels: tuple[str, ...]


def scenario(backend: MemoryBackend | None = None) -> Scenario:
    """The chain (Prague): block 1 deploys, block 2 sets storage, blocks 3.. hold the
    scenario's transactions, a few per block."""
    chain = DevChain(backend or MemoryBackend(), forks=PRAGUE_FORKS, accounts=4)
    a = chain.accounts
    hop = chain.deploy_runtime(a[0], hop_code())
    hop2 = chain.deploy_runtime(a[0], hop_code())
    writer = chain.deploy_runtime(a[0], WRITER)
    reverter = chain.deploy_runtime(a[0], contracts.REVERTER)
    factory = chain.deploy_runtime(a[0], factory_code(), value=10**6)
    doomed = chain.deploy_runtime(a[0], contracts.assemble(BENEFICIARY, "SELFDESTRUCT"))
    spender = chain.deploy_runtime(a[0], SPENDER, value=5)
    chain.mine()
    chain.send(a[0], writer, data=writes((1, 5), (2, 5), (3, 5)))
    chain.mine()
    child = contracts.initcode(contracts.assemble(1, 0, "MSTORE", 32, 0, "RETURN"))
    reverting = contracts.assemble(contracts.store_bytes(0, contracts.error_data("init")), 100, 0,
                                   "REVERT")
    looping = contracts.assemble(1, 0xFFFFFFFF, "MSTORE")  # (memory past any gas)
    destroyed = contracts.assemble(BENEFICIARY, "SELFDESTRUCT")
    bad_code = contracts.assemble(0xEF, 0, "MSTORE8", 1, 0, "RETURN")
    sha, ident, ecrec = b"\x00" * 19 + b"\x02", b"\x00" * 19 + b"\x04", b"\x00" * 19 + b"\x01"
    cases: list[tuple[str, dict[str, object]]] = [
        ("call-call-call", dict(to=hop, data=nest((CALL, hop2, 0), (CALL, writer, 0),
                                                  data=writes((4, 1))))),
        ("call-delegate-write", dict(to=hop, data=nest((CALL, hop2, 0), (DELEGATECALL, writer, 0),
                                                       data=writes((1, 9))))),
        ("callcode-write", dict(to=hop, data=nest((CALLCODE, hop2, 0), (CALL, writer, 0),
                                                  data=writes((2, 0))))),
        ("static-write-protected", dict(to=hop, data=nest((STATICCALL, hop2, 0), (CALL, writer, 0),
                                                          data=writes((3, 3))))),
        ("static-read", dict(to=hop, data=nest((STATICCALL, reverter, 0), data=b"\x03"))),
        ("sstore-kinds", dict(to=writer, data=writes((5, 1), (1, 6), (2, 0), (3, 5), (6, 1), (6, 0),
                                                     (1, 5)))),
        ("caught-reason", dict(to=hop, data=nest((CALL, reverter, 0), data=b"\x01"))),
        ("caught-panic", dict(to=hop, data=nest((CALL, hop2, 0), (CALL, reverter, 0), data=b"\x00"))),
        ("uncaught-reason", dict(to=hop, data=nest((CALL, hop2, 1), (CALL, reverter, 1), data=b"\x01"))),
        ("custom-error", dict(to=hop, data=nest((CALL, writer, 1), data=(42).to_bytes(32, "big")))),
        ("revert-after-call", dict(to=hop, data=nest((CALL, writer, 2), data=writes((7, 7))))),
        ("caught-outer", dict(to=hop, data=nest((CALL, hop2, 0), (CALL, writer, 2), data=writes((8, 8))))),
        ("inner-out-of-gas", dict(to=hop, data=nest((CALL, hop2, 3), (CALL, writer, 0),
                                                    data=writes(*[(k, k) for k in range(10, 20)])))),
        ("precompiles", dict(to=hop, data=nest((CALL, hop2, 0), (STATICCALL, sha, 0), data=b"abc"))),
        ("identity", dict(to=hop, data=nest((STATICCALL, ident, 0), data=b"\x01" * 40))),
        ("ecrecover", dict(to=hop, data=nest((STATICCALL, ecrec, 0), data=b"\x00" * 128))),
        ("create", dict(to=factory, data=b"\x01" + child)),
        ("create2", dict(to=factory, data=b"\x02" + child)),
        ("create2-collision", dict(to=factory, data=b"\x02" + child)),
        ("create-reverts", dict(to=factory, data=b"\x01" + reverting)),
        ("create-out-of-gas", dict(to=factory, data=b"\x01" + looping)),
        ("create-destroyed", dict(to=factory, data=b"\x01" + destroyed)),
        ("create-bad-code", dict(to=factory, data=b"\x01" + bad_code)),
        ("deploy-reverts", dict(to=None, data=reverting)),
        ("call-refused", dict(to=spender, data=writer)),
        ("selfdestruct", dict(to=doomed, value=10**9)),
        ("transfer", dict(to=a[3].address, value=10**12)),
        ("access-list", dict(to=hop, data=nest((CALL, writer, 0), data=writes((9, 9))),
                             kind="access-list",
                             access_list=(AccessListEntry(address=writer,
                                                          storage_keys=((9).to_bytes(32, "big"),)),))),
        ("legacy", dict(to=hop, data=nest((DELEGATECALL, writer, 0), data=writes((1, 1))),
                        kind="legacy")),
        ("top-out-of-gas", dict(to=writer, data=writes(*[(k, k) for k in range(30, 40)]), gas=60_000)),
    ]
    hashes, labels = [], []
    senders = [a[1], a[2], a[3]]
    for n, (label, fields) in enumerate(cases):
        fields.setdefault("gas", 1_000_000)
        tx_hash = chain.send(senders[n % 3], **fields)  # type: ignore[arg-type]
        hashes.append("0x" + bytes(tx_hash).hex())
        labels.append(label)
        if n % 4 == 3:
            chain.mine()
    chain.mine()
    return Scenario(chain, tuple(hashes), tuple(labels))


@dataclass(frozen=True)
class ScenarioFiles(ChainFiles):
    """The scenario's chain as files."""

    tx_hashes: tuple[str, ...]
    labels: tuple[str, ...]


def write_files(folder: Path) -> ScenarioFiles:
    """The scenario chain written under ``folder``."""
    built = scenario()
    chain = built.chain
    blocks = write_chain(chain, folder)
    return ScenarioFiles(folder=folder, head=chain.head.number, tx_hashes=built.tx_hashes,
                         labels=built.labels, raw_blocks=raw_blocks(blocks),
                         block1_base_fee=int(blocks[0].header.base_fee_per_gas or 0))
