"""The virtual machines whole blocks run on (a simulation's, a traced replay's): eth_call's
lean parts (:mod:`.lean_interpreter`) with the caller's account database.

Unlike eth_call's classes, a transaction's first message runs inside py-evm's own snapshot (a
failed transaction must undo its writes before the block goes on). Everything written is
what py-evm writes; ``tests/methods/test_simulate.py`` compares the answers with py-evm's own
classes byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eth.consensus.context import ConsensusContext
from eth.db.atomic import AtomicDB
from eth.db.batch import BatchDB
from eth.db.chain import ChainDB
from eth.vm.chain_context import ChainContext
from eth_utils import get_extended_debug_logger

from .classes import made, subclass
from .lean_interpreter import MessageTables, lean_vm_class

__all__ = ["after_system_writes", "block_vm_class", "scratch_chaindb", "vm_at"]


def vm_at(vm_class: Any, header: Any, chaindb: Any, chain_id: int) -> Any:
    """A py-evm VM of ``vm_class`` at ``header`` over ``chaindb``, for chain ``chain_id``."""
    return vm_class(header=header, chaindb=chaindb, chain_context=ChainContext(chain_id),
                    consensus_context=ConsensusContext(chaindb.db))


def scratch_chaindb(chaindb: Any) -> ChainDB:
    """``chaindb`` under an overlay that keeps every write in memory (dropped with it)."""
    return ChainDB(AtomicDB(BatchDB(chaindb.db)))


def block_vm_class(vm_class: Any, account_db_class: type) -> Any:
    """``vm_class`` as the lean class with ``account_db_class``, first messages inside py-evm's snapshot."""
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
    hash), their new trie nodes written to ``db`` first; None when the writes deleted
    something. ``write(chaindb)`` makes them on a VM over ``chaindb`` and answers its header.
    The writes depend only on the header (which commits to the parent's state), so they are
    made once per ``key`` and kept in ``tables.system_writes``."""
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
