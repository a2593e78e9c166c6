"""The optional libraries of :mod:`ethread.frames` (the ``frames`` extra: pyarrow, numpy),
imported on first use; a frame asked for without them raises :class:`MissingExtra`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..extras import install_hint


class MissingExtra(ImportError):
    """A library of the ``frames`` extra is not installed."""


def _load(module: str, package: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(f"ethread.frames needs {package}, which is not installed: "
                           f"{install_hint('frames')}") from exc


def pyarrow() -> ModuleType:
    """The ``pyarrow`` module."""
    return _load("pyarrow", "pyarrow")


def numpy() -> ModuleType:
    """The ``numpy`` module."""
    return _load("numpy", "numpy")


def parquet() -> ModuleType:
    """The ``pyarrow.parquet`` module."""
    return _load("pyarrow.parquet", "pyarrow")


def tqdm() -> ModuleType:
    """The ``tqdm.auto`` module (a widget in notebooks, a text bar elsewhere)."""
    return _load("tqdm.auto", "tqdm")


def eth_abi() -> ModuleType:
    """The ``eth_abi`` module."""
    return _load("eth_abi", "eth-abi")
