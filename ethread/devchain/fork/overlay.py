"""A forked chain's state: its own trie for what it wrote, the forked block's for the rest.

A chain forked at remote block N starts with an empty trie of its own; what it has not written
is read from block N (:class:`~.source.ForkSource`). So a local state root commits only to what
the chain wrote since the fork (as in anvil). The local trie is the word on an account or slot
from the first block that wrote it (or wiped the storage) on; a revert forgets dropped blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...models import Address, Hash32
from .source import BLANK_ROOT, ForkSource, RemoteAccount


@dataclass
class Writes:
    """What one block wrote: accounts, slots, and accounts whose storage it wiped."""

    accounts: set[Address] = field(default_factory=set)
    slots: set[tuple[Address, int]] = field(default_factory=set)
    wiped: set[Address] = field(default_factory=set)


class ForkOverlay:
    """The local writes since the fork, and the forked state under them."""

    def __init__(self, source: ForkSource) -> None:
        self.source = source
        self.fork_root: Hash32 = source.point.state_root
        self.fork_number = source.point.number
        self._accounts: dict[Address, int] = {}
        self._slots: dict[tuple[Address, int], int] = {}
        self._wiped: dict[Address, int] = {}
        self._roots: dict[Hash32, int] = {BLANK_ROOT: self.fork_number,
                                          self.fork_root: self.fork_number}
        self._local = threading.local()
        self._lock = threading.Lock()
        self.vm_classes: dict[Any, Any] = {}
        """py-evm VM (and below, account database) classes made to read through this overlay."""
        self.account_classes: dict[Any, Any] = {}

    def local_root(self, state_root: Hash32) -> Hash32:
        """The local trie's root for a header's state root (the forked block's: the empty trie)."""
        return BLANK_ROOT if state_root == self.fork_root else state_root

    def number_at(self, state_root: Hash32) -> int | None:
        """The block whose state this root is, or None (a block being built: every write counts)."""
        return self._roots.get(state_root)

    def account_is_local(self, address: Address, at: int | None) -> bool:
        """Whether the local trie is the word on ``address`` in the state after block ``at``."""
        return _by(self._accounts.get(address), at)

    def slot_is_local(self, address: Address, slot: int, at: int | None) -> bool:
        """Whether the local trie is the word on a slot of ``address`` after block ``at``."""
        return _by(self._slots.get((address, slot)), at) or _by(self._wiped.get(address), at)

    def in_local_trie(self, address: Address, at: int | None) -> bool:
        """Whether the local trie holds ``address``'s record (account or slot written) after block ``at``."""
        if self.account_is_local(address, at) or _by(self._wiped.get(address), at):
            return True
        with self._lock:
            return any(_by(first, at) for (owner, _), first in self._slots.items() if owner == address)

    # -- the forked block's values, checked (methods.state.StateOverlay names them) ---------

    def remote_account(self, address: Address) -> RemoteAccount | None:
        """``address`` at the forked block (None where it does not exist there), checked."""
        return self.source.account(address)

    def remote_slot(self, address: Address, slot: int) -> int:
        """A storage slot of ``address`` at the forked block, checked."""
        return self.source.storage(address, slot)

    def remote_code(self, code_hash: Hash32) -> bytes | None:
        """Code the source has fetched, by its hash (None if it has not)."""
        return self.source.code(code_hash)

    @contextmanager
    def recording(self) -> Iterator[Writes]:
        """Collect what the states persisted in this thread write, for :meth:`commit`."""
        writes = Writes()
        self._local.writes = writes
        try:
            yield writes
        finally:
            self._local.writes = None

    def note(self, accounts: set[Address], slots: set[tuple[Address, int]],
             wiped: set[Address]) -> None:
        """What a state persisted (from the fork's account database), kept while :meth:`recording`."""
        writes: Writes | None = getattr(self._local, "writes", None)
        if writes is None:
            return
        writes.accounts |= accounts
        writes.slots |= slots
        writes.wiped |= wiped

    def commit(self, writes: Writes, number: int, state_root: Hash32) -> None:
        """Block ``number``, of ``state_root``, is in the chain and wrote ``writes``."""
        with self._lock:
            for address in writes.accounts:
                self._accounts.setdefault(address, number)
            for key in writes.slots:
                self._slots.setdefault(key, number)
            for address in writes.wiped:
                self._wiped.setdefault(address, number)
            self._roots.setdefault(state_root, number)

    def rewind(self, number: int) -> None:
        """Forget what blocks above ``number`` wrote (a revert to a snapshot, a reset)."""
        with self._lock:
            self._accounts = {k: n for k, n in self._accounts.items() if n <= number}
            self._slots = {k: n for k, n in self._slots.items() if n <= number}
            self._wiped = {k: n for k, n in self._wiped.items() if n <= number}
            self._roots = {k: n for k, n in self._roots.items() if n <= number}


def _by(first: int | None, at: int | None) -> bool:
    """Whether a write first made in block ``first`` (None: never) is in the state after ``at``."""
    return first is not None and (at is None or first <= at)


__all__ = ["ForkOverlay", "Writes"]
