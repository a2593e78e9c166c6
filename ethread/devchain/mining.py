"""A dev chain's blocks (account edits too), made from the pool and executed by py-evm at their parent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from typing import Any

import rlp
from eth.abc import BlockAPI, BlockHeaderAPI, VirtualMachineAPI
from eth_typing import Address as EvmAddress
from eth_utils import ValidationError, keccak

from ..chain.importer import spoof_senders
from ..forks import FORK_BY_NAME
from ..methods.overrides import set_account
from ..models import Address, Block, Hash32, Header, Transaction, Withdrawal
from ..rlpcodec.blocks import block_item
from ..rlpcodec.headers import decode_header
from .core import ChainCore, DevChainError, StateEdit
from .fork.overlay import Writes
from .genesis import ZERO_HASH, ZERO_NONCE
from .txpool import Pooled


class BlockMining(ChainCore):
    """Blocks: :meth:`mine` and the execution every block (pending, sibling, edit) goes through."""

    def mine(
        self,
        *,
        timestamp: int | None = None,
        coinbase: Address | None = None,
        uncles: Sequence[Header] = (),
        withdrawals: Sequence[tuple[Address, int]] = (),
        extra_data: bytes = b"",
    ) -> Block:
        """Put the pending transactions into a new block, import it and return it as stored.
        ``withdrawals``: (address, gwei) pairs; ``uncles``: from :meth:`sibling`. A queued
        :meth:`deploy` that the block would not create makes this raise (and store nothing)."""
        with self._lock:
            taken = self._next_transactions(timestamp)
            hashes = {p.hash for p in taken}
            deployments = {h: a for h, a in self._deployments.items() if h in hashes}
            senders = {h: a for h, a in self._senders.items() if h in hashes}
            try:
                block = self._mine([p.tx for p in taken], timestamp=timestamp, coinbase=coinbase,
                                   uncles=uncles, withdrawals=withdrawals, extra_data=extra_data,
                                   deployments=deployments, senders=senders,
                                   origins=[p.sender for p in taken])
            except BaseException:
                # A block that cannot be built takes what it was given out of the pool.
                for pooled in taken:
                    self.pool.drop(pooled.hash)
                raise
            finally:
                for tx_hash in hashes:
                    self._deployments.pop(tx_hash, None)
                    self._senders.pop(tx_hash, None)
                self._nonces.clear()
            return block

    @property
    def pending(self) -> tuple[Transaction, ...]:
        """The transactions the next block takes, in its order (see :meth:`TxPool.ordered`)."""
        with self._lock:
            return tuple(p.tx for p in self._next_transactions())

    def _next_transactions(self, timestamp: int | None = None) -> list[Pooled]:
        """The pool's transactions in the next block's order, while they fit in its gas."""
        head = self.head
        when = self._next_time(head.timestamp) if timestamp is None else timestamp
        gas_left = self.next_gas_limit()
        taken: list[Pooled] = []
        skipped: set[Address] = set()
        for pooled in self.pool.ordered(self._next_base_fee(head, when)):
            if pooled.sender in skipped:
                continue
            if pooled.tx.gas > gas_left and taken:
                skipped.add(pooled.sender)  # (it waits for the next block)
                continue
            gas_left -= pooled.tx.gas
            taken.append(pooled)
        return taken

    def _mine(
        self,
        transactions: Sequence[Transaction],
        *,
        timestamp: int | None = None,
        coinbase: Address | None = None,
        uncles: Sequence[Header] = (),
        withdrawals: Sequence[tuple[Address, int]] = (),
        extra_data: bytes = b"",
        deployments: Mapping[Hash32, Address] | None = None,
        edits: Sequence[StateEdit] = (),
        senders: Mapping[Hash32, Address] | None = None,
        origins: Sequence[Address] = (),
    ) -> Block:
        parent = self._evm_header(self.head.hash)
        when = self._next_time(parent.timestamp) if timestamp is None else timestamp
        if when <= parent.timestamp:
            raise DevChainError(f"block timestamp {when} is not after its parent's "
                                f"({parent.timestamp})")
        number = parent.block_number + 1
        rules = self.config.rules(number, when)
        if uncles and rules.proof_of_stake:
            raise DevChainError("there are no uncles after the merge")
        if withdrawals and not rules.withdrawals:
            raise DevChainError("there are no withdrawals before Shanghai")
        paid = self._withdrawals(withdrawals) if rules.withdrawals else None
        with self._recording() as writes:
            pre_state = self._apply_edits(parent, edits) if edits else None
            block, vm = self._execute(parent, when, coinbase or self.coinbase, extra_data,
                                      transactions, uncles, paid, pre_state, senders)
        for tx_hash, address in (deployments or {}).items():
            if not vm.state.get_code(EvmAddress(address)):
                raise DevChainError(
                    f"the deployment of 0x{address.hex()} (transaction 0x{tx_hash.hex()}) "
                    "failed: the constructor reverted, ran out of gas or returned no code")
        # A gas limit or base fee a test set breaks the header rules on purpose: such a
        # block is stored as executed, without the header check against its parent.
        overridden = self._header_overridden(parent, rules)
        if self.revalidate and not overridden:
            self.importer.import_block(rlp.encode(block), parent_state_root=pre_state,
                                       senders=senders)
        else:
            self.importer.store_executed(rlp.encode(block), block, origins,
                                         check_header=not overridden)
        self._next_base_fee_override = None
        if self._overlay is not None and writes is not None:
            self._overlay.commit(writes, number, bytes(block.header.state_root))
        # The VM's state is now the new head's: the next reads take it instead of building one.
        self._head_states.put(Hash32(block.header.hash), vm.state)
        if paid:
            self._withdrawal_index = paid[-1].index + 1
        if self.clock is None:
            self._time_offset = 0
        elif self._next_timestamp is not None:  # the clock runs on from the time it was set
            self._time_offset = self._next_timestamp - int(self.clock())
        self._next_timestamp = None
        mined = self.block(number)
        for hook in self.after_block:
            hook(mined)
        return mined

    def _recording(self) -> AbstractContextManager[Writes | None]:
        """On a forked chain, what the block being built writes (see :mod:`.fork.overlay`)."""
        return self._overlay.recording() if self._overlay is not None else nullcontext()

    def _header_overridden(self, parent: BlockHeaderAPI, rules: Any) -> bool:
        """Whether the next block's gas limit or base fee is one a test set."""
        return ((self._gas_limit is not None and self._gas_limit != parent.gas_limit)
                or (self._next_base_fee_override is not None and bool(rules.base_fee)))

    def mine_until(self, number: int) -> Block:
        """Mine blocks (the first takes what is pending) until the head is at ``number``; the head."""
        block = self.block(self.head.number)
        while block.number < number:
            block = self.mine()
        return block

    def mine_until_fork(self, fork: str) -> Block:
        """Mine until the next block would be in ``fork`` (or a later one); the head."""
        while not FORK_BY_NAME[self.next_fork()].at_least(fork):
            self.mine()
        return self.block(self.head.number)

    def sibling(self, number: int | None = None, *, coinbase: Address | None = None) -> Header:
        """A new valid, non-canonical header at ``number`` (the head's by default): an uncle for one
        of the next six blocks. Proof-of-work forks only."""
        with self._lock:
            number = self.head.number if number is None else number
            if number < 1:
                raise DevChainError("the genesis block has no siblings")
            parent_hash = self.backend.canonical_hash(number - 1)
            if parent_hash is None:
                raise DevChainError(f"no block {number - 1} to be the sibling's parent")
            parent = self._evm_header(parent_hash)
            when = parent.timestamp + self.block_time
            if self.config.rules(number, when).proof_of_stake:
                raise DevChainError("there are no uncles after the merge")
            self._siblings += 1
            block, _ = self._execute(
                parent, when, coinbase or b"\x0c" + self._siblings.to_bytes(19, "big"),
                b"sibling %d" % self._siblings, (), (), None, None, canonical=False,
            )
            return decode_header(rlp.encode(block.header))

    def _withdrawals(self, pairs: Sequence[tuple[Address, int]]) -> tuple[Withdrawal, ...]:
        """Withdrawals numbered on from the chain's last one (validator indexes made up)."""
        if self._withdrawal_index is None:
            self._withdrawal_index = self._last_withdrawal_index() + 1
        first = self._withdrawal_index
        return tuple(
            Withdrawal(index=index, validator_index=index % 64, address=address, amount=amount)
            for index, (address, amount) in enumerate(pairs, start=first)
        )

    def _last_withdrawal_index(self) -> int:
        """Where a chain reopened from a store left off; -1 when it has no withdrawals."""
        number = self.head.number
        while number >= (self.backend.pointer("earliest") or 0):
            block = self.block(number)
            if block.withdrawals is None:
                return -1
            if block.withdrawals:
                return block.withdrawals[-1].index
            number -= 1
        return -1

    def _execute(
        self,
        parent: BlockHeaderAPI,
        timestamp: int,
        coinbase: Address,
        extra_data: bytes,
        transactions: Sequence[Transaction],
        uncles: Sequence[Header],
        withdrawals: Sequence[Withdrawal] | None,
        pre_state: bytes | None,
        senders: Mapping[Hash32, Address] | None = None,
        canonical: bool = True,
        scratch: bool = False,
    ) -> tuple[BlockAPI, VirtualMachineAPI]:
        """A sealed block, executed by py-evm on a VM at the parent (or at ``pre_state``: the parent's
        with test edits), and that VM. Nothing becomes canonical; with ``scratch`` nothing is stored."""
        number = parent.block_number + 1
        vm_class = self.config.vm_class(number, timestamp)
        rules = self.config.rules(number, timestamp)
        if canonical and self._header_overridden(parent, rules):
            vm_class = _set_by_test(vm_class)
        params: dict[str, Any] = {
            "timestamp": timestamp, "coinbase": coinbase, "extra_data": extra_data,
            # Zero seals before the merge (py-evm's default nonce is not); a made-up beacon after.
            "nonce": ZERO_NONCE,
            "mix_hash": keccak(b"prevrandao %d" % number) if rules.proof_of_stake
            else ZERO_HASH,
        }
        if not (rules.base_fee and getattr(parent, "base_fee_per_gas", None) is None):
            params["gas_limit"] = parent.gas_limit  # London's first block doubles it instead
        if self._gas_limit is not None and canonical:
            params["gas_limit"] = self._gas_limit
        if rules.beacon_root:
            params["parent_beacon_block_root"] = keccak(b"beacon root %d" % number)
        start = vm_class.create_header_from_parent(parent, **params)
        if self._next_base_fee_override is not None and rules.base_fee and canonical:
            start = start.copy(base_fee_per_gas=self._next_base_fee_override)
        header = decode_header(rlp.encode(start))
        template = rlp.decode(
            rlp.encode(block_item(header, transactions, uncles, withdrawals)),
            sedes=vm_class.get_block_class(),
        )
        if senders:
            spoof_senders(template.transactions, senders)
        # The VM starts from the template's own header (import_block sets its fields anyway).
        if pre_state is not None:
            start = start.copy(state_root=pre_state)
        vm = self._vm(vm_class, start, scratch=scratch)
        try:
            imported = vm.import_block(template)
            self._preimages.record_witness(imported.meta_witness)
            self._preimages.record_system_writes(number, timestamp)
            return imported.block, vm
        except (ValidationError, ValueError) as exc:
            raise DevChainError(f"block {number} ({rules.name}) cannot be built: {exc}") from exc

    def edit(self, *edits: StateEdit) -> Block:
        """Apply account edits in a new block of their own; pending transactions stay pending."""
        with self._lock:
            for change in edits:
                self._preimages.add(change.address, (slot for slot, _ in change.storage))
            return self._mine((), edits=edits)

    def _apply_edits(self, parent: BlockHeaderAPI, edits: Sequence[StateEdit]) -> bytes:
        """The root of the parent's state with ``edits`` made; its nodes are stored."""
        vm = self._vm(self.config.vm_class(parent.block_number, parent.timestamp), parent)
        state = vm.state
        for edit in edits:
            address = EvmAddress(edit.address)
            set_account(state, address, balance=edit.balance, nonce=edit.nonce, code=edit.code)
            for slot, value in edit.storage:
                state.set_storage(address, slot, value)
            state.touch_account(address)
        state.persist()
        return bytes(state.state_root)


@cache
def _set_by_test(vm_class: type[VirtualMachineAPI]) -> type[VirtualMachineAPI]:
    """``vm_class`` without the header's gas limit and base fee rules (for values a test set)."""

    def validate_gas(cls: Any, header: BlockHeaderAPI, parent_header: BlockHeaderAPI) -> None:
        return None

    return type(vm_class.__name__, (vm_class,), {"validate_gas": classmethod(validate_gas)})
