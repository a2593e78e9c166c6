"""Models to JSON values, derived from the field declarations in :mod:`ethread.models`.

This is the one place a model becomes JSON. Each class gets a plan, built once: for every
field its JSON key, how its value is written, and whether None leaves the key out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..models import Block, Header, IncludedTransaction, Kind

JSON = Any
Writer = Callable[[Any], JSON]


def _hex_int(value: int) -> str:
    return hex(value)


def _hex_bytes(value: bytes) -> str:
    return "0x" + value.hex()


def _slot(value: bytes) -> str:
    return _hex_bytes(value) if len(value) == 32 else _hex_int(int.from_bytes(value, "big"))


def _scalar_writer(kind: Kind) -> Writer:
    if kind is Kind.QUANTITY:
        return _hex_int
    if kind is Kind.DATA:
        return _hex_bytes
    if kind is Kind.BOOL:
        return bool
    if kind is Kind.SLOT:
        return _slot
    return to_json


def _writer(kind: Kind) -> Writer:
    scalar = _scalar_writer(kind)

    def write(value: Any) -> JSON:
        if value is None:
            return None
        if isinstance(value, tuple | list):
            return [scalar(item) for item in value]
        return scalar(value)

    return write


Plan = tuple[tuple[str, str, Writer, bool], ...]


_PLANS: dict[type, Plan] = {}


def _plan(cls: type) -> Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _build_plan(cls)
    return plan


def _build_plan(cls: type) -> Plan:
    steps: list[tuple[str, str, Writer, bool]] = []
    for f in dataclasses.fields(cls):
        if "json" not in f.metadata:
            continue
        steps.append((f.name, f.metadata["json"], _writer(f.metadata["kind"]),
                      f.metadata["omit_none"]))
    for key, attribute, kind in getattr(cls, "computed", ()):
        steps.append((attribute, key, _writer(kind), True))
    return tuple(steps)


def to_json(model: Any) -> JSON:
    """A model (or a tuple of models) as plain JSON values, keys in declaration order."""
    if isinstance(model, tuple | list):
        return [to_json(item) for item in model]
    if isinstance(model, IncludedTransaction):
        return transaction_json(model)
    out: dict[str, JSON] = {}
    for attribute, key, write, omit_none in _plan(type(model)):
        value = getattr(model, attribute)
        if value is None and omit_none:
            continue
        out[key] = write(value)
    return out


def transaction_json(itx: IncludedTransaction) -> JSON:
    """A transaction with its place in the chain; ``gasPrice`` is what it effectively paid."""
    out: dict[str, JSON] = {}
    for attribute, key, write, omit_none in _plan(IncludedTransaction):
        if key == "":
            out.update(to_json(itx.transaction))
            continue
        value = getattr(itx, attribute)
        if value is None and omit_none:
            continue
        out[key] = write(value)
    return out


def header_json(header: Header, size: int) -> dict[str, JSON]:
    out: dict[str, JSON] = to_json(header)
    out["size"] = _hex_int(size)
    return out


def block_json(block: Block, full_transactions: bool) -> JSON:
    out = header_json(block.header, block.size)
    if full_transactions:
        out["transactions"] = [transaction_json(t) for t in block.transactions]
    else:
        out["transactions"] = [_hex_bytes(t.hash) for t in block.transactions]
    out["uncles"] = [_hex_bytes(u.hash) for u in block.uncles]
    if block.withdrawals is not None:
        out["withdrawals"] = to_json(block.withdrawals)
    return out
