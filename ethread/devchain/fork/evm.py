"""py-evm on a forked chain: an account database that reads what the chain has not written from
the forked block (:mod:`.overlay`), and a chain config whose VMs use it. The fallback sits under
py-evm's journals (which a reverted write never passes) and is mixed into any account database.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field, fields
from typing import Any

import rlp
from eth.db.accesslog import KeyAccessLoggerDB
from eth.db.backends.base import BaseDB
from eth.db.cache import CacheDB
from eth.db.journal import JournalDB
from eth.db.storage import AccountStorageDB, StorageLookup
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash

from ...forks import KNOWN_NETWORKS, NETWORK_BY_CHAIN_ID, ChainConfig
from ...models import Address, Hash32
from .overlay import ForkOverlay
from .source import BLANK_ROOT


class _ForkedAccounts(BaseDB):
    """The account trie (keyed by address) with the forked block's accounts under it."""

    def __init__(self, trie: Any, overlay: ForkOverlay, at: int | None, db: Any) -> None:
        self._trie = trie
        self._overlay = overlay
        self.at = at
        self._db = db
        self.written: set[Address] = set()

    def __getitem__(self, address: bytes) -> bytes:
        try:
            found = bytes(self._trie[address])
        except KeyError:
            found = b""
        # (the trie answers an absent key with an empty value)
        if found or address in self.written or self._overlay.account_is_local(address, self.at):
            return found
        remote = self._overlay.remote_account(address)
        if remote is None:
            return b""
        if remote.code_hash not in self._db:
            code = self._overlay.remote_code(remote.code_hash)
            if code:
                self._db[remote.code_hash] = code  # content-addressed: safe to keep
        # Its storage is read through the fork too: the local storage trie starts empty.
        return bytes(rlp.encode([remote.nonce, remote.balance, BLANK_ROOT, remote.code_hash]))

    def __setitem__(self, address: bytes, value: bytes) -> None:
        self.written.add(address)
        self._trie[address] = value

    def __delitem__(self, address: bytes) -> None:
        self.written.add(address)
        with suppress(KeyError):
            del self._trie[address]

    def _exists(self, address: bytes) -> bool:
        return bool(self[address])


class _ForkedStorageLookup(StorageLookup):
    """One account's storage trie with the forked block's slots under it."""

    overlay: ForkOverlay
    at: int | None

    def __init__(self, db: Any, storage_root: Hash32, address: Address, overlay: ForkOverlay,
                 at: int | None) -> None:
        self.overlay = overlay
        self.at = at
        self.written: set[int] = set()
        self.wiped = False
        self._wipes: list[bool] = []
        super().__init__(db, EvmHash(storage_root), EvmAddress(address))

    def __getitem__(self, key: bytes) -> bytes:
        try:
            found = bytes(super().__getitem__(key))
        except KeyError:
            found = b""
        slot = int.from_bytes(key, "big")
        if (found or self.wiped or slot in self.written
                or self.overlay.slot_is_local(self._address, slot, self.at)):
            return found
        value = self.overlay.remote_slot(self._address, slot)
        return bytes(rlp.encode(value)) if value else b""

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self.written.add(int.from_bytes(key, "big"))
        super().__setitem__(key, value)

    def __delitem__(self, key: bytes) -> None:
        self.written.add(int.from_bytes(key, "big"))
        with suppress(KeyError):
            super().__delitem__(key)

    def _exists(self, key: bytes) -> bool:
        return bool(self[key])

    def new_trie(self) -> int:
        """The account's storage wiped: from here the local trie is the word on every slot."""
        self._wipes.append(self.wiped)
        self.wiped = True
        return super().new_trie()

    def rollback_trie(self, trie_index: int) -> None:
        self.wiped = self._wipes[trie_index]
        del self._wipes[trie_index:]
        super().rollback_trie(trie_index)


class _ForkedStorageDB(AccountStorageDB):
    def __init__(self, db: Any, storage_root: Hash32, address: Address, overlay: ForkOverlay,
                 at: int | None) -> None:
        super().__init__(db, EvmHash(storage_root), EvmAddress(address))
        self._storage_lookup = _ForkedStorageLookup(db, storage_root, address, overlay, at)
        self._storage_cache = CacheDB(self._storage_lookup)
        self._locked_changes = JournalDB(self._storage_cache)
        self._journal_storage = JournalDB(self._locked_changes)


class ForkedAccountsMixin:
    """Mixed in front of a py-evm account database class (see :func:`fork_vm_class`)."""

    overlay: ForkOverlay
    _raw_store_db: Any
    _trie: Any
    _trie_logger: Any
    _trie_cache: Any
    _journaltrie: Any
    _account_stores: dict[Address, Any]

    def __init__(self, db: Any, state_root: Hash32 = BLANK_ROOT) -> None:
        overlay = self.overlay
        self._fork_at = overlay.number_at(state_root)
        super().__init__(db, overlay.local_root(state_root))  # type: ignore[call-arg]
        self._forked = _ForkedAccounts(self._trie, overlay, self._fork_at, db)
        self._trie_logger = KeyAccessLoggerDB(self._forked, log_missing_keys=False)
        self._trie_cache = CacheDB(self._trie_logger)
        self._journaltrie = type(self._journaltrie)(self._trie_cache)

    def _get_address_store(self, address: Address) -> Any:
        store = self._account_stores.get(address)
        if store is None:
            storage_root = self._get_storage_root(address)  # type: ignore[attr-defined]
            store = _ForkedStorageDB(self._raw_store_db, storage_root, address, self.overlay,
                                     self._fork_at)
            self._account_stores[address] = store
        return store

    def _apply_account_diff_without_proof(self, diff: Any, trie: Any) -> None:
        # py-evm writes the diff straight into the trie, past the wrappers: the overlay learns
        # the accounts written (or deleted) from it.
        self._forked.written.update(bytes(key) for key in diff.pending_keys())
        self._forked.written.update(bytes(key) for key in diff.deleted_keys())
        super()._apply_account_diff_without_proof(diff, trie)  # type: ignore[misc]

    def persist(self) -> Any:
        """py-evm's, and what it wrote noted for the block being built (if one is)."""
        # The stores' last writes reach their tries here, and persist forgets the stores.
        self.make_state_root()  # type: ignore[attr-defined]
        slots: set[tuple[Address, int]] = set()
        wiped: set[Address] = set()
        for address, store in self._account_stores.items():
            lookup = getattr(store, "_storage_lookup", None)
            if isinstance(lookup, _ForkedStorageLookup):
                slots.update((address, slot) for slot in lookup.written)
                if lookup.wiped:
                    wiped.add(address)
        witness = super().persist()  # type: ignore[misc]
        self.overlay.note(set(self._forked.written), slots, wiped)
        # From here this is the newest state (a block's being built): every write counts.
        self._fork_at = self._forked.at = None
        return witness


def fork_vm_class(vm_class: Any, overlay: ForkOverlay) -> Any:
    """``vm_class`` whose states read what the chain has not written from the fork."""

    class ForkedState(vm_class.get_state_class()):  # type: ignore[misc]
        @classmethod
        def get_account_db_class(cls) -> Any:
            base = cls.account_db_class
            made = overlay.account_classes.get(base)
            if made is None:
                made = type("Forked" + base.__name__, (ForkedAccountsMixin, base),
                            {"overlay": overlay})
                overlay.account_classes[base] = made
            return made

    ForkedState.__name__ = vm_class.get_state_class().__name__
    return vm_class.configure(__name__=vm_class.__name__, _state_class=ForkedState)


@dataclass(frozen=True)
class ForkChainConfig(ChainConfig):
    """A forked chain's schedule, with the overlay every VM it gives reads through."""

    overlay: ForkOverlay | None = field(default=None, compare=False, repr=False)

    def vm_class(self, number: int, timestamp: int) -> Any:
        """The schedule's VM class for that block, its states reading through the overlay."""
        base = super().vm_class(number, timestamp)
        overlay = self.overlay
        if overlay is None:
            return base
        made = overlay.vm_classes.get(base)
        if made is None:
            made = overlay.vm_classes[base] = fork_vm_class(base, overlay)
        return made


def fork_chain_config(chain_id: int, schedule: Any, overlay: ForkOverlay) -> ForkChainConfig:
    """The config of a chain forked from ``chain_id``: a known network's schedule, else ``schedule``."""
    name = NETWORK_BY_CHAIN_ID.get(chain_id)
    document = (dict(KNOWN_NETWORKS[name]) if name is not None
                else schedule.genesis_config(chain_id))
    base = ChainConfig.from_genesis_config(document)
    values = {item.name: getattr(base, item.name) for item in fields(base) if item.init}
    return ForkChainConfig(**values, overlay=overlay)


__all__ = ["ForkChainConfig", "ForkedAccountsMixin", "fork_chain_config", "fork_vm_class"]
