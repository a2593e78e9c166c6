"""Short text and HTML renderings of models and backends, for the REPL and notebooks.

Byte strings print as ``0x`` hex, abridged past 32 bytes to their ends and length; nested lists
of models print as counts. In Jupyter, ``_repr_html_`` shows a table of the same values.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

ABRIDGE_FROM = 33
"""Byte strings of this many bytes or more are shown abridged."""


def short_bytes(value: bytes) -> str:
    """``0x``-hex of ``value``, abridged when long: ``0x0000…0000 (256 bytes)``."""
    if len(value) < ABRIDGE_FROM:
        return "0x" + value.hex()
    if not any(value):
        return f"0x00…00 ({len(value)} zero bytes)"
    return f"0x{value[:8].hex()}…{value[-4:].hex()} ({len(value)} bytes)"


def short_value(value: Any) -> str:
    """One field's value as :func:`repr_of` shows it."""
    if isinstance(value, bytes):
        return short_bytes(value)
    if isinstance(value, tuple):
        if value and hasattr(value[0], "__dataclass_fields__"):
            return f"<{len(value)} {type(value[0]).__name__}>"
        shown = ", ".join(short_value(v) for v in value[:3])
        more = f", …{len(value) - 3} more" if len(value) > 3 else ""
        return f"({shown}{more})"
    if hasattr(value, "__dataclass_fields__"):
        return repr_of(value)
    return repr(value)


SIGNATURE_WORDS = ("r", "s")
"""Fields that are 256-bit words rather than amounts: shown in hex."""


def field_items(model: Any) -> list[tuple[str, Any]]:
    """(name, value) of a model's fields but None ones; signature words r and s as hex."""
    items = []
    for f in fields(model):
        value = getattr(model, f.name)
        if value is None:
            continue
        if f.name in SIGNATURE_WORDS and isinstance(value, int):
            value = SignatureWord(value)
        items.append((f.name, value))
    return items


class SignatureWord(int):
    """An int that shows itself in hex."""

    def __repr__(self) -> str:
        return hex(self)


def summary(model: Any) -> list[tuple[str, Any]]:
    """The fields a model shows: all set fields, or a chosen few for the large ones."""
    custom = getattr(model, "_summary", None)
    return list(custom()) if custom is not None else field_items(model)


def repr_of(model: Any) -> str:
    """``Name(field=value, ...)`` with byte strings in hex, abridged when long."""
    inner = ", ".join(f"{name}={short_value(value)}" for name, value in summary(model))
    return f"{type(model).__name__}({inner})"


def html_table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """A two-column HTML table under a bold title; values as :func:`short_value` (strings as is)."""
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
        f"<td style='text-align:left'><code>"
        f"{html.escape(value if isinstance(value, str) else short_value(value))}</code></td></tr>"
        for name, value in rows)
    return f"<div><strong>{html.escape(title)}</strong><table>{body}</table></div>"


def html_of(model: Any) -> str:
    """An HTML table of what :func:`repr_of` shows."""
    return html_table(type(model).__name__, summary(model))


def utc(timestamp: int) -> str:
    """A block timestamp as ``2024-01-31 12:00:00 UTC`` (the number itself if out of range)."""
    try:
        return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(timestamp)


class Pretty:
    """Mixin of the models: short hex ``repr`` and an HTML table for notebooks."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr_of(self)

    def _repr_html_(self) -> str:
        return html_of(self)
