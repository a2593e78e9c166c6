"""Decoding event logs with a contract's ABI (eth-abi) into extra columns.

Events are known by topic0. Indexed arguments come from topics 1-3 (a dynamic type's column
holds the keccak of its value), the others from the data. A log that does not fit its event
(an ERC-721 ``Transfer`` shares topic0 with ERC-20's) keeps its row with ``decoded`` False and
null arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eth_utils import keccak

from . import columns as c
from .extra import eth_abi

AbiInput = Mapping[str, Any]


def canonical_type(item: AbiInput) -> str:
    """The type of an ABI input as it is written in a signature (tuples expanded)."""
    kind = str(item["type"])
    if kind.startswith("tuple"):
        inner = ",".join(canonical_type(part) for part in item.get("components", ()))
        return f"({inner}){kind[len('tuple'):]}"
    return kind


def _column_kind(abi_type: str, indexed: bool) -> c.Column:
    if indexed and _is_dynamic_indexed(abi_type):
        return c.hex_string  # the topic holds keccak(value)
    if abi_type in ("address", "string"):
        return c.string
    if abi_type == "bool":
        return c.boolean
    if abi_type.startswith("bytes"):
        return c.binary
    for prefix, narrow in (("uint", c.uint64), ("int", c.int64)):
        if abi_type.startswith(prefix) and abi_type[len(prefix):].isdigit():
            return narrow if int(abi_type[len(prefix):]) <= 64 else c.wide
    return c.string  # arrays and tuples: their Python repr


def _is_dynamic_indexed(abi_type: str) -> bool:
    return abi_type in ("string", "bytes") or abi_type.endswith("]") or abi_type.startswith("(")


@dataclass(frozen=True)
class Event:
    """One event of an ABI: its name, topic0 and inputs (name, type, indexed)."""

    name: str
    signature: str
    topic0: bytes
    inputs: tuple[tuple[str, str, bool], ...]

    def decode(self, topics: Sequence[bytes], data: bytes) -> dict[str, Any] | None:
        """The arguments by name, or None when the log does not fit this event."""
        abi = eth_abi()
        indexed = [(n, t) for n, t, i in self.inputs if i]
        if len(topics) != 1 + len(indexed):
            return None
        out: dict[str, Any] = {}
        try:
            for (name, kind), topic in zip(indexed, topics[1:], strict=True):
                out[name] = (topic if _is_dynamic_indexed(kind) else
                             _plain(abi.decode([kind], topic)[0], kind))
            plain = [(n, t) for n, t, i in self.inputs if not i]
            values = abi.decode([t for _, t in plain], data) if plain else ()
            if not plain and data:
                return None
        except Exception:  # eth-abi raises several kinds of decoding errors
            return None
        for (name, kind), value in zip(plain, values, strict=True):
            out[name] = _plain(value, kind)
        return out


def _plain(value: Any, abi_type: str) -> Any:
    if abi_type == "address":
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return repr(value)
    return value


def parse_abi(abi: Any) -> list[Event]:
    """The non-anonymous events of ``abi``: a contract ABI (a list of entries, or its JSON
    text) or a single event entry."""
    if isinstance(abi, (str, bytes)):
        abi = json.loads(abi)
    if isinstance(abi, Mapping):
        abi = [abi]
    events = []
    for entry in abi:
        if entry.get("type") != "event" or entry.get("anonymous"):
            continue
        inputs = tuple((str(arg.get("name") or f"arg{i}"), canonical_type(arg),
                        bool(arg.get("indexed"))) for i, arg in enumerate(entry.get("inputs", ())))
        signature = f"{entry['name']}({','.join(t for _, t, _ in inputs)})"
        events.append(Event(str(entry["name"]), signature, keccak(text=signature), inputs))
    if not events:
        raise ValueError("the ABI given holds no non-anonymous event")
    return events


def decoded_columns(events: Sequence[Event], reserved: set[str],
                    logs: Sequence[tuple[bytes | None, Sequence[bytes], bytes]]) -> dict[str, Any]:
    """``event``, ``decoded`` and one column per argument for the logs given as
    (topic0, topics, data). An argument whose name is already a column is prefixed ``arg_``;
    two events with a same-named argument of different types get ``Event.name`` columns."""
    kinds: dict[str, str] = {}
    clash: set[str] = set()
    for event in events:
        for name, kind, _ in event.inputs:
            if kinds.setdefault(name, kind) != kind:
                clash.add(name)
    columns: dict[tuple[str, str], tuple[str, c.Column]] = {}
    for event in events:
        for name, kind, indexed in event.inputs:
            column = f"{event.name}.{name}" if name in clash else name
            if column in reserved:
                column = f"arg_{column}"
            columns[(event.name, name)] = (column, _column_kind(kind, indexed))
    by_topic = {e.topic0: e for e in events}
    out: dict[str, tuple[c.Column, list[Any]]] = {
        "event": (c.string, []), "decoded": (c.boolean, [])}
    for column_name, column_kind in columns.values():
        out.setdefault(column_name, (column_kind, []))
    for topic0, topics, data in logs:
        found = by_topic.get(topic0) if topic0 is not None else None
        args = found.decode(topics, data) if found is not None else None
        out["event"][1].append(found.name if found is not None else None)
        out["decoded"][1].append(args is not None)
        filled = set()
        if found is not None and args is not None:
            for name, value in args.items():
                column_name = columns[(found.name, name)][0]
                out[column_name][1].append(value)
                filled.add(column_name)
        for column_name, (_, values) in out.items():
            if column_name not in filled and column_name not in ("event", "decoded"):
                values.append(None)
    return out
