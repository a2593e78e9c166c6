"""Every public symbol has a docstring of its own (the API reference is built from them).

Public: every module of the package whose dotted name has no part starting with ``_``; in each,
the names of its ``__all__`` (or, without one, the classes and functions it defines whose names
do not start with ``_``); in each such class, the methods and properties it defines itself
whose names do not start with ``_``. A docstring inherited from a base class does not count,
nor does the signature a dataclass or a named tuple writes for itself.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ethread


def public_modules() -> Iterator[types.ModuleType]:
    yield ethread
    for info in pkgutil.walk_packages(ethread.__path__, "ethread."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            yield importlib.import_module(info.name)


def _public_names(module: types.ModuleType) -> list[str]:
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return list(exported)
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
            and getattr(value, "__module__", None) == module.__name__]


def _function(member: Any) -> Any:
    """The function behind a method, classmethod, staticmethod or property (None otherwise)."""
    if isinstance(member, property):
        member = member.fget
    member = getattr(member, "__func__", member)
    if callable(member) and not inspect.isclass(member):
        member = inspect.unwrap(member)
    return member if inspect.isfunction(member) else None


def _documented(doc: str | None) -> bool:
    return bool(doc and doc.strip())


def _class_documented(cls: type) -> bool:
    doc = cls.__dict__.get("__doc__")
    # A dataclass or named tuple without a docstring gets its signature as one.
    return _documented(doc) and not (doc or "").startswith(f"{cls.__name__}(")


def public_symbols(modules: Iterator[types.ModuleType]) -> Iterator[tuple[str, bool]]:
    """(qualified name, has a docstring of its own) of every public module, class, function,
    method and property, each once (a class exported by several modules is checked once)."""
    seen: set[str] = set()
    for module in modules:
        yield module.__name__, _documented(module.__doc__)
        for name in _public_names(module):
            value = getattr(module, name)
            if not (inspect.isclass(value) or inspect.isfunction(value)):
                continue  # constants, type aliases, submodules (walked on their own)
            qualified = f"{value.__module__}.{value.__qualname__}"
            if qualified in seen:
                continue
            seen.add(qualified)
            if inspect.isfunction(value):
                yield qualified, _documented(value.__doc__)
                continue
            yield qualified, _class_documented(value)
            for member_name, member in vars(value).items():
                function = _function(member)
                if member_name.startswith("_") or function is None:
                    continue
                yield f"{qualified}.{member_name}", _documented(function.__doc__)


def test_every_public_symbol_has_a_docstring() -> None:
    symbols = dict(public_symbols(public_modules()))
    missing = sorted(name for name, documented in symbols.items() if not documented)
    assert not missing, (f"{len(missing)} of {len(symbols)} public symbols have no docstring:\n"
                         + "\n".join(missing))


def test_the_walk_reaches_the_api_reference() -> None:
    symbols = dict(public_symbols(public_modules()))
    for name in ("ethread", "ethread.frames", "ethread.frames.logs", "ethread.iteration",
                 "ethread.models.Block", "ethread.backends.era.EraBackend",
                 "ethread.backends.era.EraBackend.close", "ethread.backends.memory.MemoryBackend",
                 "ethread.backends.memory.MemoryBackend.import_batch",
                 "ethread.methods.blocks.get_block_by_number", "ethread.errors.ParseError",
                 "ethread.server.processes.runner.ServerThread.port"):
        assert name in symbols, name
    assert len(symbols) > 500


def test_the_walk_names_what_lacks_a_docstring() -> None:
    module = types.ModuleType("sample", None)

    def bare() -> None:
        pass

    @dataclass
    class Point:
        x: int

        def norm(self) -> int:
            return abs(self.x)

        @property
        def double(self) -> int:
            return 2 * self.x

    class Documented:
        """Has one."""

        def method(self) -> None:
            """Has one too."""

        def _private(self) -> None:
            pass

    for value in (bare, Point, Documented):
        value.__module__ = "sample"
        value.__qualname__ = value.__name__
        setattr(module, value.__name__, value)
    symbols = dict(public_symbols(iter([module])))
    assert symbols == {
        "sample": False,
        "sample.bare": False,
        "sample.Point": False,
        "sample.Point.norm": False,
        "sample.Point.double": False,
        "sample.Documented": True,
        "sample.Documented.method": True,
    }
