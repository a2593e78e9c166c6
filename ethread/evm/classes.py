"""The one place ethread makes subclasses of py-evm's classes while it runs.

Each subclass is made by :func:`subclass` and kept by :func:`made`, once per base class and
what it adds: a class made per call would defeat py-evm's caches and the lean loop's tables,
which are keyed by class.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from ..lru import LRU

MAX_KEPT_CLASSES = 1024
"""Classes :func:`made` keeps (a few per fork and purpose: far fewer in practice)."""

_MADE: LRU[tuple[Any, ...], Any] = LRU(MAX_KEPT_CLASSES)


def made(build: Callable[..., Any], *key: Hashable) -> Any:
    """``build(*key)``, built once and kept (two threads may both build it: either is kept)."""
    found = _MADE.get((build, *key))
    if found is None:
        found = build(*key)
        _MADE.put((build, *key), found)
    return found


def subclass(base: Any, namespace: Mapping[str, Any], name: str | None = None,
             mixins: tuple[type, ...] = ()) -> Any:
    """A class derived from ``mixins`` then ``base`` with ``namespace``, named ``name`` or as ``base``."""
    return type(name or base.__name__, (*mixins, base), dict(namespace))


def wrapped_opcodes(opcodes: Mapping[int, Any],
                    wrappers: Mapping[int, Callable[[Any], Any]]) -> dict[int, Any]:
    """A copy of ``opcodes`` with each one ``wrappers`` names (if present) wrapped."""
    table = dict(opcodes)
    for value, wrap in wrappers.items():
        if value in table:
            table[value] = wrap(table[value])
    return table


def start_computation(cls: Any, computation: Any, message: Any, parent_computation: Any) -> bool:
    """py-evm's ``apply_computation`` up to its code loop; True when that finished it (a precompile)."""
    if computation.is_origin_computation:
        computation.contracts_created = []
        if message.is_create:
            cls.consume_initcode_gas_cost(computation)
    if parent_computation is not None:
        computation.contracts_created = parent_computation.contracts_created
    if message.is_create:
        computation.contracts_created.append(message.storage_address)
    precompile = computation.precompiles.get(message.code_address)
    if precompile is None:
        return False
    if not message.is_delegation:
        precompile(computation)
    return True
