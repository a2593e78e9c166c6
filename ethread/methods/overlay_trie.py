"""A Merkle-Patricia trie for simulated blocks: untouched nodes are read from the parent's
database only when a path passes through them, and a root is hashed only when asked for.

Unlike py-trie's ``HexaryTrie``, which encodes, hashes and writes every node on each change's
path, :class:`OverlayTrie` keeps changed nodes in memory as plain tuples, hashes them once
when its root is asked for (writing each new node under its hash, as py-trie does), and
shares decoded stored nodes through a table (an :class:`~ethread.lru.LRU` of
``MessageTables``). The nodes are the Yellow Paper's (appendix D): one under 32 bytes is
embedded in its parent, the root always hashed and stored.
``tests/methods/test_overlay_trie.py`` compares it with py-trie over random changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from eth.constants import BLANK_ROOT_HASH
from eth.db.accesslog import KeyAccessLoggerDB
from eth.db.backends.memory import MemoryDB
from eth.db.batch import BatchDB
from eth.db.cache import CacheDB
from eth.db.hash_trie import HashTrie
from eth.db.journal import JournalDB
from eth.db.storage import CLEAR_COUNT_KEY_NAME, AccountStorageDB, StorageLookup
from eth_typing import Address, Hash32
from eth_utils import to_bytes
from trie.exceptions import MissingTrieNode

from ..evm.block_vm import block_vm_class
from ..evm.lean_interpreter import LeanAccountDB, LeanJournalDB, MessageTables
from ..keccak import keccak256
from ..lru import LRU
from ..rlpcodec.items import decode_nested, encode_list_payload
from ..rlpcodec.ordered_trie import BLANK_ROOT, hex_prefix, rlp_string

__all__ = ["BLANK_ROOT", "OverlayTrie", "SimulationAccountDB", "simulation_vm_class"]

# A node in memory: a leaf (0, path, value), an extension (1, path, child) or a branch
# (2, sixteen children, value); a child is None (none), a 32-byte hash (a stored node, read
# when needed) or a node itself (embedded, or changed and not yet hashed). Paths are strings
# of hex digits, one a nibble (bytes.hex and bytes.fromhex convert them in C).
Node = tuple[Any, ...]
Ref = None | bytes | Node

LEAF, EXTENSION, BRANCH = 0, 1, 2
_NO_CHILDREN: tuple[Ref, ...] = (None,) * 16
DIGITS = "0123456789abcdef"
_INDEX = {digit: index for index, digit in enumerate(DIGITS)}

Nodes = LRU[bytes, Any]
"""Stored nodes by their hash, decoded (a hash names one node wherever it is stored)."""


def _path_of(encoded: bytes) -> tuple[str, bool]:
    """A hex-prefix encoded path's nibbles, and whether it ends a leaf."""
    digits = encoded.hex()
    flag = digits[0]
    return digits[1:] if flag in "13" else digits[2:], flag in "23"


def _node_of(item: Any) -> Ref:
    """A decoded RLP item as a node reference."""
    if type(item) is list:
        if len(item) == 17:
            return (BRANCH, tuple([_node_of(child) for child in item[:16]]), item[16])
        path, leaf = _path_of(item[0])
        if leaf:
            return (LEAF, path, item[1])
        return (EXTENSION, path, _node_of(item[1]))
    if not item:
        return None
    return cast(bytes, item)  # (a hash)


class OverlayTrie:
    """A hexary trie over ``db`` (hash -> node RLP) from ``root_hash``; what py-evm's account
    and storage databases ask of py-trie's ``HexaryTrie``."""

    __slots__ = ("_db", "_root", "_root_hash", "nodes")

    def __init__(self, db: Any, root_hash: bytes = BLANK_ROOT, nodes: Nodes | None = None) -> None:
        self._db = db
        self._root_hash = root_hash
        self._root: Ref = None if root_hash == BLANK_ROOT else root_hash
        self.nodes = nodes
        """The decoded nodes this trie shares with others (None: each read decodes)."""

    # -- the root ---------------------------------------------------------------------------

    @property
    def root_hash(self) -> bytes:
        """The root's hash, its changed nodes written to the database first."""
        root = self._root
        if root is None:
            self._root_hash = BLANK_ROOT
        elif type(root) is tuple:
            encoded = self._encode(root)
            root_hash = keccak256(encoded)
            self._store(root_hash, encoded, root)
            self._root = self._root_hash = root_hash
        return self._root_hash

    @root_hash.setter
    def root_hash(self, value: bytes) -> None:
        self._root_hash = value
        self._root = None if value == BLANK_ROOT else value

    @contextmanager
    def squash_changes(self) -> Iterator[OverlayTrie]:
        """py-trie's batch of changes (nothing is written before the root is asked for)."""
        yield self

    # -- reads ------------------------------------------------------------------------------

    def _load(self, ref: bytes, key: bytes) -> Node:
        nodes = self.nodes
        node = None if nodes is None else nodes.get(ref)
        if node is None:
            try:
                encoded = self._db[ref]
            except KeyError:
                raise MissingTrieNode(ref, self._root_hash, key) from None  # type: ignore[arg-type]
            found = _node_of(decode_nested(encoded))
            if type(found) is not tuple:
                raise ValueError(f"not a trie node under {ref.hex()}")
            node = found
            self._remember(ref, node)
        return node

    def _node(self, ref: Ref, key: bytes) -> Node:
        """The node ``ref`` (not None) stands for, read when it is a hash."""
        if type(ref) is bytes:
            return self._load(ref, key)
        return cast(Node, ref)

    def _store(self, node_hash: bytes, encoded: bytes, node: Node) -> None:
        """Write a new node under its hash (and keep it decoded)."""
        self._db[node_hash] = encoded
        self._remember(node_hash, node)

    def _remember(self, ref: bytes, node: Node) -> None:
        nodes = self.nodes
        if nodes is not None:
            nodes.put(ref, node)

    def get(self, key: bytes) -> bytes:
        """The value under ``key`` (b"" when none)."""
        path = key.hex()
        node = self._root
        at = 0
        while True:
            if node is None:
                return b""
            node = self._node(node, key)
            kind = node[0]
            if kind == BRANCH:
                if at == len(path):
                    value: bytes = node[2]
                    return value
                node = node[1][_INDEX[path[at]]]
                at += 1
            elif kind == LEAF:
                return node[2] if path[at:] == node[1] else b""
            else:
                step = node[1]
                if path[at:at + len(step)] != step:
                    return b""
                at += len(step)
                node = node[2]

    def __getitem__(self, key: bytes) -> bytes:
        return self.get(key)

    def __contains__(self, key: bytes) -> bool:
        return self.get(key) != b""

    # -- changes ----------------------------------------------------------------------------

    def __setitem__(self, key: bytes, value: bytes) -> None:
        if not value:
            self.__delitem__(key)
            return
        self._root = self._set(self._root, key.hex(), value, key)

    def set(self, key: bytes, value: bytes) -> None:
        """Put ``value`` under ``key``; an empty value deletes the key, as in py-trie."""
        self[key] = value

    def __delitem__(self, key: bytes) -> None:
        self._root = self._delete(self._root, key.hex(), key)

    def delete(self, key: bytes) -> None:
        """Remove ``key`` and its value (nothing happens when the trie has no such key)."""
        del self[key]

    def _set(self, ref: Ref, path: str, value: bytes, key: bytes) -> Ref:
        """``ref`` with ``value`` under ``path``: ``ref`` itself when it holds that value
        already (so that an unchanged path is neither encoded nor hashed again)."""
        if ref is None:
            return (LEAF, path, value)
        node = self._node(ref, key)
        kind = node[0]
        if kind == BRANCH:
            children = node[1]
            if not path:
                return ref if node[2] == value else (BRANCH, children, value)
            index = _INDEX[path[0]]
            child = self._set(children[index], path[1:], value, key)
            if child is children[index]:
                return ref
            return (BRANCH, (*children[:index], child, *children[index + 1:]), node[2])
        own = node[1]
        common = 0
        limit = min(len(own), len(path))
        while common < limit and own[common] == path[common]:
            common += 1
        if kind == LEAF and common == len(own) == len(path):
            return ref if node[2] == value else (LEAF, own, value)
        if kind == EXTENSION and common == len(own):
            child = self._set(node[2], path[common:], value, key)
            return ref if child is node[2] else (EXTENSION, own, child)
        # the paths part at ``common``: a branch there, behind an extension of the shared part
        children = list(_NO_CHILDREN)
        branch_value = b""
        rest = own[common:]
        if kind == LEAF:
            if rest:
                children[_INDEX[rest[0]]] = (LEAF, rest[1:], node[2])
            else:
                branch_value = node[2]
        elif len(rest) == 1:
            children[_INDEX[rest[0]]] = node[2]
        else:
            children[_INDEX[rest[0]]] = (EXTENSION, rest[1:], node[2])
        new = path[common:]
        if new:
            children[_INDEX[new[0]]] = (LEAF, new[1:], value)
        else:
            branch_value = value
        branch: Node = (BRANCH, tuple(children), branch_value)
        return (EXTENSION, path[:common], branch) if common else branch

    def _delete(self, ref: Ref, path: str, key: bytes) -> Ref:
        if ref is None:
            return None
        node = self._node(ref, key)
        kind = node[0]
        if kind == LEAF:
            return None if node[1] == path else ref
        if kind == EXTENSION:
            own = node[1]
            if path[:len(own)] != own:
                return ref
            child = self._delete(node[2], path[len(own):], key)
            if child is node[2]:
                return ref
            return self._joined(own, child, key)
        children = node[1]
        if not path:
            if not node[2]:
                return ref
            children_list, value = list(children), b""
        else:
            index = _INDEX[path[0]]
            child = self._delete(children[index], path[1:], key)
            if child is children[index]:
                return ref
            children_list, value = list(children), node[2]
            children_list[index] = child
        left = [i for i, c in enumerate(children_list) if c is not None]
        if value and not left:
            return (LEAF, "", value)
        if not value and len(left) == 1:  # one child left: the branch folds into it
            return self._joined(DIGITS[left[0]], children_list[left[0]], key)
        return (BRANCH, tuple(children_list), value)

    def _joined(self, prefix: str, child: Ref, key: bytes) -> Ref:
        """``child`` reached through ``prefix``, as one node."""
        if child is None:
            return None
        node = self._node(child, key)
        if node[0] == BRANCH:
            return (EXTENSION, prefix, child)
        return (node[0], prefix + node[1], node[2])

    # -- encoding ---------------------------------------------------------------------------

    def _reference(self, ref: Ref) -> bytes:
        """How a parent encodes its child ``ref`` (hashing and writing a changed child)."""
        if ref is None:
            return b"\x80"
        if type(ref) is bytes:
            return b"\xa0" + ref
        node = cast(Node, ref)
        encoded = self._encode(node)
        if len(encoded) < 32:
            return encoded
        child_hash = keccak256(encoded)
        self._store(child_hash, encoded, node)
        return b"\xa0" + child_hash

    def _encode(self, node: Node) -> bytes:
        kind = node[0]
        if kind == BRANCH:
            reference = self._reference
            return encode_list_payload(b"".join([reference(child) for child in node[1]]) + rlp_string(node[2]))
        if kind == LEAF:
            return encode_list_payload(rlp_string(hex_prefix(node[1], True)) + rlp_string(node[2]))
        return encode_list_payload(rlp_string(hex_prefix(node[1], False)) + self._reference(node[2]))


# ---------------------------------------------------------------------------------------------
# The account database over overlay tries


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
    """py-evm's account storage over an :class:`_OverlayStorageLookup`."""

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
    """eth_call's lean account database on overlay tries (the account trie and storage tries)."""

    def __init__(self, db: Any, state_root: Hash32 = BLANK_ROOT_HASH) -> None:
        super().__init__(db, state_root)
        self._overlay = OverlayTrie(self._batchtrie, state_root, self.tables.trie_nodes)
        self._trie = HashTrie(self._overlay)  # type: ignore[arg-type]
        self._trie_logger = KeyAccessLoggerDB(self._trie, log_missing_keys=False)
        self._trie_cache = CacheDB(self._trie_logger)
        self._journaltrie = LeanJournalDB(self._trie_cache)

    def use_tables(self, tables: MessageTables) -> None:
        """Read through ``tables`` from now on, the account trie's nodes too."""
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


def simulation_vm_class(vm_class: Any) -> Any:
    """``vm_class`` as whole blocks run it, on a :class:`SimulationAccountDB`."""
    return block_vm_class(vm_class, SimulationAccountDB)
