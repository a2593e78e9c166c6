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

from collections.abc import Callable
from typing import Any

from eth.db.atomic import AtomicDB
from eth.db.batch import BatchDB
from eth.db.chain import ChainDB
from eth_utils import get_extended_debug_logger

from .classes import made, subclass
from .lean_interpreter import MessageTables, lean_vm_class

__all__ = ["after_system_writes", "block_vm_class"]


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


def after_system_writes(tables: MessageTables, key: Any, db: Any,
                        write: Callable[[Any], Any]) -> Any | None:
    """py-evm's header of a block at the state after its system writes (beacon root, parent
    hash), whose new trie nodes are written to ``db`` first; None when the writes deleted
    something (then they are made on the block's own state). ``write(chaindb)`` makes them on
    a VM over ``chaindb`` and answers that VM's header with its state root.

    The writes depend only on the parent's state and the block's header (which commits to
    that state), so they are made once per ``key`` (the VM class and the header), on a
    database that records them, and kept in ``tables`` (their ``system_writes``); the block's
    state root is then the same as when they are made on its own state, since a trie's root
    depends only on what it holds. A simulated block and a replayed one start from here."""
    kept = tables.system_writes.get(key)
    if kept is None:
        recording = BatchDB(db)
        header = write(ChainDB(AtomicDB(recording)))
        diff = recording.diff()
        kept = (() if tuple(diff.deleted_keys()) else  # (kept too: not tried again)
                (tuple(diff.pending_items()), header))
        tables.system_writes.put(key, kept)
    if not kept:
        return None
    for node_key, node in kept[0]:
        db[node_key] = node
    return kept[1]
