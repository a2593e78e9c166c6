"""The virtual machines whole blocks run on, a simulation's (:mod:`.simulate`) and a traced
replay's (:mod:`.tracing.replay`): eth_call's lean parts (:mod:`.call_vm`: the account
tables, the interpreter loop, the flattened snapshots) with state and storage tries that are
:class:`~.overlay_trie.OverlayTrie`\\ s.

What differs from eth_call's classes, and why:

- a simulated call is a transaction whose failure must undo its writes before the block
  goes on, so the message a transaction starts with runs inside py-evm's own snapshot (the
  fork's ``apply_message``), where eth_call's lean class skips it because the whole run is
  reverted anyway;
- the tries: a simulated block's state root is worked out from the accounts and slots it
  changed, on top of the parent's root, reading the parent's nodes only where a changed path
  passes (py-trie re-encodes and writes every node of a path at each change).

Everything written is what py-evm writes (the same accounts, slots and code under the same
keys, through the same journals), so state roots, receipts and results are py-evm's;
``tests/methods/test_simulate_vm.py`` runs every conformance case and random simulations through
both paths and compares the answers byte for byte.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from eth.constants import BLANK_ROOT_HASH
from eth.db.accesslog import KeyAccessLoggerDB
from eth.db.backends.memory import MemoryDB
from eth.db.batch import BatchDB
from eth.db.cache import CacheDB
from eth.db.hash_trie import HashTrie
from eth.db.journal import JournalDB
from eth.db.storage import CLEAR_COUNT_KEY_NAME, AccountStorageDB, StorageLookup
from eth_typing import Address, Hash32
from eth_utils import get_extended_debug_logger, to_bytes

from .call_vm import LeanAccountDB, LeanJournalDB, MessageTables, lean_vm_class
from .overlay_trie import OverlayTrie

__all__ = ["SimulationAccountDB", "block_vm_class"]


class _OverlayStorageLookup(StorageLookup):
    """py-evm's storage lookup with :class:`OverlayTrie`\\ s for reading and writing, sharing
    the decoded ``nodes`` of its account database's tables."""

    nodes: Any

    def _get_write_trie(self) -> Any:
        if self._trie_nodes_batch is None:
            self._trie_nodes_batch = BatchDB(self._db, read_through_deletes=True)
        if self._write_trie is None:
            self._write_trie = OverlayTrie(self._trie_nodes_batch, self._starting_root_hash,
                                           self.nodes)
        return self._write_trie

    def _get_read_trie(self) -> Any:
        if self._write_trie is not None:
            return self._write_trie
        return OverlayTrie(self._db, self._starting_root_hash, self.nodes)

    def commit_to(self, db: Any) -> None:
        """py-evm's, the trie's new nodes written to its batch first (an overlay trie writes
        them when its root is hashed, py-trie's at every change)."""
        if self._write_trie is not None:
            _ = self._write_trie.root_hash
        super().commit_to(db)


class _OverlayStorageDB(AccountStorageDB):
    """py-evm's account storage over an :class:`_OverlayStorageLookup` (its constructor's
    steps, with that lookup)."""

    def __init__(self, db: Any, storage_root: Hash32, address: Address, nodes: Any) -> None:
        self._address = address
        self._storage_lookup = _OverlayStorageLookup(db, storage_root, address)
        self._storage_lookup.nodes = nodes
        self._storage_cache = CacheDB(self._storage_lookup)
        self._locked_changes = JournalDB(self._storage_cache)
        self._journal_storage = JournalDB(self._locked_changes)
        self._accessed_slots: set[int] = set()
        self._clear_count = JournalDB(MemoryDB({CLEAR_COUNT_KEY_NAME: to_bytes(0)}))


class SimulationAccountDB(LeanAccountDB):
    """eth_call's lean account database whose account trie and storage tries are overlay
    tries."""

    def __init__(self, db: Any, state_root: Hash32 = BLANK_ROOT_HASH) -> None:
        super().__init__(db, state_root)
        self._overlay = OverlayTrie(self._batchtrie, state_root, self.tables.trie_nodes)
        self._trie = HashTrie(self._overlay)  # type: ignore[arg-type]
        self._trie_logger = KeyAccessLoggerDB(self._trie, log_missing_keys=False)
        self._trie_cache = CacheDB(self._trie_logger)
        self._journaltrie = LeanJournalDB(self._trie_cache)

    def use_tables(self, tables: MessageTables) -> None:
        """Read through ``tables`` from now on, the account trie's nodes too (a storage trie
        takes them when it is opened)."""
        super().use_tables(tables)
        self._overlay.nodes = tables.trie_nodes

    def _set_storage_root(self, address: Address, new_storage_root: Hash32) -> None:
        """py-evm's (the account with its new storage root), built directly."""
        account = self._get_account(address)
        self._set_fields(address, (account.nonce, account.balance, new_storage_root,
                                   account.code_hash))

    def _get_address_store(self, address: Address) -> Any:
        stores = self._account_stores
        store = stores.get(address)
        if store is None:
            store = _OverlayStorageDB(self._raw_store_db, self._get_storage_root(address), address,
                                     self.tables.trie_nodes)
            stores[address] = store
        return store


@lru_cache(maxsize=64)
def block_vm_class(vm_class: Any) -> Any:
    """``vm_class`` as eth_call's lean class (:func:`~.call_vm.lean_vm_class`) with a
    :class:`SimulationAccountDB`, whose transactions' first messages run inside py-evm's
    snapshot (see the module docstring)."""
    lean = lean_vm_class(vm_class)
    state = lean.get_state_class()
    fork_computation: Any = vm_class.get_state_class().computation_class
    computation = type(state.computation_class.__name__, (state.computation_class,), {
        "apply_message": classmethod(fork_computation.apply_message.__func__)})
    fast_state = type(state.__name__, (state,), {
        "account_db_class": SimulationAccountDB, "computation_class": computation,
        # py-evm's property makes the same logger (by the class's name, which every subclass
        # a simulation makes keeps) at each of the several reads a transaction makes
        "logger": get_extended_debug_logger(f"eth.vm.state.{state.__name__}")})
    return lean.configure(__name__=vm_class.__name__, _state_class=fast_state)
