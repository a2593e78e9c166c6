"""Hand-assembled contracts for the dev chain, and the tiny assembler that reads them
(:func:`assemble`):

- ``"ADD"``, ``"SSTORE"``, ...: an opcode by its name;
- an ``int``: pushed with the narrowest PUSHn (never PUSH0, which only exists from Shanghai on,
  so the contracts also run on pre-merge forks);
- ``bytes`` (1 to 32 of them): pushed verbatim, width kept (a selector stays 4 bytes);
- ``"name:"``: a JUMPDEST that ``"@name"`` (a PUSH2 of its offset) jumps to;
- a nested list or tuple: spliced in, so snippets compose like macros.

The log emitter and the storage contract run from Frontier on, the reverter from Byzantium, the
environment echo's default fields (:data:`ENV_FIELDS`) from Cancun.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from eth.vm import opcode_values
from eth_utils import keccak

Item: TypeAlias = "str | int | bytes | Sequence[Item]"

OPCODES: dict[str, int] = {
    name: value
    for name, value in vars(opcode_values).items()
    if name.isupper() and isinstance(value, int)
}
OPCODES.update(INVALID=0xFE, KECCAK256=0x20)


class AssemblyError(ValueError):
    """A program that cannot be assembled (unknown name, label or push width)."""


def _flatten(program: Sequence[Item]) -> list[str | int | bytes]:
    flat: list[str | int | bytes] = []
    for item in program:
        if isinstance(item, (str, int, bytes)):
            flat.append(item)
        else:
            flat.extend(_flatten(item))
    return flat


def _push(data: bytes) -> bytes:
    if not 1 <= len(data) <= 32:
        raise AssemblyError(f"cannot push {len(data)} bytes")
    return bytes([OPCODES["PUSH1"] + len(data) - 1]) + data


def _encode(item: str | int | bytes, labels: dict[str, int]) -> bytes:
    """One item's bytes; with an empty ``labels`` a label reference still has its width."""
    if isinstance(item, bytes):
        return _push(item)
    if isinstance(item, int):
        if item < 0 or item >= 2**256:
            raise AssemblyError(f"cannot push {item}")
        return _push(item.to_bytes(max(1, (item.bit_length() + 7) // 8), "big"))
    if item.endswith(":"):
        return bytes([OPCODES["JUMPDEST"]])
    if item.startswith("@"):
        return _push(labels.get(item[1:], 0).to_bytes(2, "big"))
    try:
        return bytes([OPCODES[item]])
    except KeyError:
        raise AssemblyError(f"unknown opcode {item!r}") from None


def assemble(*program: Item) -> bytes:
    """Bytecode of ``program``; two passes, since a label may be used before it is defined."""
    flat = _flatten(program)
    labels: dict[str, int] = {}
    offset = 0
    for item in flat:
        if isinstance(item, str) and item.endswith(":"):
            if item[:-1] in labels:
                raise AssemblyError(f"label {item[:-1]!r} defined twice")
            labels[item[:-1]] = offset
        offset += len(_encode(item, {}))
    for item in flat:
        if isinstance(item, str) and item.startswith("@") and item[1:] not in labels:
            raise AssemblyError(f"undefined label {item[1:]!r}")
    return b"".join(_encode(item, labels) for item in flat)


def initcode(runtime: bytes) -> bytes:
    """Creation code that deploys ``runtime`` unchanged: copy it from behind itself, return it."""

    def prefix(start: int) -> bytes:  # PUSH2 operands: its length does not depend on start
        return assemble(
            len(runtime).to_bytes(2, "big"), "DUP1",  # size, size
            start.to_bytes(2, "big"), 0, "CODECOPY",  # memory[0:size] = code[start:]
            0, "RETURN",
        )

    return prefix(len(prefix(0))) + runtime


def store_bytes(offset: int, data: bytes) -> list[Item]:
    """Write ``data`` to memory at ``offset`` with 32-byte MSTOREs (the last one zero-padded)."""
    out: list[Item] = []
    for start in range(0, len(data), 32):
        word = data[start:start + 32].ljust(32, b"\x00")
        out += [word, offset + start, "MSTORE"]
    return out


LOG_EMITTER = assemble(
    # Calldata: one byte n (0..4), n topics of 32 bytes, then the log data. Empty calldata
    # does nothing, so the contract can also receive plain transfers.
    "CALLDATASIZE", "ISZERO", "@done", "JUMPI",
    "CALLDATASIZE", 0, 0, "CALLDATACOPY",  # memory = calldata
    0, "MLOAD", 0, "BYTE",  # n
    [["DUP1", n, "EQ", f"@log{n}", "JUMPI"] for n in range(5)],
    "INVALID",
    [
        [
            f"log{n}:",
            [[1 + 32 * i, "MLOAD"] for i in reversed(range(n))],  # topic n-1 .. topic 0
            1 + 32 * n, "CALLDATASIZE", "SUB",  # data size
            1 + 32 * n,  # data offset
            f"LOG{n}",
            "STOP",
        ]
        for n in range(5)
    ],
    "done:", "STOP",
)


def log_calldata(topics: Sequence[bytes], data: bytes = b"") -> bytes:
    """Calldata that makes :data:`LOG_EMITTER` emit one log with these topics and data."""
    if len(topics) > 4 or any(len(t) != 32 for t in topics):
        raise ValueError("a log has at most four topics of 32 bytes each")
    return bytes([len(topics)]) + b"".join(topics) + data


PANIC_SELECTOR = keccak(b"Panic(uint256)")[:4]
ERROR_SELECTOR = keccak(b"Error(string)")[:4]
USER_ERROR = "user error"


def panic_data(code: int) -> bytes:
    """ABI encoding of ``Panic(code)``, what Solidity reverts with on ``assert(false)`` (1)."""
    return PANIC_SELECTOR + code.to_bytes(32, "big")


def error_data(message: str) -> bytes:
    """ABI encoding of ``Error(message)``, what ``require(false, message)`` reverts with."""
    text = message.encode()
    padded = text.ljust((len(text) + 31) // 32 * 32, b"\x00")
    return ERROR_SELECTOR + (32).to_bytes(32, "big") + len(text).to_bytes(32, "big") + padded


def _revert_with(data: bytes) -> list[Item]:
    return [store_bytes(0, data), len(data), 0, "REVERT"]


REVERTER = assemble(
    # The first calldata byte picks the failure, as in the rpc-compat chain's contract:
    # 0x00 (or no calldata) Panic(1), 0x01 Error("user error"), 0x02 a revert without data;
    # anything else succeeds.
    0, "CALLDATALOAD", 0, "BYTE",
    "DUP1", "ISZERO", "@panic", "JUMPI",
    "DUP1", 1, "EQ", "@error", "JUMPI",
    "DUP1", 2, "EQ", "@bare", "JUMPI",
    "STOP",
    "panic:", _revert_with(panic_data(1)),
    "error:", _revert_with(error_data(USER_ERROR)),
    "bare:", 0, 0, "REVERT",
)

PANIC_CALL, ERROR_CALL, BARE_REVERT_CALL = b"\x00", b"\x01", b"\x02"


STORAGE = assemble(
    # 32 bytes of calldata: return the slot they name. Otherwise calldata is (slot, value)
    # pairs of 32-byte words, each stored in turn.
    "CALLDATASIZE", 32, "EQ", "@get", "JUMPI",
    0,  # i, the offset of the next pair
    "loop:",
    "CALLDATASIZE", "DUP2", "LT", "ISZERO", "@done", "JUMPI",  # stop once i >= size
    "DUP1", 32, "ADD", "CALLDATALOAD",  # value
    "DUP2", "CALLDATALOAD",  # slot
    "SSTORE",
    64, "ADD", "@loop", "JUMP",
    "done:", "STOP",
    "get:", 0, "CALLDATALOAD", "SLOAD", 0, "MSTORE", 32, 0, "RETURN",
)


def store_calldata(slots: dict[int, int]) -> bytes:
    """Calldata that makes :data:`STORAGE` set each of these slots."""
    if len(slots) == 0:
        raise ValueError("at least one slot is needed (32 bytes of calldata would read one)")
    return b"".join(s.to_bytes(32, "big") + v.to_bytes(32, "big") for s, v in slots.items())


ENV_FIELDS: tuple[str, ...] = (
    "NUMBER", "TIMESTAMP", "CHAINID", "COINBASE", "BASEFEE", "GASLIMIT", "PREVRANDAO",
    "CALLER", "ORIGIN", "CALLVALUE", "GASPRICE", "SELFBALANCE", "BLOBBASEFEE", "PARENTHASH",
)
"""What :data:`ENV_ECHO` returns, one 32-byte word each; PARENTHASH is BLOCKHASH(NUMBER - 1)."""

_ENV_SNIPPETS: dict[str, list[Item]] = {"PARENTHASH": [1, "NUMBER", "SUB", "BLOCKHASH"]}


def env_echo_code(fields: Sequence[str] = ENV_FIELDS) -> bytes:
    """A contract returning ``fields`` as 32-byte words. Pick fields the target fork has:
    CHAINID and SELFBALANCE need Istanbul, BASEFEE London, BLOBBASEFEE Cancun."""
    body: list[Item] = [
        [_ENV_SNIPPETS.get(name, [name]), 32 * i, "MSTORE"] for i, name in enumerate(fields)
    ]
    return assemble(body, 32 * len(fields), 0, "RETURN")


ENV_ECHO = env_echo_code()
