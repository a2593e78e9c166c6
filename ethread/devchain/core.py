"""What every part of :class:`~.builder.DevChain` stands on: the chain's state, its clock and its reads."""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eth.abc import BlockHeaderAPI, ChainDatabaseAPI, VirtualMachineAPI
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash

from ..backend import WritableBackend
from ..chain.genesis import parse_genesis
from ..chain.importer import ChainImporter
from ..errors import EthreadError
from ..evm.block_vm import scratch_chaindb, vm_at
from ..forks import ChainConfig
from ..forks.base_fee import next_base_fee
from ..forks.validity import SenderAccount
from ..lru import LRU
from ..models import Address, Block, Hash32, Header, Receipt
from .fork.evm import fork_chain_config
from .fork.history import ForkHistory
from .fork.overlay import ForkOverlay
from .fork.source import ForkSource
from .genesis import DEFAULT_FORKS, DEV_BALANCE, DEV_CHAIN_ID, ZERO_ADDRESS, ForkSchedule, genesis_document
from .inputs import as_address, as_bytes
from .pending_state import PendingView
from .signing import DERIVATION_PATH, TEST_MNEMONIC, DevAccount, dev_accounts
from .state_file import Preimages
from .txpool import DEV_LIMITS, PoolState, TxPool

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

    from .served_pool import ServedPool

HEAD_STATES = 4
"""Recent heads whose py-evm state a dev chain keeps for its reads."""


class DevChainError(EthreadError):
    """The dev chain was asked for something its fork or state does not allow."""


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What a read-only call returned: output (revert data when it reverted) and gas used."""

    output: bytes
    success: bool
    gas_used: int


@dataclass(frozen=True, slots=True)
class StateEdit:
    """A change to an account outside any transaction (anvil_setBalance and friends); None: kept."""

    address: Address
    balance: int | None = None
    nonce: int | None = None
    code: bytes | None = None
    storage: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class SavedChain:
    """The chain as :meth:`~.snapshots.Snapshots.snapshot` saw it, to revert to."""

    head: int
    pool: PoolState
    nonces: tuple[tuple[Address, int], ...]
    deployments: tuple[tuple[Hash32, Address], ...]
    senders: tuple[tuple[Hash32, Address], ...]
    withdrawal_index: int | None
    time_offset: int
    next_timestamp: int | None


class ChainCore:
    """A dev chain's state, clock and reads, which the other parts of :class:`~.builder.DevChain` extend."""

    def __init__(
        self,
        backend: WritableBackend,
        *,
        chain_id: int = DEV_CHAIN_ID,
        forks: ForkSchedule = DEFAULT_FORKS,
        accounts: int = 10,
        mnemonic: str = TEST_MNEMONIC,
        derivation_path: str = DERIVATION_PATH,
        balance: int = DEV_BALANCE,
        block_time: int = 10,
        genesis_timestamp: int = 0,
        gas_limit: int = 30_000_000,
        alloc: Mapping[str, Mapping[str, Any]] | None = None,
        coinbase: Address = b"\xc0" + b"\x00" * 18 + b"\x01",
        automine: bool = True,
        revalidate: bool = False,
        fork: ForkSource | None = None,
        base_fee: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if block_time < 1:
            raise ValueError("block_time must be at least one second")
        if fork is not None:
            chain_id = fork.point.chain_id
        self.backend = backend
        self.chain_id = chain_id
        self.block_time = block_time
        self.coinbase = as_address(coinbase, "coinbase")
        self.automine = automine
        self.revalidate = revalidate
        self.clock = clock
        """A wall clock (as ``time.time``) block times follow, a second apart at least, that
        ``increase_time`` moves for good (None: each comes ``block_time`` after its parent)."""
        self.accounts = dev_accounts(accounts, mnemonic, derivation_path)
        self.genesis = genesis_document(
            chain_id=chain_id, forks=forks, accounts=self.accounts, balance=balance,
            timestamp=genesis_timestamp, gas_limit=gas_limit, alloc=alloc, base_fee=base_fee,
        )
        self._overlay: ForkOverlay | None = None
        self._history: ForkHistory | None = None
        if fork is None:
            parsed = parse_genesis(self.genesis)
            self.config: ChainConfig = parsed.config
            self.importer = ChainImporter(backend, parsed, verify_seals=False)
        else:
            self._overlay = ForkOverlay(fork)
            self._history = ForkHistory(fork)
            self.config = fork_chain_config(chain_id, forks, self._overlay)
            self.importer = ChainImporter.from_checkpoint(
                backend, self.config, fork.point.header, fork.ancestors())
        self._chaindb: ChainDatabaseAPI = backend.evm_database()
        self.pool = TxPool(_PoolView(self), DEV_LIMITS)
        """The pending transactions (see :mod:`.txpool`)."""
        self._nonces: dict[Address, int] = {}
        """Nonces pending authorizations will have taken."""
        self._deployments: dict[Hash32, Address] = {}
        self._siblings = 0
        self._withdrawal_index: int | None = None
        self._time_offset = 0
        self._next_timestamp: int | None = None
        self._snapshots: dict[int, SavedChain] = {}
        self._snapshot_ids = 0
        self._impersonated: set[Address] = set()
        self._head_states: LRU[Hash32, Any] = LRU(HEAD_STATES)
        self._senders: dict[Hash32, Address] = {}
        """Pending transactions of impersonated accounts: hash to sender."""
        self._pending_blocks: LRU[tuple[Hash32, tuple[Hash32, ...], int], PendingView] = LRU(4)
        """Pending blocks built (:meth:`pending_block`), by head, transactions and time."""
        self._preimages = Preimages()
        """The addresses and slots the chain has touched (for dump_state)."""
        self._preimages.record_alloc(self.genesis["alloc"])
        self._gas_limit: int | None = None
        """The gas limit evm_setBlockGasLimit asked for (None: each block keeps its parent's)."""
        self._next_base_fee_override: int | None = None
        self._lock = threading.RLock()
        self.after_block: list[Callable[[Block], None]] = []
        """Called with each block mined once stored (as anvil's ``--steps-tracing`` records traces)."""
        self._served_pool: ServedPool | None = None
        self._funding: tuple[StateEdit, ...] = ()
        if fork is not None:
            # The dev accounts get their balance as anvil gives it on a fork.
            self._funding = tuple(StateEdit(account.address, balance=balance)
                                  for account in self.accounts)
            self.edit(*self._funding)

    @abstractmethod
    def edit(self, *edits: StateEdit) -> Block:
        """Apply account edits in a new block of their own."""

    @property
    def head(self) -> Header:
        """The header of the latest block."""
        number = self.backend.pointer("latest")
        block_hash = self.backend.canonical_hash(number) if number is not None else None
        header = self.backend.header_by_hash(block_hash) if block_hash is not None else None
        if header is None:
            raise DevChainError("the backend holds no chain")
        return header

    def block(self, number: int) -> Block:
        """Canonical block ``number``; :class:`DevChainError` if the chain does not hold it."""
        block_hash = self.backend.canonical_hash(number)
        block = self.backend.block_by_hash(block_hash) if block_hash is not None else None
        if block is None:
            raise DevChainError(f"no block {number}")
        return block

    def next_fork(self, timestamp: int | None = None) -> str:
        """The fork the next block will be in (with the default timestamp unless given)."""
        head = self.head
        when = self._next_time(head.timestamp) if timestamp is None else timestamp
        return self.config.fork_at(head.number + 1, when)

    def receipt(self, tx_hash: Hash32 | str) -> Receipt | None:
        """The receipt of a mined transaction, or None if it is not in the chain."""
        location = self.backend.transaction_location(as_bytes(tx_hash, "tx_hash", 32))
        if location is None:
            return None
        receipts = self.backend.receipts(location[0])
        return receipts[location[1]] if receipts is not None else None

    @property
    def local_accounts(self) -> tuple[LocalAccount, ...]:
        """The dev accounts as eth-account ``LocalAccount`` objects, in the same order."""
        return tuple(account.local_account for account in self.accounts)

    def account(self, address: Address | str) -> DevAccount | None:
        """The dev account with this address, if it is one."""
        wanted = as_address(address)
        return next((a for a in self.accounts if a.address == wanted), None)

    def _rewind(self, number: int, needs: str) -> None:
        """Drop the blocks above ``number`` (and a fork's record of what they wrote)."""
        rewind = getattr(self.backend, "rewind", None)
        if rewind is None:
            raise DevChainError(f"{type(self.backend).__name__} cannot drop blocks: "
                                f"{needs} a backend with rewind()")
        if self.head.number > number:
            rewind(number)
        if self._overlay is not None:
            self._overlay.rewind(number)

    def _forget_pending(self) -> None:
        """Empty the pool and what the chain keeps of its transactions."""
        self.pool.clear()
        self._nonces.clear()
        self._deployments.clear()
        self._senders.clear()

    def _next_time(self, parent_timestamp: int) -> int:
        if self._next_timestamp is not None:
            return self._next_timestamp
        if self.clock is not None:
            return max(parent_timestamp + 1, int(self.clock()) + self._time_offset)
        return parent_timestamp + self.block_time + self._time_offset

    def next_gas_limit(self) -> int:
        """The gas limit of the next block."""
        return self._gas_limit if self._gas_limit is not None else self.head.gas_limit

    def next_base_fee(self) -> int | None:
        """The base fee of the next block (None before London)."""
        head = self.head
        return self._next_base_fee(head, self._next_time(head.timestamp))

    def _next_base_fee(self, head: Header, when: int) -> int | None:
        if not self.config.rules(head.number + 1, when).base_fee:
            return None
        if self._next_base_fee_override is not None:
            return self._next_base_fee_override
        return next_base_fee(self.config, head)

    def impersonate(self, address: Address | str) -> None:
        """Let :meth:`submit` (and eth_sendTransaction) send from ``address`` without its key."""
        with self._lock:
            self._impersonated.add(as_address(address))

    def stop_impersonating(self, address: Address | str) -> None:
        """Require signatures from ``address`` again."""
        with self._lock:
            self._impersonated.discard(as_address(address))

    def is_impersonated(self, address: Address) -> bool:
        """Whether transactions from ``address`` are accepted without a signature."""
        return address in self._impersonated

    def pool_account(self, address: Address) -> SenderAccount:
        """An account at the head as the pool sees it: an impersonated one without code (as in anvil)."""
        state = self._head_state()
        evm_address = EvmAddress(address)
        code = b"" if address in self._impersonated else bytes(state.get_code(evm_address))
        return SenderAccount(int(state.get_nonce(evm_address)), int(state.get_balance(evm_address)),
                            code)

    def _head_state(self) -> Any:
        """The head's state for reading, kept for a few recent heads (a py-evm state costs more to
        build than a send's reads of it, and tests revert to the same head again and again)."""
        head_hash = self.head.hash
        state = self._head_states.get(head_hash)
        if state is None:
            state = self._vm_at(None).state
            self._head_states.put(head_hash, state)
        return state

    def _vm(self, vm_class: type[VirtualMachineAPI], header: BlockHeaderAPI, *,
            scratch: bool = False) -> VirtualMachineAPI:
        chaindb = scratch_chaindb(self._chaindb) if scratch else self._chaindb
        return vm_at(vm_class, header, chaindb, self.chain_id)  # type: ignore[no-any-return]

    def _evm_header(self, block_hash: Hash32) -> BlockHeaderAPI:
        return self._chaindb.get_block_header_by_hash(EvmHash(block_hash))

    def _vm_at(self, number: int | None) -> VirtualMachineAPI:
        """A VM whose state is the state after block ``number`` (the head's by default)."""
        block_hash = self.head.hash if number is None else self.backend.canonical_hash(number)
        if block_hash is None:
            raise DevChainError(f"no block {number}")
        header = self._evm_header(block_hash)
        return self._vm(self.config.vm_class(header.block_number, header.timestamp), header)

    def _state(self, at: int | None) -> Any:
        return self._head_state() if at is None else self._vm_at(at).state

    def balance(self, address: Address | str, at: int | None = None) -> int:
        """The balance in wei of ``address`` at the head, or after block ``at``."""
        return int(self._state(at).get_balance(EvmAddress(as_address(address))))

    def nonce(self, address: Address | str, at: int | None = None) -> int:
        """The nonce of ``address`` at the head, or after block ``at``."""
        return int(self._state(at).get_nonce(EvmAddress(as_address(address))))

    def code(self, address: Address | str, at: int | None = None) -> bytes:
        """The code of ``address`` at the head, or after block ``at``."""
        return bytes(self._state(at).get_code(EvmAddress(as_address(address))))

    def storage(self, address: Address | str, slot: int, at: int | None = None) -> int:
        """The value of storage slot ``slot`` of ``address`` at the head, or after block ``at``."""
        return int(self._state(at).get_storage(EvmAddress(as_address(address)), slot))

    def call(
        self,
        to: Address | str,
        data: bytes | str = b"",
        *,
        sender: Address | str = ZERO_ADDRESS,
        value: int = 0,
        gas: int = 30_000_000,
        at: int | None = None,
    ) -> CallOutcome:
        """Run a message call on the state after block ``at`` (the head by default) and forget its
        effects (a test's check; eth_call is :mod:`ethread.methods`')."""
        target = as_address(to, "to")
        origin = as_address(sender, "sender")
        payload = as_bytes(data, "data")
        vm = self._vm_at(at)
        code_address = EvmAddress(target)
        code = vm.state.get_code(code_address)
        if code[:3] == b"\xef\x01\x00" and len(code) == 23:  # EIP-7702 delegation
            code_address = EvmAddress(code[3:])
            code = vm.state.get_code(code_address)
        computation = vm.execute_bytecode(
            origin=EvmAddress(origin), gas_price=0, gas=gas, to=EvmAddress(target),
            sender=EvmAddress(origin), value=value, data=payload, code=code,
            code_address=code_address,
        )
        return CallOutcome(output=bytes(computation.output), success=computation.is_success,
                           gas_used=computation.get_gas_used())


class _PoolView:
    """A dev chain as its pool's chain (:class:`~.txpool.PoolChain`); it takes no lock, as the chain
    calls its pool under its own lock."""

    def __init__(self, chain: ChainCore) -> None:
        self._chain = chain

    @property
    def config(self) -> ChainConfig:
        return self._chain.config

    def head(self) -> Header:
        return self._chain.head

    def account(self, address: Address) -> SenderAccount:
        return self._chain.pool_account(address)
