"""Account state at a block: eth_getBalance, eth_getTransactionCount, eth_getCode,
eth_getStorageAt and geth's eth_getStorageValues, read from the trie the header commits to
(no EVM is built). A backend without state, or a block whose trie nodes are not held,
answers :class:`~ethread.errors.StateUnavailable`, as eth_call does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import rlp
from eth.constants import BLANK_ROOT_HASH, EMPTY_SHA3
from eth_utils import keccak
from trie import HexaryTrie
from trie.exceptions import MissingTrieNode

from ..backend import ConfigSource, StateSource
from ..errors import ArgumentValueError, InvalidParams, LimitExceeded, StateUnavailable
from ..models import Address, BlockRef, Header
from ..proofs import account_fields
from ..validation import check_address, check_data
from .resolve import ChainHeaders, require_header

MAX_STORAGE_SLOTS = 1024
"""Slots one eth_getStorageValues call may ask for, in all (geth's limit)."""


class StateReader(ChainHeaders, StateSource, Protocol):
    """What the state methods read: headers to find the block, and its state trie."""


@dataclass(frozen=True, slots=True)
class Account:
    """An account as the state trie holds it; an absent account is all zero with no code."""

    nonce: int = 0
    balance: int = 0
    storage_root: bytes = BLANK_ROOT_HASH
    code_hash: bytes = EMPTY_SHA3
    exists: bool = False
    address: bytes = b""
    """Where it was read (its storage is read through it on a forked chain)."""


class RemoteAccount(Protocol):
    """An account of the block a chain was forked from."""

    nonce: int
    balance: int
    code_hash: bytes


class StateOverlay(Protocol):
    """A forked chain's state (:class:`ethread.devchain.fork.overlay.ForkOverlay`): its own
    trie for what it wrote since the fork, the forked block's state for the rest."""

    def local_root(self, state_root: bytes) -> bytes:
        """The root of the chain's own trie for the state root a header holds."""

    def number_at(self, state_root: bytes) -> int | None:
        """The block this state root is the state of (None: a state being built)."""

    def account_is_local(self, address: Address, at: int | None) -> bool:
        """Whether the chain's own trie is the word on ``address`` after block ``at``."""

    def slot_is_local(self, address: Address, slot: int, at: int | None) -> bool:
        """Whether the chain's own trie is the word on a slot of ``address`` after ``at``."""

    def remote_account(self, address: Address) -> RemoteAccount | None:
        """``address`` at the forked block, or None where it does not exist there."""

    def remote_slot(self, address: Address, slot: int) -> int:
        """A storage slot of ``address`` at the forked block."""

    def remote_code(self, code_hash: bytes) -> bytes | None:
        """Code fetched from the forked node, by its hash (None if it was not)."""


@runtime_checkable
class ForkedConfig(Protocol):
    """The chain config of a forked chain, which carries its overlay."""

    overlay: StateOverlay | None


class StateView:
    """The state of one block, read on demand from the backend's trie nodes."""

    def __init__(self, backend: StateReader, header: Header) -> None:
        self._db: Any = backend.evm_database().db
        self._number = header.number
        config = backend.chain_config() if isinstance(backend, ConfigSource) else None
        self._overlay = config.overlay if isinstance(config, ForkedConfig) else None
        root = header.state_root
        self._at: int | None = None
        if self._overlay is not None:
            self._at = self._overlay.number_at(root)
            root = self._overlay.local_root(root)
        self._accounts = HexaryTrie(self._db, root)

    def _missing(self) -> StateUnavailable:
        return StateUnavailable(f"no state for block {self._number}")

    def account(self, address: Address) -> Account:
        """The account at ``address`` (empty when it does not exist); raises when not held."""
        try:
            raw = self._accounts.get(keccak(address))
        except MissingTrieNode:
            raise self._missing() from None
        if not raw:
            overlay = self._overlay
            if overlay is not None and not overlay.account_is_local(address, self._at):
                remote = overlay.remote_account(address)
                if remote is not None:
                    return Account(remote.nonce, remote.balance, BLANK_ROOT_HASH,
                                   remote.code_hash, True, address)
            return Account(address=address)
        return Account(*account_fields(raw), True, address)

    def code(self, address: Address) -> bytes:
        """The code of the account at ``address`` (empty for an account without code)."""
        code_hash = self.account(address).code_hash
        if code_hash == EMPTY_SHA3:
            return b""
        try:
            return bytes(self._db[code_hash])
        except KeyError:
            code = self._overlay.remote_code(code_hash) if self._overlay is not None else None
            if code is None:
                raise self._missing() from None
            return code

    def storage(self, account: Account, slot: bytes) -> bytes:
        """The 32-byte value of a slot (``slot`` is up to 32 bytes, left-padded)."""
        raw = b""
        if account.storage_root != BLANK_ROOT_HASH:
            try:
                raw = HexaryTrie(self._db, account.storage_root).get(
                    keccak(slot.rjust(32, b"\x00")))
            except MissingTrieNode:
                raise self._missing() from None
        overlay = self._overlay
        if not raw and overlay is not None and account.address:
            number = int.from_bytes(slot, "big")
            if not overlay.slot_is_local(account.address, number, self._at):
                return overlay.remote_slot(account.address, number).to_bytes(32, "big")
        value = rlp.decode(raw) if raw else b""
        return bytes(value).rjust(32, b"\x00")


def state_at(backend: StateReader, block: BlockRef) -> StateView:
    """The state after ``block``; raises HeaderNotFound or StateUnavailable."""
    return StateView(backend, require_header(backend, block))


def get_balance(backend: StateReader, address: Address, block: BlockRef = "latest") -> int:
    """eth_getBalance: the balance in wei of ``address`` at a block (its state must be held)."""
    return state_at(backend, block).account(check_address(address)).balance


def get_transaction_count(backend: StateReader, address: Address, block: BlockRef = "latest") -> int:
    """The account's nonce. Without a transaction pool, ``pending`` is the head's."""
    return state_at(backend, block).account(check_address(address)).nonce


def get_code(backend: StateReader, address: Address, block: BlockRef = "latest") -> bytes:
    """The account's code; for an EIP-7702 delegated account, its delegation designator."""
    return state_at(backend, block).code(check_address(address))


def get_storage_at(backend: StateReader, address: Address, slot: bytes,
                   block: BlockRef = "latest") -> bytes:
    """eth_getStorageAt: the 32-byte value in storage slot ``slot`` of ``address`` at a block."""
    if len(check_data(slot, "slot")) > 32:
        raise ArgumentValueError("slot: at most 32 bytes")
    view = state_at(backend, block)
    return view.storage(view.account(check_address(address)), slot)


def get_storage_values(backend: StateReader, requests: Mapping[Address, Sequence[bytes]],
                       block: BlockRef = "latest") -> dict[Address, tuple[bytes, ...]]:
    """geth's eth_getStorageValues: each address's slots' values, 1 to :data:`MAX_STORAGE_SLOTS`."""
    total = 0
    for slots in requests.values():
        total += len(slots)
        if total > MAX_STORAGE_SLOTS:
            raise LimitExceeded(f"too many slots (max {MAX_STORAGE_SLOTS})")
    if total == 0:
        raise InvalidParams("empty request")
    view = state_at(backend, block)
    out: dict[Address, tuple[bytes, ...]] = {}
    for address, slots in requests.items():
        account = view.account(check_address(address))
        for slot in slots:
            if len(check_data(slot, "slot")) > 32:
                raise ArgumentValueError("slot: at most 32 bytes")
        out[address] = tuple(view.storage(account, slot) for slot in slots)
    return out
