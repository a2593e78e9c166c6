"""A block being replayed, and the replays a dispatcher keeps between trace requests.

Before a :class:`BlockReplay` leaves a position (the state before transaction ``k``) it
persists the state into its own overlay database (nothing reaches the backend) and notes the
root, the header its receipts have added up in, and the logs so far; going back is a fresh
account database at that root, so a later request for any transaction of the block starts
right before it. Persisting changes nothing a transaction sees (py-evm locks the journal at
a transaction's start). :class:`ReplayStates` keeps recent replays, bounded in count and in
bytes; a replay serves one request at a time, and one whose run failed part-way is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from eth.db.backends.base import BaseDB
from eth_utils import ValidationError

from ...errors import ExecutionFailed
from ...evm.lean_interpreter import MessageTables
from ...lru import LRU
from ..message import CallStates
from ..overlay_trie import simulation_vm_class

MAX_REPLAYS = 64
MAX_REPLAY_BYTES = 256 * 1024 * 1024
MAX_DECODED_TRANSACTIONS = 4096
MAX_DECODED_HEADERS = 1024
BASE_WEIGHT = 64 * 1024
"""What a kept replay counts for besides its overlay and transactions: its VM and state."""
TRANSACTION_WEIGHT = 2048
"""What each of a kept replay's transactions counts for (decoded or not yet)."""


class Overlay(BaseDB):
    """Reads through to ``base``, keeps its own writes (content-addressed: a key never changes)."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.written: dict[bytes, bytes | None] = {}
        self.size = 0

    def __getitem__(self, key: bytes) -> bytes:
        written = self.written
        if key in written:
            value = written[key]
            if value is None:
                raise KeyError(key)
            return value
        return self.base[key]  # type: ignore[no-any-return]

    def __setitem__(self, key: bytes, value: bytes) -> None:
        if key not in self.written:
            self.size += len(key) + len(value)
        self.written[key] = value

    def _exists(self, key: bytes) -> bool:
        written = self.written
        if key in written:
            return written[key] is not None
        return key in self.base

    def __delitem__(self, key: bytes) -> None:
        self.written[key] = None


class LazyTransactions(Sequence[Any]):
    """A block's py-evm transactions, each decoded when first asked for."""

    def __init__(self, count: int, decode: Callable[[int], Any]) -> None:
        self._items: list[Any] = [None] * count
        self._decode = decode

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        if item is None:
            item = self._items[index] = self._decode(index)
        return item


@dataclass(slots=True)
class Position:
    """A noted place in a block: the state before transaction ``applied`` of it."""

    state_root: bytes
    header: Any
    logs: int
    gas_used: int = 0


@dataclass(slots=True)
class BlockReplay:
    """A block being replayed, and (with an ``overlay``) the positions it can go back to."""

    vm: Any
    header: Any
    transactions: Sequence[Any]
    block_hash: bytes
    number: int
    logs: int = 0
    applied: int = 0
    overlay: Overlay | None = None
    """Where the noted positions' states are (None: a replay that only goes forward)."""
    positions: dict[int, Position] = field(default_factory=dict)
    receipts: bool = True
    """Whether each transaction's receipt is made and added to the header, as import does;
    False (a block of the chain, replayed on the fast path): only :attr:`gas_used` counts."""
    gas_used: int = 0
    """The gas the transactions applied so far used, without receipts."""

    def apply_next(self) -> tuple[int, Any]:
        """Apply the next transaction (traced under a tracer): its gas used and computation."""
        tx = self.transactions[self.applied]
        vm = self.vm
        try:
            if self.receipts:
                receipt, computation = vm.apply_transaction(self.header, tx)
            else:  # (py-evm's apply_transaction without the receipt)
                vm.state.lock_changes()
                computation = vm.state.apply_transaction(tx)
        except ValidationError as exc:
            raise ExecutionFailed(f"tracing failed: {exc}") from None
        self.applied += 1
        if self.receipts:
            used = receipt.gas_used - self.header.gas_used
            self.header = vm.add_receipt_to_header(self.header, receipt)
            self.logs += len(receipt.logs)
        else:
            used = type(vm).finalize_gas_used(tx, computation)
            self.gas_used += used
            self.logs += len(computation.get_raw_log_entries())
        return used, computation

    def _note(self) -> None:
        """Persist the state here (once) and note the position."""
        if self.overlay is None or self.applied in self.positions:
            return
        state = self.vm.state
        state.persist()
        self.positions[self.applied] = Position(bytes(state.state_root), self.header, self.logs,
                                                self.gas_used)

    def _restore(self, index: int) -> None:
        position = self.positions[index]
        state = self.vm.state
        state._account_db = state.get_account_db_class()(self.vm.chaindb.db, position.state_root)
        self.applied, self.header, self.logs = index, position.header, position.logs
        self.gas_used = position.gas_used

    def seek(self, index: int) -> bool:
        """Stand before transaction ``index``, from the nearest noted position or from here,
        the transactions between applied untraced (and note it, for a replay that notes).
        False when the replay is past ``index`` with no position to go back to."""
        if self.applied != index and self.overlay is not None:
            nearest = max((p for p in self.positions if p <= index), default=None)
            if self.applied > index or (nearest is not None and nearest > self.applied):
                if nearest is None:
                    return False
                self._note()
                self._restore(nearest)
        if self.applied > index:
            return False
        while self.applied < index:
            self._note()
            self.apply_next()
        if len(self.transactions) > 1:
            self._note()
        return True

    @property
    def weight(self) -> int:
        """Bytes this replay holds, for :class:`ReplayStates`' bound."""
        return (BASE_WEIGHT + TRANSACTION_WEIGHT * len(self.transactions)
                + (self.overlay.size if self.overlay is not None else 0))


class ReplayStates:
    """Recently replayed blocks by hash (see the module docstring); a dispatcher owns one."""

    def __init__(self, max_replays: int = MAX_REPLAYS, max_bytes: int = MAX_REPLAY_BYTES) -> None:
        self._replays: LRU[bytes, tuple[BlockReplay, int]] = LRU(
            max_replays, max_bytes=max_bytes, weigh=lambda kept: kept[1])
        self.calls = CallStates(max_states=1, per_block=1, vm_classes=simulation_vm_class)
        """What a traced call's state is built with (each traced call has a state of its own)."""
        self.tables: MessageTables = self.calls.tables
        """What every replay's and traced call's state reads through, as eth_call's do."""
        self.transactions: LRU[tuple[Any, bytes], Any] = LRU(MAX_DECODED_TRANSACTIONS)
        """py-evm's transactions (their senders set) by their builder and hash, decoded once."""
        self.headers: LRU[tuple[Any, bytes], Any] = LRU(MAX_DECODED_HEADERS)
        """py-evm's header a block's replay starts from, by the VM class and the block's hash."""

    def __len__(self) -> int:
        return len(self._replays)

    @property
    def weight(self) -> int:
        """Bytes held by the kept replays."""
        return self._replays.weight

    def take(self, block_hash: bytes) -> BlockReplay | None:
        """The kept replay of the block, no longer kept (None: none kept)."""
        kept = self._replays.pop(block_hash)
        return None if kept is None else kept[0]

    def give(self, replay: BlockReplay) -> None:
        """Keep ``replay`` (taken or built, its run complete) for the block's next request."""
        self._replays.put(replay.block_hash, (replay, replay.weight))

    def clear(self) -> None:
        """Forget every replay."""
        self._replays.clear()
