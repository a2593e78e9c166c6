"""``import ethread`` and ``ethread --help`` load only what they use (PEP 562 names in
``ethread/__init__.py``, ``ethread.methods`` and ``ethread.server``; the
subcommands' flags deferred in :mod:`ethread.cli.deferred`): neither py-evm nor numpy,
pyarrow, web3.py nor the server, while every public name still imports as before."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import ethread

HEAVY = ("eth", "numpy", "pyarrow", "web3", "uvicorn", "plyvel", "lmdb", "eth_hash",
         "ethread.server.networks", "ethread.rpc.table", "ethread.methods.call")
"""Modules a plain ``import ethread`` or ``ethread --help`` must not load."""


def _loaded_after(program: str) -> set[str]:
    """The modules of ``HEAVY`` loaded once ``program`` ran in a fresh interpreter."""
    probe = (program + "\nimport json, sys\n"
             f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_ethread_loads_nothing_heavy() -> None:
    assert _loaded_after("import ethread") == set()


def test_the_help_of_the_command_loads_nothing_heavy() -> None:
    program = ("from ethread.cli import main\n"
               "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n")
    assert _loaded_after(program) == set()


def test_a_name_loads_its_module_when_read() -> None:
    loaded = _loaded_after("import ethread\nethread.MemoryBackend")
    assert "eth_hash" in loaded  # the memory backend hashes: it is what was asked for
    assert not loaded & {"numpy", "pyarrow", "web3", "uvicorn", "ethread.server.networks"}


@pytest.mark.parametrize("name", [n for n in ethread.__all__ if n != "__version__"])
def test_every_public_name_is_its_module_s_object(name: str) -> None:
    value = getattr(ethread, name)
    module = ethread._LAZY.get(name)
    if module is not None:
        assert value is getattr(importlib.import_module(module), name)
    elif name in ethread._SUBMODULES:
        assert value is importlib.import_module(f"ethread.{name}")
    else:
        assert name == "KECCAK_BACKEND" and value in ("pysha3", "auto")
    assert name in dir(ethread)


def test_from_ethread_import_star_gives_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from ethread import *", namespace)
    assert set(ethread.__all__) <= set(namespace)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        ethread.nothing_here  # noqa: B018


@pytest.mark.parametrize("package", ["ethread.methods", "ethread.server"])
def test_each_lazy_package_gives_every_name_it_lists(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    with pytest.raises(AttributeError):
        module.nothing_here  # noqa: B018


def test_a_function_named_as_its_module_stays_the_function() -> None:
    """``ethread.methods.call`` is the function even once ``ethread.methods.call``, the module,
    was imported by someone (which sets the package's attribute to the submodule)."""
    import ethread.methods

    importlib.import_module("ethread.methods.call")
    importlib.import_module("ethread.methods.simulate")
    assert callable(ethread.methods.call) and ethread.methods.call.__module__ == "ethread.methods.call"
    assert callable(ethread.methods.simulate)
    assert sys.modules["ethread.methods.call"].call is ethread.methods.call
