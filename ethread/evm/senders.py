"""A py-evm transaction that answers a sender it was given rather than recovering one (an
impersonated transaction, or one whose sender the chain recorded)."""

from __future__ import annotations

from typing import Any

_WITH_SENDER: dict[type, type] = {}
"""Each py-evm transaction class -> its subclass answering the given sender (made once)."""


def with_sender(tx: Any, sender: bytes) -> Any:
    """``tx`` itself, now answering ``sender`` from ``sender`` and ``get_sender()``."""
    base = type(tx)
    given = _WITH_SENDER.get(base)
    if given is None:
        given = _WITH_SENDER[base] = type(f"WithSender{base.__name__}", (base,), {
            "sender": property(lambda self: self._given_sender),
            "get_sender": lambda self: self._given_sender,
        })
    object.__setattr__(tx, "_given_sender", sender)
    tx.__class__ = given
    return tx
