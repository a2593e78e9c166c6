"""A py-evm transaction that answers a sender it was given rather than recovering one (an
impersonated transaction, or one whose sender the chain recorded)."""

from __future__ import annotations

from typing import Any

from .classes import made, subclass


def _with_sender_class(base: type) -> type:
    return subclass(base, {  # type: ignore[no-any-return]
        "sender": property(lambda self: self._given_sender),
        "get_sender": lambda self: self._given_sender,
    }, f"WithSender{base.__name__}")


def with_sender(tx: Any, sender: bytes) -> Any:
    """``tx`` itself, now answering ``sender`` from ``sender`` and ``get_sender()``."""
    base: type = type(tx)
    object.__setattr__(tx, "_given_sender", sender)
    tx.__class__ = made(_with_sender_class, base)
    return tx
