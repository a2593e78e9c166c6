"""The virtual machines whole blocks run on, a simulation's (``methods/simulate.py``) and a
traced replay's (``methods/tracing/replay.py``): eth_call's lean parts
(:mod:`.lean_interpreter`: the account tables, the interpreter loop, the flattened snapshots)
with an account database of the caller's (``methods/overlay_trie.py``'s, whose state and
storage tries are overlay tries).

What differs from eth_call's classes, and why: a simulated call is a transaction whose failure
must undo its writes before the block goes on, so the message a transaction starts with runs
inside py-evm's own snapshot (the fork's ``apply_message``), where eth_call's lean class skips
it because the whole run is reverted anyway.

Everything written is what py-evm writes (the same accounts, slots and code under the same
keys, through the same journals), so state roots, receipts and results are py-evm's;
``tests/methods/test_simulate.py`` runs every conformance case and random simulations on
these classes and on py-evm's own (``tests/support/plain_simulate.py``) and compares the
answers byte for byte.
"""

from __future__ import annotations

from typing import Any

from eth_utils import get_extended_debug_logger

from .classes import made, subclass
from .lean_interpreter import lean_vm_class

__all__ = ["block_vm_class"]


def block_vm_class(vm_class: Any, account_db_class: type) -> Any:
    """``vm_class`` as eth_call's lean class (:func:`~.lean_interpreter.lean_vm_class`) with
    ``account_db_class`` (a subclass of :class:`~.lean_interpreter.LeanAccountDB`), whose
    transactions' first messages run inside py-evm's snapshot (see the module docstring)."""
    return made(_block_vm_class, vm_class, account_db_class)


def _block_vm_class(vm_class: Any, account_db_class: type) -> Any:
    lean = lean_vm_class(vm_class)
    state = lean.get_state_class()
    fork_computation: Any = vm_class.get_state_class().computation_class
    computation = subclass(state.computation_class, {
        "apply_message": classmethod(fork_computation.apply_message.__func__)})
    block_state = subclass(state, {
        "account_db_class": account_db_class, "computation_class": computation,
        # py-evm's property makes the same logger (by the class's name, which every subclass
        # a simulation makes keeps) at each of the several reads a transaction makes
        "logger": get_extended_debug_logger(f"eth.vm.state.{state.__name__}")})
    return subclass(lean, {"_state_class": block_state}, vm_class.__name__)
