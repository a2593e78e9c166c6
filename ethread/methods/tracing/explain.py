"""Traces made readable in a test's output: callTracer's tree as indented text, with revert
reasons and custom errors decoded (by the ABIs a test registered, :class:`ContractAbis`), and
the ``console.log`` calls of hardhat's ``console.sol`` (calls to :data:`CONSOLE_ADDRESS`)
decoded into the lines they print. The web3 provider and the pytest plugin call it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from eth_utils import keccak, to_checksum_address

from ..call import decode_revert_reason
from .models import CallFrame

CONSOLE_ADDRESS = bytes.fromhex("000000000000000000636f6e736f6c652e6c6f67")
"""hardhat's console address: the bytes of ``console.log``, right-aligned."""
CONSOLE_MARK = CONSOLE_ADDRESS[9:]
"""What a contract that calls the console holds in its code (the address's non-zero bytes)."""


# ---------------------------------------------------------------------------------------------
# ABIs a test knows


def _type_of(item: Mapping[str, Any]) -> str:
    kind = str(item["type"])
    if kind.startswith("tuple"):
        return "(" + ",".join(_type_of(c) for c in item.get("components", ())) + ")" + kind[5:]
    return kind


@dataclass(frozen=True, slots=True)
class AbiEntry:
    """A function or custom error: its name, argument names and types."""

    name: str
    names: tuple[str, ...]
    types: tuple[str, ...]

    @property
    def signature(self) -> str:
        """``name(type,...)``, whose keccak gives the selector."""
        return f"{self.name}({','.join(self.types)})"


@dataclass
class ContractAbis:
    """Registered ABIs' functions and custom errors by selector, and address labels (``Vault``)."""

    entries: dict[bytes, AbiEntry] = field(default_factory=dict)
    labels: dict[bytes, str] = field(default_factory=dict)

    def add(self, abi: Iterable[Mapping[str, Any]], address: bytes | None = None,
            label: str | None = None) -> None:
        """Register ``abi`` (a list of ABI items), and ``label`` for ``address``."""
        for item in abi:
            if item.get("type") not in ("function", "error") or "name" not in item:
                continue
            inputs = item.get("inputs", ())
            entry = AbiEntry(str(item["name"]), tuple(str(i.get("name", "")) for i in inputs),
                             tuple(_type_of(i) for i in inputs))
            self.entries.setdefault(keccak(text=entry.signature)[:4], entry)
        if address is not None and label:
            self.labels[address] = label

    def label(self, address: bytes | None) -> str:
        """An address as the tree shows it: checksummed, after its registered name."""
        if address is None:
            return "(no address)"
        name = self.labels.get(address)
        checksummed = to_checksum_address(address)
        return f"{name}[{checksummed}]" if name else checksummed

    def call(self, data: bytes) -> str:
        """A call's input as ``name(arg=value, ...)`` when its selector is known."""
        if len(data) < 4:
            return "(no data)" if not data else "0x" + data.hex()
        entry = self.entries.get(data[:4])
        if entry is None:
            return f"0x{data[:4].hex()}(…{len(data) - 4} bytes)"
        return _decoded(entry, data[4:])

    def error(self, data: bytes) -> str | None:
        """What a revert returned: ``Error``/``Panic`` as the reason, a custom error by its ABI."""
        reason = decode_revert_reason(data) if len(data) >= 4 else None
        if reason is not None:
            return repr(reason)
        entry = self.entries.get(data[:4]) if len(data) >= 4 else None
        return None if entry is None else _decoded(entry, data[4:])


def _show(value: Any, kind: str) -> str:
    """A decoded argument as a call is explained: as console.log prints it, strings quoted."""
    if kind != "address":
        if isinstance(value, str):
            return repr(value)
        if isinstance(value, tuple | list):
            return "[" + ", ".join(_show(v, kind.rstrip("[]0123456789")) for v in value) + "]"
    return _console_text(value, kind)


def _decoded(entry: AbiEntry, body: bytes) -> str:
    from eth_abi.abi import decode

    try:
        values = decode(list(entry.types), body)
    except Exception:
        return f"{entry.name}(…undecodable {len(body)} bytes)"
    args = ", ".join((f"{name}=" if name else "") + _show(value, kind)
                     for name, kind, value in zip(entry.names, entry.types, values, strict=True))
    return f"{entry.name}({args})"


# ---------------------------------------------------------------------------------------------
# console.log


_CONSOLE_TYPES = ("uint256", "int256", "string", "bool", "address", "bytes")


@lru_cache(maxsize=1)
def _console_selectors() -> dict[bytes, tuple[str, ...]]:
    """console.sol's overloads by selector: ``log`` with up to four basic-typed arguments
    (also spelt ``uint``/``int``, as older versions hash them), and ``logUint``... ``logBytes32``."""
    table: dict[bytes, tuple[str, ...]] = {}
    for count in range(5):
        for types in itertools.product(_CONSOLE_TYPES, repeat=count):
            table[keccak(text=f"log({','.join(types)})")[:4]] = types
            short = tuple(t.replace("256", "") for t in types)
            table.setdefault(keccak(text=f"log({','.join(short)})")[:4], types)
    single = {"Int": "int256", "Uint": "uint256", "String": "string", "Bool": "bool",
              "Address": "address", "Bytes": "bytes"}
    for name, kind in single.items():
        table[keccak(text=f"log{name}({kind})")[:4]] = (kind,)
    for size in range(1, 33):
        table[keccak(text=f"logBytes{size}(bytes{size})")[:4]] = (f"bytes{size}",)
    return table


def _console_text(value: Any, kind: str) -> str:
    """One console.log argument as it prints: a checksummed address, ``0x`` bytes, ``true``."""
    if kind == "address":
        return to_checksum_address(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def console_line(data: bytes) -> str:
    """What one console.log call prints (a leading string's ``%s``/``%d``/``%i`` filled in)."""
    types = _console_selectors().get(data[:4])
    if types is None:
        return f"console.log: unknown selector 0x{data[:4].hex()}"
    from eth_abi.abi import decode

    try:
        values = list(decode(list(types), data[4:]))
    except Exception:
        return "console.log: undecodable arguments"
    texts = [_console_text(v, k) for v, k in zip(values, types, strict=True)]
    if texts and types[0] == "string":
        head, rest = texts[0], texts[1:]
        while rest and any(mark in head for mark in ("%s", "%d", "%i")):
            positions = [p for p in (head.find("%s"), head.find("%d"), head.find("%i")) if p >= 0]
            at = min(positions)
            head = head[:at] + rest.pop(0) + head[at + 2:]
        texts = [head, *rest]
    return " ".join(texts)


def console_logs(frame: CallFrame) -> list[str]:
    """Every console.log line of a call tree in call order (reverted frames' too, as hardhat)."""
    lines = []
    for call in frame.calls:
        if call.to == CONSOLE_ADDRESS:
            lines.append(console_line(call.input))
        else:
            lines.extend(console_logs(call))
    return lines


# ---------------------------------------------------------------------------------------------
# The tree


def _outcome(frame: CallFrame, abis: ContractAbis) -> str:
    if frame.error is None:
        return "ok"
    if frame.error == "execution reverted":
        decoded = abis.error(frame.output) if frame.output else None
        if decoded is not None:
            return f"REVERTED: {decoded}"
        return "REVERTED" + (f" with 0x{frame.output.hex()}" if frame.output else " (no data)")
    return f"FAILED: {frame.error}"


def render_tree(frame: CallFrame, abis: ContractAbis | None = None) -> str:
    """The call tree as indented lines, console.log calls shown as what they print."""
    abis = abis if abis is not None else ContractAbis()
    lines: list[str] = []
    _render(frame, abis, "", "", lines)
    return "\n".join(lines)


def _render(frame: CallFrame, abis: ContractAbis, lead: str, child_lead: str,
            lines: list[str]) -> None:
    if frame.to == CONSOLE_ADDRESS:
        lines.append(f"{lead}console.log: {console_line(frame.input)}")
        return
    if frame.type in ("CREATE", "CREATE2"):
        what = f"{frame.type} {abis.label(frame.to)}" if frame.to else f"{frame.type} (failed)"
    elif frame.type == "SELFDESTRUCT":
        what = f"SELFDESTRUCT {abis.label(frame.sender)} → {abis.label(frame.to)}"
    else:
        what = f"{frame.type} {abis.label(frame.to)}.{abis.call(frame.input)}"
    value = f" value={frame.value}" if frame.value else ""
    lines.append(f"{lead}{what}{value} [gas used {frame.gas_used:,}] {_outcome(frame, abis)}")
    for index, call in enumerate(frame.calls):
        last = index == len(frame.calls) - 1
        _render(call, abis, child_lead + ("└─ " if last else "├─ "),
                child_lead + ("   " if last else "│  "), lines)


__all__ = ["CONSOLE_ADDRESS", "AbiEntry", "ContractAbis", "console_line", "console_logs",
           "render_tree"]
