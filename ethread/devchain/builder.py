"""A chain built in code: for tests (a test chain for web3.py suites and the pytest plugin),
the project's own tests and the ``ethread serve`` demo.

Every block the dev chain makes is assembled and executed with py-evm on a VM at its parent
(which fills in state root, receipts root, bloom, gas used, withdrawals root, blob gas and
requests hash) and stored through :class:`ChainImporter`: its header is checked against its
parent, its receipts are read back from the execution and stored with the block. With
``revalidate=True`` (the demo chain and the project's tests use it) the block goes the whole
import path instead: RLP-encoded, handed as bytes to :meth:`ChainImporter.import_block`,
decoded, executed again and validated like any block of a real chain. Blocks before the
merge carry zero proof-of-work seals, which is why the importer runs with
``verify_seals=False``; everything else is checked.

Related modules: :mod:`.contracts` (hand-assembled contracts), :mod:`.signing` (dev accounts,
signatures) and :mod:`.demo` (the demo chain ``ethread serve`` shows).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import rlp
from eth._utils.address import generate_contract_address
from eth.abc import BlockAPI, BlockHeaderAPI, ChainDatabaseAPI, VirtualMachineAPI
from eth.consensus.context import ConsensusContext
from eth.db.atomic import AtomicDB
from eth.db.batch import BatchDB
from eth.db.chain import ChainDB
from eth.vm.chain_context import ChainContext
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash
from eth_utils import ValidationError, keccak, to_checksum_address

from ..backend import WritableBackend
from ..chain.genesis import parse_genesis
from ..chain.importer import ChainImporter, spoof_senders
from ..errors import EthreadError, TransactionRejected
from ..forks import BLOCK_FORKS, FORK_BY_NAME, FORK_ORDER, FORKS, TIME_FORKS, ChainConfig
from ..forks.base_fee import next_base_fee
from ..lru import LRU
from ..methods.overrides import set_account
from ..methods.resolve import require_header
from ..models import (
    AccessListEntry,
    AccessListTransaction,
    Address,
    Authorization,
    BlobTransaction,
    Block,
    BlockRef,
    CallRequest,
    DynamicFeeTransaction,
    Hash32,
    Header,
    LegacyTransaction,
    Receipt,
    SetCodeTransaction,
    Transaction,
    Withdrawal,
)
from ..rlpcodec.blocks import block_item
from ..rlpcodec.headers import decode_header
from . import contracts
from .fork.cache import ForkCache
from .fork.evm import fork_chain_config
from .fork.history import ForkHistory
from .fork.overlay import ForkOverlay, Writes
from .fork.remote import RemoteLimits
from .fork.source import BLANK_ROOT, ForkPoint, ForkSource, ProofUnavailable
from .inputs import as_address, as_bytes, as_int, as_optional_address
from .pending_state import PendingView
from .pool import PoolView, admit, decode_raw, evm_transaction, recover_sender
from .signing import (
    DERIVATION_PATH,
    TEST_MNEMONIC,
    DevAccount,
    dev_accounts,
    sign_authorization,
    sign_transaction,
)
from .state_file import Preimages, encode_state, parse_state, state_document
from .txpool import DEV_LIMITS, AccountState, Pooled, PoolState, TxPool

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount

    from .served_pool import ServedPool

DEV_CHAIN_ID = 1337
GWEI = 10**9
ETHER = 10**18
DEV_BALANCE = 1_000_000 * ETHER
ZERO_ADDRESS = b"\x00" * 20
ZERO_HASH = b"\x00" * 32
ZERO_NONCE = b"\x00" * 8

_GENESIS_KEY = {name: key for key, name in BLOCK_FORKS + TIME_FORKS}

TRANSFER_GAS = 21_000
CONTRACT_GAS = 1_000_000
HEAD_STATES = 4
"""Recent heads whose py-evm state a dev chain keeps for its reads."""


class DevChainError(EthreadError):
    """The dev chain was asked for something its fork or state does not allow."""


# --------------------------------------------------------------------------------------------
# Fork schedule


@dataclass(frozen=True, slots=True)
class ForkSchedule:
    """When each fork activates: by block number up to the merge (``paris``), by timestamp
    for shanghai, cancun and prague. Forks left out never activate (Frontier always has)."""

    blocks: tuple[tuple[str, int], ...] = ()
    times: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        block_names = {name for _, name in BLOCK_FORKS}
        time_names = {name for _, name in TIME_FORKS}
        if any(name not in block_names for name, _ in self.blocks):
            raise ValueError(f"block forks are among {sorted(block_names)}")
        if any(name not in time_names for name, _ in self.times):
            raise ValueError(f"timestamp forks are among {sorted(time_names)}")
        if self.times and "paris" not in dict(self.blocks):
            raise ValueError("shanghai and later need the merge (paris) first")
        for schedule in (self.blocks, self.times):
            ordered = sorted(schedule, key=lambda f: FORK_ORDER.index(f[0]))
            if [at for _, at in ordered] != sorted(at for _, at in ordered):
                raise ValueError(f"forks must activate in order: {schedule}")

    @classmethod
    def from_genesis(cls, fork: str) -> ForkSchedule:
        """Every fork up to and including ``fork`` active from block 0."""
        upto = FORK_ORDER[1:FORK_ORDER.index(fork) + 1]
        block_names = {name for _, name in BLOCK_FORKS}
        return cls(
            blocks=tuple((name, 0) for name in upto if name in block_names),
            times=tuple((name, 0) for name in upto if name not in block_names),
        )

    def genesis_config(self, chain_id: int) -> dict[str, Any]:
        """The geth-style ``config`` object of a genesis file with this schedule."""
        config: dict[str, Any] = {"chainId": chain_id}
        for name, at in (*self.blocks, *self.times):
            config[_GENESIS_KEY[name]] = at
        if "spurious_dragon" in dict(self.blocks):  # geth names EIP-155 on its own
            config["eip155Block"] = dict(self.blocks)["spurious_dragon"]
        if "paris" in dict(self.blocks):
            config["terminalTotalDifficultyPassed"] = True
        return config


RPC_COMPAT_FORKS = ForkSchedule(
    blocks=(
        ("homestead", 0), ("tangerine_whistle", 3), ("spurious_dragon", 6), ("byzantium", 9),
        ("constantinople", 12), ("petersburg", 15), ("istanbul", 18), ("muir_glacier", 21),
        ("berlin", 24), ("london", 27), ("arrow_glacier", 30), ("gray_glacier", 33),
        ("paris", 36),
    ),
    times=(("shanghai", 390), ("cancun", 420), ("prague", 450)),
)
"""The rpc-compat chain's schedule (the demo chain's): with the default 10-second blocks from
timestamp 0, Shanghai starts at block 39, Cancun at 42 and Prague at 45."""

PRAGUE_FORKS = ForkSchedule.from_genesis("prague")
"""Everything active from genesis: the fastest chain to build for post-merge tests."""

OSAKA_FORKS = ForkSchedule.from_genesis("osaka")
"""Every fork through Osaka active from genesis."""

DEFAULT_FORKS = OSAKA_FORKS
"""A dev chain's schedule unless asked otherwise: the newest fork mainnet runs, from genesis,
so that what today's compilers emit (PUSH0, MCOPY, transient storage, CLZ) runs and
transactions meet today's bounds (EIP-7825's gas cap)."""


# --------------------------------------------------------------------------------------------
# Genesis


def system_contracts() -> dict[str, dict[str, str]]:
    """The beacon-roots (EIP-4788) and block-history (EIP-2935) contracts, which py-evm
    updates on Cancun and Prague blocks when (and only when) they hold exactly this code."""
    from eth.vm.forks.cancun.constants import BEACON_ROOTS_ADDRESS, BEACON_ROOTS_CONTRACT_CODE
    from eth.vm.forks.prague.constants import (
        HISTORY_STORAGE_ADDRESS,
        HISTORY_STORAGE_CONTRACT_CODE,
    )

    return {
        "0x" + bytes(address).hex(): {"balance": "0x0", "nonce": "0x1", "code": "0x" + code.hex()}
        for address, code in (
            (BEACON_ROOTS_ADDRESS, BEACON_ROOTS_CONTRACT_CODE),
            (HISTORY_STORAGE_ADDRESS, HISTORY_STORAGE_CONTRACT_CODE),
        )
    }


def genesis_document(
    *,
    chain_id: int = DEV_CHAIN_ID,
    forks: ForkSchedule = DEFAULT_FORKS,
    accounts: Sequence[DevAccount] = (),
    balance: int = DEV_BALANCE,
    timestamp: int = 0,
    gas_limit: int = 30_000_000,
    extra_data: bytes = b"ethread dev",
    alloc: Mapping[str, Mapping[str, Any]] | None = None,
    base_fee: int | None = None,
) -> dict[str, Any]:
    """A geth-style genesis.json document (as a dict): ``accounts`` funded with ``balance``,
    the system contracts, and ``alloc`` (geth's alloc form, hex strings) on top. ``base_fee``:
    the genesis block's base fee from London on (None: the EIP-1559 initial 1 gwei)."""
    merged = ChainConfig.from_genesis_config(forks.genesis_config(chain_id)).fork_at(0, timestamp)
    document_alloc: dict[str, Any] = system_contracts()
    for account in accounts:
        document_alloc["0x" + account.address.hex()] = {"balance": hex(balance)}
    document_alloc.update(alloc or {})
    fee = {} if base_fee is None else {"baseFeePerGas": hex(base_fee)}
    return {
        **fee,
        "config": forks.genesis_config(chain_id),
        "nonce": "0x0",
        "timestamp": hex(timestamp),
        "extraData": "0x" + extra_data.hex(),
        "gasLimit": hex(gas_limit),
        "difficulty": "0x0" if FORK_BY_NAME[merged].proof_of_stake else hex(0x20000),
        "mixHash": "0x" + ZERO_HASH.hex(),
        "coinbase": "0x" + ZERO_ADDRESS.hex(),
        "alloc": document_alloc,
    }


# --------------------------------------------------------------------------------------------
# The chain


TxKind: TypeAlias = Literal["legacy", "access-list", "dynamic-fee", "blob", "set-code"]
KIND_TYPE: dict[str, int] = {"legacy": 0, "access-list": 1, "dynamic-fee": 2, "blob": 3,
                             "set-code": 4}
"""The transaction type number of each kind."""
KIND_SINCE: dict[str, str] = {
    kind: next(f.name for f in FORKS if tx_type in f.transaction_types)
    for kind, tx_type in KIND_TYPE.items()
}
"""The first fork that accepts each transaction kind (read from the fork table)."""


@dataclass(frozen=True, slots=True)
class Fees:
    """The fee fields of a transaction; each kind uses those it has. The defaults clear any
    base fee a dev chain reaches: base fees start at 1 gwei (London) and fall on blocks this
    empty, blob base fees start at 1 wei."""

    gas_price: int = 3 * GWEI
    max_fee_per_gas: int = 30 * GWEI
    max_priority_fee_per_gas: int = 1 * GWEI
    max_fee_per_blob_gas: int = 1 * GWEI


DEFAULT_FEES = Fees()


@dataclass(frozen=True, slots=True)
class _Draft:
    """A transaction's fields before its kind and fees are applied."""

    nonce: int
    to: Address | None
    value: int
    data: bytes
    gas: int
    access_list: tuple[AccessListEntry, ...]
    blob_hashes: tuple[Hash32, ...]
    authorizations: tuple[Authorization, ...]

    def unsigned(self, kind: TxKind, chain_id: int, fees: Fees) -> Transaction:
        """The transaction of ``kind``, with an empty signature."""
        if kind == "legacy":
            return LegacyTransaction(
                nonce=self.nonce, gas_price=fees.gas_price, gas=self.gas, to=self.to,
                value=self.value, data=self.data, v=0, r=0, s=0,
            )
        if kind == "access-list":
            return AccessListTransaction(
                chain_id=chain_id, nonce=self.nonce, gas_price=fees.gas_price, gas=self.gas,
                to=self.to, value=self.value, data=self.data, access_list=self.access_list,
                y_parity=0, r=0, s=0,
            )
        # The EIP-1559 fields, which the blob (EIP-4844) and set-code (EIP-7702) kinds keep.
        fee_market: dict[str, Any] = {
            "chain_id": chain_id, "nonce": self.nonce,
            "max_priority_fee_per_gas": fees.max_priority_fee_per_gas,
            "max_fee_per_gas": fees.max_fee_per_gas, "gas": self.gas, "to": self.to,
            "value": self.value, "data": self.data, "access_list": self.access_list,
            "y_parity": 0, "r": 0, "s": 0,
        }
        if kind == "dynamic-fee":
            return DynamicFeeTransaction(**fee_market)
        if self.to is None:
            raise DevChainError(f"a {kind} transaction cannot create a contract")
        if kind == "blob":
            return BlobTransaction(**fee_market, max_fee_per_blob_gas=fees.max_fee_per_blob_gas,
                                   blob_versioned_hashes=self.blob_hashes)
        return SetCodeTransaction(**fee_market, authorization_list=self.authorizations)



@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What a read-only call returned: output (revert data when it reverted) and gas used."""

    output: bytes
    success: bool
    gas_used: int


@dataclass(frozen=True, slots=True)
class StateEdit:
    """One change a test makes to an account outside any transaction (anvil_setBalance and
    friends). Fields left None are kept."""

    address: Address
    balance: int | None = None
    nonce: int | None = None
    code: bytes | None = None
    storage: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class _Snapshot:
    head: int
    pool: PoolState
    nonces: tuple[tuple[Address, int], ...]
    deployments: tuple[tuple[Hash32, Address], ...]
    senders: tuple[tuple[Hash32, Address], ...]
    withdrawal_index: int | None
    time_offset: int
    next_timestamp: int | None


class DevChain:
    """A chain grown block by block in code, on top of a writable backend.

    Transactions sent in code wait in the chain's :attr:`pool` (:meth:`send`, :meth:`deploy`,
    :meth:`fund`) until :meth:`mine` puts them in the next block (by price, then nonce, while
    they fit in its gas). Nonces, fees and gas are filled in unless given. A transaction is
    checked when it is sent, before it takes a nonce
    (:class:`~ethread.errors.TransactionRejected`); a block that still cannot be built takes
    what it was given out of the pool and raises :class:`DevChainError`.

    Transactions arriving as a node receives them (:meth:`submit`, which JSON-RPC's
    eth_sendTransaction and eth_sendRawTransaction use) are mined at once, each in its own
    block, while :attr:`automine` is on (the default); otherwise they go into the same pool by
    geth's rules (replacement at 10% more, future nonces queued) and wait for :meth:`mine`.

    Tests control the chain with :meth:`snapshot` and :meth:`revert` (the backend loses the
    blocks above the snapshot), :meth:`set_balance`, :meth:`set_nonce`, :meth:`set_code`,
    :meth:`set_storage` (each mined as a block whose state carries the change),
    :meth:`increase_time`, :meth:`set_next_block_timestamp` and :meth:`impersonate`.
    """

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
        """A wall clock (as ``time.time``) the next block's time follows, as a node's does: at
        least one second after its parent, and ``increase_time`` moves it for good (None:
        each block comes ``block_time`` after its parent)."""
        self.accounts = dev_accounts(accounts, mnemonic, derivation_path)
        self.genesis = genesis_document(
            chain_id=chain_id, forks=forks, accounts=self.accounts, balance=balance,
            timestamp=genesis_timestamp, gas_limit=gas_limit, alloc=alloc, base_fee=base_fee,
        )
        self._overlay: ForkOverlay | None = None
        self._history: ForkHistory | None = None
        """A forked chain's state under its own writes (see :meth:`fork`)."""
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
        """The pending transactions: the dev chain's own sends and what JSON-RPC sends while
        automine is off, kept as geth's pool keeps them (see :mod:`.txpool`)."""
        self._nonces: dict[Address, int] = {}
        """Nonces pending authorizations will have taken (an authority's next transaction
        comes after them)."""
        self._deployments: dict[Hash32, Address] = {}
        self._siblings = 0
        self._withdrawal_index: int | None = None
        self._time_offset = 0
        self._next_timestamp: int | None = None
        self._snapshots: dict[int, _Snapshot] = {}
        self._snapshot_ids = 0
        self._impersonated: set[Address] = set()
        self._head_states: LRU[Hash32, Any] = LRU(HEAD_STATES)
        """States of recent heads, for reading (see :meth:`_head_state`)."""
        self._senders: dict[Hash32, Address] = {}
        """Pending transactions of impersonated accounts: hash to sender."""
        self._pending_blocks: LRU[tuple[Hash32, tuple[Hash32, ...], int], PendingView] = LRU(4)
        """Pending blocks built (:meth:`pending_block`) with the state they leave, by head,
        transactions and time."""
        self._preimages = Preimages()
        """The addresses and slots the chain has touched, to list its state (dump_state)."""
        self._preimages.record_alloc(self.genesis["alloc"])
        self._gas_limit: int | None = None
        """The gas limit evm_setBlockGasLimit asked for (None: each block keeps its parent's)."""
        self._next_base_fee_override: int | None = None
        """The base fee anvil_setNextBlockBaseFeePerGas asked of the next block."""
        self._lock = threading.RLock()
        self.after_block: list[Callable[[Block], None]] = []
        """Called with each block this chain mines once it is stored (a server recording
        traces as blocks are mined, as anvil's ``--steps-tracing`` does)."""
        self._served_pool: ServedPool | None = None
        self._funding: tuple[StateEdit, ...] = ()
        if fork is not None:
            # The dev accounts get their balance as anvil gives it on a fork (in a block of
            # their own, as every account edit here).
            self._funding = tuple(StateEdit(account.address, balance=balance)
                                  for account in self.accounts)
            self.edit(*self._funding)

    @classmethod
    def fork(
        cls,
        url: str,
        block: int | None = None,
        *,
        backend: WritableBackend,
        cache: str | Path | ForkCache | None = None,
        limits: RemoteLimits | None = None,
        **options: Any,
    ) -> DevChain:
        """A dev chain continuing the chain served at ``url`` from its block ``block`` (its
        latest when None), as ``anvil --fork-url`` does: accounts, code and storage are
        fetched from the node as the chain first reads them, each checked against the block's
        state root with eth_getProof (see :mod:`.fork`), and kept in ``cache`` (an LMDB
        directory, or a :class:`~.fork.cache.ForkCache`; in memory when None). ``backend``
        must be empty: it holds the forked block (its header) and the blocks made on it, the
        first of which funds the dev accounts. ``options`` are :class:`DevChain`'s (the chain
        id is the node's; ``forks`` is the schedule of a chain ethread does not know by its
        id)."""
        from .fork.cache import open_cache
        from .fork.remote import RemoteLimits, RemoteNode

        store = cache if cache is None or isinstance(cache, str | Path) else None
        opened = open_cache(store) if store is not None or cache is None else cache
        remote = RemoteNode(url, limits or RemoteLimits())
        source = ForkSource.connect(remote, block, opened)  # type: ignore[arg-type]
        return cls(backend, fork=source, **options)

    @property
    def forked_from(self) -> ForkSource | None:
        """Where a forked chain's state below its own writes is read from (None if not one)."""
        return self._overlay.source if self._overlay is not None else None

    @property
    def fork_history(self) -> ForkHistory | None:
        """The forked node's blocks, transactions, receipts and logs at and below the fork
        block, checked to be the fork's chain (None if not forked)."""
        return self._history

    @property
    def fork_origin(self) -> ForkPoint | None:
        """The remote node and block a forked chain continues (None if not one)."""
        return self._overlay.source.origin if self._overlay is not None else None

    def fork_proof(self, address: Address, keys: Sequence[bytes],
                   block: BlockRef) -> dict[str, Any] | None:
        """eth_getProof on a forked chain where the local trie is not the word (None: the
        local proof holds, as on any chain). At the forked block or before it: the forked
        node's proof, checked against that block's state root (the chain holds the same
        header). At a local block, of an account the chain has not written (or a slot of it
        the chain has not written, when the account has storage on the forked node):
        :class:`~.fork.source.ProofUnavailable`, naming the account (or slot) and the forked
        block, whose proof does hold it: the local block's state root does not commit to
        it."""
        overlay = self._overlay
        if overlay is None:
            return None
        header = require_header(self.backend, block)
        if header.number <= overlay.fork_number:
            return overlay.source.proof(address, keys, header.number, header.state_root)
        remote = overlay.remote_account(address)
        who = to_checksum_address(address)
        if not overlay.in_local_trie(address, header.number):
            if remote is None:
                return None  # (absent on both sides: the local proof of absence holds)
            raise ProofUnavailable(
                f"account {who} has not been written since the fork at block "
                f"{overlay.fork_number}: its state is the forked node's, which block "
                f"{header.number}'s state root does not commit to; ask for block "
                f"{overlay.fork_number} (or earlier) to have it proven")
        if remote is None or remote.storage_root == BLANK_ROOT:
            return None
        for key in keys:
            if not overlay.slot_is_local(address, int.from_bytes(key, "big"), header.number):
                raise ProofUnavailable(
                    f"slot 0x{key.hex()} of account {who} has not been written since the fork at "
                    f"block {overlay.fork_number}: its value is the forked node's, which block "
                    f"{header.number}'s state root does not commit to; ask for block "
                    f"{overlay.fork_number} (or earlier) to have it proven")
        return None

    # -- where the chain stands ----------------------------------------------------------------

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
        """Canonical block ``number``; raises :class:`DevChainError` if the chain does not hold it.
        """
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
    def pending(self) -> tuple[Transaction, ...]:
        """The transactions the next block takes, in the order it takes them (price, then
        nonce: see :meth:`TxPool.ordered`)."""
        with self._lock:
            return tuple(p.tx for p in self._next_transactions())

    @property
    def local_accounts(self) -> tuple[LocalAccount, ...]:
        """The dev accounts as eth-account ``LocalAccount`` objects, in the same order."""
        return tuple(account.local_account for account in self.accounts)

    def account(self, address: Address | str) -> DevAccount | None:
        """The dev account with this address, if it is one."""
        wanted = as_address(address)
        return next((a for a in self.accounts if a.address == wanted), None)

    # -- transactions --------------------------------------------------------------------------

    def send(
        self,
        sender: DevAccount,
        to: Address | str | None = None,
        *,
        value: int = 0,
        data: bytes | str = b"",
        kind: TxKind | None = None,
        gas: int | None = None,
        nonce: int | None = None,
        protected: bool = True,
        access_list: Sequence[AccessListEntry] = (),
        blob_hashes: Sequence[Hash32] = (),
        delegations: Sequence[tuple[DevAccount, Address] | Authorization] = (),
        fees: Fees = DEFAULT_FEES,
    ) -> Hash32:
        """Sign a transaction from ``sender`` and queue it for the next block; its hash.

        ``to`` and ``data`` are bytes or ``0x`` hex strings. ``kind`` defaults to dynamic-fee
        from London on and legacy before; blob and set-code transactions must be asked for.
        A legacy transaction is replay-protected (EIP-155) from Spurious Dragon on unless
        ``protected`` is False. ``delegations`` are (authority, code address) pairs the chain
        signs with the right nonces, or authorizations signed beforehand (see
        :func:`sign_authorization`). Gas defaults to 21,000 for a plain transfer and
        :data:`CONTRACT_GAS` otherwise.

        The transaction is checked as a node's pool would check it (nonce, funds, fees,
        intrinsic gas) before it takes its nonce: a refused one raises
        :class:`~ethread.errors.TransactionRejected` and leaves nothing behind.
        """
        if not isinstance(sender, DevAccount):
            raise TypeError(f"sender: pass a DevAccount (chain.accounts[i]), not {type(sender).__name__}")
        to_address = as_optional_address(to, "to")
        payload = as_bytes(data, "data")
        as_int(value, "value")
        with self._lock:
            fork = self.next_fork()
            kind = kind or ("dynamic-fee" if FORK_BY_NAME[fork].base_fee else "legacy")
            if kind not in KIND_SINCE:
                raise ValueError(f"kind must be one of {sorted(KIND_SINCE)}, not {kind!r}")
            self._check_kind(fork, kind, to_address, blob_hashes, delegations)
            nonces: dict[Address, int] = {}  # committed only once the transaction is admitted
            own_nonce = self._peek_nonce(sender.address, nonces) if nonce is None else nonce
            nonces[sender.address] = own_nonce + 1
            draft = _Draft(
                nonce=own_nonce, to=to_address, value=value, data=payload,
                gas=gas if gas is not None else self._default_gas(to_address, payload, kind),
                access_list=tuple(access_list), blob_hashes=tuple(blob_hashes),
                authorizations=self._authorizations(delegations, nonces),
            )
            tx = draft.unsigned(kind, self.chain_id, fees)
            protect = (kind == "legacy" and protected
                       and FORK_BY_NAME[fork].replay_protection)
            signed = sign_transaction(tx, sender, self.chain_id if protect else None)
            self._admit(signed, sender.address)
            tx_hash = self.pool.keep(signed, sender.address)
            self._nonces.update(nonces)
            return tx_hash

    def submit(self, tx: Transaction | bytes, *, sender: Address | None = None) -> Hash32:
        """Take a signed transaction as a node does (eth_sendRawTransaction): decoded when
        given as bytes, its sender recovered. While :attr:`automine` is on it is checked as
        the next block must take it (no nonce gap, funds, base fee) and mined at once in a
        block of its own; while off it goes into :attr:`pool` by geth's rules (a future nonce
        waits in the queue, the same nonce at 10% higher fees replaces).

        ``sender`` is for impersonated accounts only (see :meth:`impersonate`): their
        transactions carry no valid signature, and the chain takes them from that address.
        """
        if isinstance(tx, bytes | bytearray | str):
            tx = decode_raw(as_bytes(tx, "raw transaction"))
        with self._lock:
            evm_tx = self._evm_tx(tx)
            if sender is None:
                return self._take(tx, recover_sender(evm_tx), evm_tx)
            origin = as_address(sender, "sender")
            if origin not in self._impersonated:
                raise TransactionRejected(f"invalid sender: {to_checksum_address(origin)} "
                                          "is not impersonated")
            return self._take(tx, origin, evm_tx, impersonated=True)

    def _take(self, tx: Transaction, origin: Address, evm_tx: Any, *,
              impersonated: bool = False) -> Hash32:
        """Admit a transaction from ``origin`` and mine it when automining, else pool it."""
        if self.automine:
            self._admit(tx, origin, evm_tx)
            tx_hash = self.pool.keep(tx, origin)
        else:
            tx_hash = self.pool.add(tx, sender=origin if impersonated else None)
        if impersonated:
            self._senders[tx_hash] = origin
        if self.automine:
            self.mine()
        return tx_hash

    def send_request(self, request: CallRequest) -> Hash32:
        """eth_sendTransaction: the transaction ``request`` describes, from a dev account (or
        an impersonated one), with nonce, fees and gas filled in when left out; then as
        :meth:`submit`."""
        from .requests import transaction_for

        with self._lock:
            tx = transaction_for(self, request)
            assert request.sender is not None
            if self.account(request.sender) is None:
                return self.submit(tx, sender=request.sender)
            return self._take(tx, request.sender, self._evm_tx(tx))

    def next_nonce(self, address: Address | str) -> int:
        """The nonce the next transaction of ``address`` takes (pending ones counted)."""
        wanted = as_address(address)
        with self._lock:
            taken = self.pool.next_nonce(wanted) if self.pool.holds(wanted) else self.nonce(wanted)
            return max(self._nonces.get(wanted, 0), taken)

    def next_base_fee(self) -> int | None:
        """The base fee of the next block (None before London)."""
        head = self.head
        return self._next_base_fee(head, self._next_time(head.timestamp))

    def _evm_tx(self, tx: Transaction) -> Any:
        head = self.head
        return evm_transaction(self.config.vm_class(head.number + 1, self._next_time(head.timestamp)), tx)

    def _admit(self, tx: Transaction, sender: Address, evm_tx: Any = None) -> None:
        """Refuse, in geth's words, what the next block could not take from ``sender``
        (``evm_tx``: py-evm's form of ``tx``, which the rules do not need)."""
        head = self.head
        when = self._next_time(head.timestamp)
        state = self._head_state()
        address = EvmAddress(sender)
        base_fee = self._next_base_fee(head, when)
        admit(tx, sender, PoolView(
            chain_id=self.chain_id,
            fork=self.config.fork_at(head.number + 1, when),
            base_fee=base_fee,
            gas_limit=head.gas_limit,
            next_nonce=self.next_nonce(sender),
            spendable=state.get_balance(address) - self.pool.pending_cost(sender),
            code=b"" if sender in self._impersonated else state.get_code(address),
        ))

    def _next_base_fee(self, head: Header, when: int) -> int | None:
        if not self.config.rules(head.number + 1, when).base_fee:
            return None
        if self._next_base_fee_override is not None:
            return self._next_base_fee_override
        return next_base_fee(self.config, head)

    def _head_state(self) -> Any:
        """The head's state for reading (nonces, balances, code), built once per head: a
        py-evm state costs more to build than the reads a send makes of it. A few recent
        heads' are kept, since a test that reverts to a snapshot returns to the same head
        again and again (a block's state never changes: it is the one its state root names)."""
        head_hash = self.head.hash
        state = self._head_states.get(head_hash)
        if state is None:
            state = self._vm_at(None).state
            self._head_states.put(head_hash, state)
        return state

    @staticmethod
    def _check_kind(fork: str, kind: TxKind, to: Address | None, blob_hashes: Sequence[Hash32],
                    delegations: Sequence[object]) -> None:
        if KIND_TYPE[kind] not in FORK_BY_NAME[fork].transaction_types:
            raise DevChainError(f"the next block is {fork}: no {kind} transactions before "
                                f"{KIND_SINCE[kind]}")
        if (blob_hashes and kind != "blob") or (delegations and kind != "set-code"):
            raise DevChainError("blob hashes need kind='blob', delegations kind='set-code'")
        if kind in ("blob", "set-code") and to is None:
            raise DevChainError(f"a {kind} transaction cannot create a contract")

    def deploy(
        self,
        sender: DevAccount,
        bytecode: bytes | str,
        constructor_args: bytes | str = b"",
        *,
        abi: Sequence[Mapping[str, Any]] | None = None,
        args: Sequence[Any] = (),
        value: int = 0,
        kind: TxKind | None = None,
        gas: int | None = None,
    ) -> Address:
        """Queue the creation of a contract from its creation bytecode (what solc's
        ``bytecode`` holds), with ABI-encoded constructor arguments appended: given encoded
        as ``constructor_args``, or encoded here from ``args`` by the constructor of ``abi``.
        The address the contract will have.

        When the creation fails (the constructor reverts, runs out of gas, or leaves no code)
        :meth:`mine` raises :class:`DevChainError` and stores nothing. To install runtime
        code as it is, use :meth:`deploy_runtime`.
        """
        code = as_bytes(bytecode, "bytecode")
        if not code:
            raise ValueError("bytecode: empty; pass the contract's creation bytecode")
        encoded = as_bytes(constructor_args, "constructor_args")
        if abi is not None:
            if encoded:
                raise TypeError("pass constructor_args (encoded) or abi and args, not both")
            encoded = encode_constructor_args(abi, args)
        elif args:
            raise TypeError("args need the contract's abi to be encoded")
        return self._create(sender, code + encoded, value=value, kind=kind, gas=gas)

    def deploy_runtime(self, sender: DevAccount, runtime: bytes | str, *, value: int = 0,
                       kind: TxKind | None = None, gas: int | None = None) -> Address:
        """Queue a creation that installs ``runtime`` as the contract's code, as it is (no
        constructor runs); the address it will have."""
        code = as_bytes(runtime, "runtime")
        return self._create(sender, contracts.initcode(code), value=value, kind=kind, gas=gas)

    def _create(self, sender: DevAccount, initcode: bytes, *, value: int, kind: TxKind | None,
                gas: int | None) -> Address:
        with self._lock:
            nonce = self._peek_nonce(sender.address, {})
            tx_hash = self.send(sender, None, value=value, data=initcode, kind=kind, gas=gas)
            address = generate_contract_address(EvmAddress(sender.address), nonce)
            self._deployments[tx_hash] = address
            return address

    def fund(self, address: Address | str, value: int, *, sender: DevAccount | None = None) -> Hash32:
        """Queue a plain transfer of ``value`` wei to ``address`` (from the first dev account)."""
        return self.send(sender or self.accounts[0], address, value=value)

    def _peek_nonce(self, address: Address, nonces: dict[Address, int]) -> int:
        if address not in nonces:
            nonces[address] = self.next_nonce(address)
        return nonces[address]

    def _default_gas(self, to: Address | None, data: bytes, kind: TxKind) -> int:
        plain = to is not None and not data and kind != "set-code" and not self.code(to)
        return TRANSFER_GAS if plain else CONTRACT_GAS

    def _authorizations(self, delegations: Sequence[tuple[DevAccount, Address] | Authorization],
                        nonces: dict[Address, int]) -> tuple[Authorization, ...]:
        """Sign (authority, address) pairs with the nonce each authority will have when its
        authorization applies: after the sender's nonce was raised for the transaction."""
        out = []
        for item in delegations:
            if isinstance(item, Authorization):
                out.append(item)
                continue
            authority, address = item
            nonce = self._peek_nonce(authority.address, nonces)
            nonces[authority.address] = nonce + 1
            out.append(sign_authorization(authority, self.chain_id, as_address(address), nonce))
        return tuple(out)

    # -- the pool as clients see it (pending reads, txpool_*, anvil_dropTransaction) -----------

    def pool_account(self, address: Address) -> AccountState:
        """An account at the head as the pool checks its transactions: an impersonated one
        without its code (it sends as if it had none, as in anvil)."""
        state = self._head_state()
        evm_address = EvmAddress(address)
        code = b"" if address in self._impersonated else bytes(state.get_code(evm_address))
        return AccountState(int(state.get_nonce(evm_address)), int(state.get_balance(evm_address)),
                            code)

    def pending_transaction(self, tx_hash: Hash32) -> Pooled | None:
        """A transaction the pool holds and no block has taken yet (pending or queued)."""
        pooled = self.pool.get(tx_hash)
        if pooled is None or self.backend.transaction_location(tx_hash) is not None:
            return None
        return pooled

    def pool_arrivals(self, cursor: int) -> tuple[list[Hash32], int]:
        """Hashes of transactions the pool took after ``cursor`` (pending filters)."""
        return self.pool.arrivals_since(cursor)

    def drop_transaction(self, tx_hash: Hash32 | str) -> bool:
        """anvil_dropTransaction: take a transaction out of the pool (the sender's later ones
        wait in the queue for its nonce again). False if the pool does not hold it."""
        wanted = as_bytes(tx_hash, "tx_hash", 32)
        with self._lock:
            pooled = self.pool.get(wanted)
            if not self.pool.drop(wanted):
                return False
            if pooled is not None:
                self._nonces.pop(pooled.sender, None)
            self._deployments.pop(wanted, None)
            self._senders.pop(wanted, None)
            return True

    def drop_all_transactions(self) -> None:
        """anvil_dropAllTransactions: empty the pool."""
        with self._lock:
            self.pool.clear()
            self._nonces.clear()
            self._deployments.clear()
            self._senders.clear()

    @property
    def served_pool(self) -> ServedPool:
        """The pool as txpool_* read it and testing_buildBlockV1 builds from it."""
        if self._served_pool is None:
            from .served_pool import ServedPool

            self._served_pool = ServedPool(self.backend, pool=self.pool)  # type: ignore[arg-type]
        return self._served_pool

    def pending_block(self) -> Block:
        """The block :meth:`mine` would make now, not stored: what geth answers for the
        "pending" block (JSON-RPC writes it without hash, nonce and miner). Built once per
        head, pool content and time. When the pool's transactions cannot make a block, the
        block without them."""
        return self.pending_state().block

    def pending_state(self) -> PendingView:
        """The chain with :meth:`pending_block` as its head, read-only: the state reads at
        "pending" (eth_getBalance, eth_getCode, eth_getStorageAt, eth_call) answer from it,
        as geth's do from its pending block's state."""
        with self._lock:
            head = self.head
            when = self._next_time(head.timestamp)
            taken = self._next_transactions()
            key = (head.hash, tuple(p.hash for p in taken), when)
            found = self._pending_blocks.get(key)
            if found is None:
                try:
                    found = self._build_pending(head, when, taken)
                except DevChainError:
                    found = self._build_pending(head, when, [])
                self._pending_blocks.put(key, found)
            return found

    def _build_pending(self, head: Header, when: int, taken: Sequence[Pooled]) -> PendingView:
        from ..rlpcodec.blocks import decode_block

        parent = self._evm_header(head.hash)
        rules = self.config.rules(head.number + 1, when)
        paid = () if rules.withdrawals else None
        senders = {p.hash: self._senders[p.hash] for p in taken if p.hash in self._senders}
        with self._recording():
            block, vm = self._execute(parent, when, self.coinbase, b"", [p.tx for p in taken], (),
                                      paid, None, senders, scratch=True)
        raw = rlp.encode(block)
        pending = decode_block(raw, rlp.decode(raw), [p.sender for p in taken])
        # The scratch layer holds the block's state; its header goes there too, for eth_call,
        # which reads the block's rules from py-evm's header.
        scratch = vm.chaindb
        scratch.db[block.header.hash] = rlp.encode(block.header)  # (py-evm's header key)
        return PendingView(self.backend, pending, scratch)

    # -- signing for clients (eth_sign, eth_signTransaction, typed data) ------------------------

    def signer(self, address: Address | str) -> DevAccount:
        """The dev account that signs for ``address``; :class:`~.messages.NoSigner` when the
        chain holds no key for it (impersonated accounts included, as in anvil)."""
        from .messages import NoSigner

        account = self.account(address)
        if account is None:
            raise NoSigner()
        return account

    def sign_message(self, address: Address | str, message: bytes | str) -> bytes:
        """eth_sign: ``address``'s EIP-191 signature of ``message`` (65 bytes)."""
        from .messages import sign_message

        return sign_message(self.signer(address), as_bytes(message, "message"))

    def sign_typed_data(self, address: Address | str, typed_data: Mapping[str, Any]) -> bytes:
        """eth_signTypedData_v4: ``address``'s EIP-712 signature of ``typed_data``."""
        from .messages import sign_typed_data

        return sign_typed_data(self.signer(address), typed_data)

    def sign_request(self, request: CallRequest) -> Transaction:
        """eth_signTransaction: the transaction eth_sendTransaction would send for ``request``
        (nonce, fees and gas filled in the same way), signed, and not sent."""
        from .requests import transaction_for

        if request.sender is not None:
            self.signer(request.sender)
        with self._lock:
            return transaction_for(self, request)

    # -- impersonation -------------------------------------------------------------------------

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

    # -- blocks --------------------------------------------------------------------------------

    def mine(
        self,
        *,
        timestamp: int | None = None,
        coinbase: Address | None = None,
        uncles: Sequence[Header] = (),
        withdrawals: Sequence[tuple[Address, int]] = (),
        extra_data: bytes = b"",
    ) -> Block:
        """Put every pending transaction into a new block, import it, and return it as stored.

        ``withdrawals`` are (address, amount in gwei) pairs, from Shanghai on; indexes run on
        from the last withdrawal of the chain. ``uncles`` come from :meth:`sibling`. A
        contract queued by :meth:`deploy` that the block would not create makes this raise
        (and store nothing).
        """
        with self._lock:
            when = None if timestamp is None else timestamp
            taken = self._next_transactions(when)
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

    def _next_transactions(self, timestamp: int | None = None) -> list[Pooled]:
        """What the next block takes from the pool: its executable transactions by price and
        nonce, while they fit in the block's gas."""
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
        # The VM's state is now the new head's (persisted, read-only from here): the reads of
        # the next send (nonces, balances, code) take it instead of building one more.
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
        """Whether the next block's gas limit or base fee is one a test set, not the one the
        header rules derive from ``parent``."""
        return ((self._gas_limit is not None and self._gas_limit != parent.gas_limit)
                or (self._next_base_fee_override is not None and bool(rules.base_fee)))

    def mine_until(self, number: int) -> Block:
        """Mine blocks until the head is at ``number``; the first one takes whatever is
        pending, the others are empty. The head."""
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
        """A valid block header at ``number`` (the head's by default) that is not canonical:
        an uncle for a later block to include, up to six blocks later. Proof-of-work forks
        only. Each call makes a different one."""
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
        """Withdrawal models numbered on from the chain's last one (validator indexes are
        made up: nothing on the execution side checks them)."""
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
        """A sealed block: the template (header from the parent, body) executed by py-evm on
        a VM at the parent (or at ``pre_state``, the parent's state with test edits), which
        fills in every root and total; and that VM. Nothing becomes canonical. With
        ``scratch`` nothing is written to the store either (the pending block)."""
        number = parent.block_number + 1
        vm_class = self.config.vm_class(number, timestamp)
        rules = self.config.rules(number, timestamp)
        if canonical and self._header_overridden(parent, rules):
            vm_class = _set_by_test(vm_class)
        params: dict[str, Any] = {
            "timestamp": timestamp, "coinbase": coinbase, "extra_data": extra_data,
            # Zero seals before the merge (py-evm's default nonce is not zero); a made-up
            # randomness beacon after it.
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
        # The VM starts from the template's own header: import_block sets every field the
        # template chose (coinbase, time, seal, gas limit, beacon root) from the block anyway,
        # and the others are the parent's or derived from it.
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

    # -- test controls -------------------------------------------------------------------------

    def snapshot(self) -> int:
        """Remember the chain as it is (head, pending transactions, clock); an id for
        :meth:`revert`. Cheap: nothing is copied but the pending list."""
        with self._lock:
            self._snapshot_ids += 1
            self._snapshots[self._snapshot_ids] = _Snapshot(
                head=self.head.number, pool=self.pool.save(),
                nonces=tuple(self._nonces.items()), deployments=tuple(self._deployments.items()),
                senders=tuple(self._senders.items()),
                withdrawal_index=self._withdrawal_index, time_offset=self._time_offset,
                next_timestamp=self._next_timestamp,
            )
            return self._snapshot_ids

    def revert(self, snapshot_id: int) -> bool:
        """Go back to a snapshot: the backend drops every block above its head (with their
        transactions, receipts and logs), the pending list and clock come back. The snapshot
        and every later one are used up (as in anvil and hardhat). False for an unknown id."""
        with self._lock:
            saved = self._snapshots.get(snapshot_id)
            if saved is None:
                return False
            rewind = getattr(self.backend, "rewind", None)
            if rewind is None:
                raise DevChainError(f"{type(self.backend).__name__} cannot drop blocks: "
                                    "snapshots need a backend with rewind()")
            if self.head.number > saved.head:
                rewind(saved.head)
            if self._overlay is not None:
                self._overlay.rewind(saved.head)
            for later in [i for i in self._snapshots if i >= snapshot_id]:
                del self._snapshots[later]
            self.pool.restore(saved.pool)
            self._nonces = dict(saved.nonces)
            self._senders = dict(saved.senders)
            self._deployments = dict(saved.deployments)
            self._withdrawal_index = saved.withdrawal_index
            self._time_offset = saved.time_offset
            self._next_timestamp = saved.next_timestamp
            return True

    def increase_time(self, seconds: int) -> int:
        """Move the clock ``seconds`` ahead: the next block comes that much later than it
        would have. The total jump waiting for the next block."""
        as_int(seconds, "seconds")
        with self._lock:
            self._time_offset += seconds
            return self._time_offset

    def set_next_block_timestamp(self, timestamp: int) -> None:
        """The next block's timestamp exactly (it must be after the head's)."""
        as_int(timestamp, "timestamp")
        with self._lock:
            if timestamp <= self.head.timestamp:
                raise DevChainError(f"timestamp {timestamp} is not after the head's "
                                    f"({self.head.timestamp})")
            self._next_timestamp = timestamp

    def _next_time(self, parent_timestamp: int) -> int:
        if self._next_timestamp is not None:
            return self._next_timestamp
        if self.clock is not None:
            return max(parent_timestamp + 1, int(self.clock()) + self._time_offset)
        return parent_timestamp + self.block_time + self._time_offset

    def set_balance(self, address: Address | str, balance: int) -> Block:
        """Give ``address`` exactly ``balance`` wei; mined at once as a block of its own."""
        return self.edit(StateEdit(as_address(address), balance=as_int(balance, "balance")))

    def set_nonce(self, address: Address | str, nonce: int) -> Block:
        """Set the nonce of ``address`` in a new block of its own (see :meth:`edit`)."""
        return self.edit(StateEdit(as_address(address), nonce=as_int(nonce, "nonce")))

    def set_code(self, address: Address | str, code: bytes | str) -> Block:
        """Install runtime ``code`` at ``address`` as it is."""
        return self.edit(StateEdit(as_address(address), code=as_bytes(code, "code")))

    def set_storage(self, address: Address | str, slot: int | bytes | str,
                    value: int | bytes | str) -> Block:
        """Write one storage slot (slot and value as ints, or 32-byte words)."""
        return self.edit(StateEdit(as_address(address),
                                   storage=((_word(slot, "slot"), _word(value, "value")),)))

    def edit(self, *edits: StateEdit) -> Block:
        """Apply account edits in a new block of their own: the edits come first (as if the
        parent's state had them), then block processing, with no transactions. Pending
        transactions stay pending."""
        with self._lock:
            for change in edits:
                self._preimages.add(change.address, (slot for slot, _ in change.storage))
            return self._mine((), edits=edits)

    # -- anvil's chain controls and state files ------------------------------------------------

    def reset(self) -> None:
        """anvil_reset: back to the genesis block (a forked chain: to the forked block, its
        dev accounts funded again), as the chain was made (blocks above it dropped; pending
        transactions, snapshots, the clock's jumps and the next block's settings forgotten).
        Impersonations, the coinbase, a gas limit set by :meth:`set_gas_limit` and the chain
        id stay, as in anvil."""
        with self._lock:
            rewind = getattr(self.backend, "rewind", None)
            if rewind is None:
                raise DevChainError(f"{type(self.backend).__name__} cannot drop blocks: "
                                    "reset needs a backend with rewind()")
            first = self.backend.pointer("earliest") or 0
            if self.head.number > first:
                rewind(first)
            if self._overlay is not None:
                self._overlay.rewind(first)
                if self._funding:
                    self.edit(*self._funding)
            self.pool.clear()
            self._nonces.clear()
            self._senders.clear()
            self._deployments.clear()
            self._snapshots.clear()
            self._withdrawal_index = None
            self._time_offset = 0
            self._next_timestamp = None
            self._next_base_fee_override = None

    def set_gas_limit(self, gas_limit: int) -> None:
        """evm_setBlockGasLimit: the gas limit of the next blocks (anvil's and hardhat's: at
        once, not moved towards step by step as a real chain's producers must)."""
        as_int(gas_limit, "gas_limit")
        if gas_limit < 5000:
            raise DevChainError(f"gas limit {gas_limit} is below the protocol's minimum 5000")
        with self._lock:
            self._gas_limit = gas_limit

    def next_gas_limit(self) -> int:
        """The gas limit of the next block."""
        return self._gas_limit if self._gas_limit is not None else self.head.gas_limit

    def set_next_base_fee(self, base_fee: int) -> None:
        """anvil_setNextBlockBaseFeePerGas: the base fee of the next block; the ones after it
        follow from it by EIP-1559's rule."""
        as_int(base_fee, "base_fee")
        with self._lock:
            if not self.config.rules(self.head.number + 1,
                                     self._next_time(self.head.timestamp)).base_fee:
                raise DevChainError("the next block has no base fee (before London)")
            self._next_base_fee_override = base_fee

    def set_chain_id(self, chain_id: int) -> None:
        """anvil_setChainId: the chain id that transactions are signed for and checked against,
        and that eth_chainId answers, from now on (blocks already made keep theirs)."""
        from dataclasses import replace

        as_int(chain_id, "chain_id")
        if not 0 < chain_id < 1 << 64:
            raise DevChainError("chain id: must be between 1 and 2^64 - 1")
        with self._lock:
            self.chain_id = chain_id
            self.config = replace(self.config, chain_id=chain_id)
            self.importer.config = self.config
            self.backend.store_chain_config(self.config)

    @property
    def snapshots(self) -> dict[int, int]:
        """The live snapshot ids, each with the block number it returns to."""
        return {snapshot_id: saved.head for snapshot_id, saved in self._snapshots.items()}

    def dump_state(self, *, compress: bool = False) -> bytes:
        """The head's state in anvil's state-file shape (see :mod:`.state_file`): JSON bytes,
        gzipped when ``compress`` (what anvil_dumpState returns). Every account the chain has
        touched is listed with its nonce, balance, code and non-zero storage."""
        from .state_file import DumpedAccount

        with self._lock:
            head = self.head
            state = self._head_state()
            accounts = []
            for address, slots in self._preimages.slots.items():
                evm_address = EvmAddress(address)
                if not state.account_exists(evm_address):
                    continue
                storage = tuple(sorted(
                    (slot, value) for slot in slots
                    if (value := int(state.get_storage(evm_address, slot))) != 0))
                accounts.append(DumpedAccount(
                    address=address, nonce=int(state.get_nonce(evm_address)),
                    balance=int(state.get_balance(evm_address)),
                    code=bytes(state.get_code(evm_address)), storage=storage))
            from ..methods.fees import blob_base_fee

            document = state_document(head, blob_gas_price=blob_base_fee(self.config, head) or 1,
                                      accounts=accounts)
        return encode_state(document, compress=compress)

    def load_state(self, state: bytes | str | Mapping[str, Any]) -> Block:
        """Write the accounts of an anvil state file (gzipped or plain JSON, or the parsed
        object) into the chain, in one block of their own, stamped no earlier than the state's
        block; that block. The file's blocks and transactions are not imported."""
        loaded = parse_state(state)
        edits = [StateEdit(account.address, balance=account.balance, nonce=account.nonce,
                           code=account.code, storage=account.storage)
                 for account in loaded.accounts]
        with self._lock:
            for change in edits:
                self._preimages.add(change.address, (slot for slot, _ in change.storage))
            when = max(self._next_time(self.head.timestamp), loaded.timestamp or 0)
            return self._mine((), edits=edits, timestamp=max(when, self.head.timestamp + 1))

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

    # -- state ---------------------------------------------------------------------------------

    def _vm(self, vm_class: type[VirtualMachineAPI], header: BlockHeaderAPI, *,
            scratch: bool = False) -> VirtualMachineAPI:
        chaindb = self._chaindb
        if scratch:  # writes kept in memory and dropped with the VM
            chaindb = ChainDB(AtomicDB(BatchDB(self._chaindb.db)))
        return vm_class(
            header=header,
            chaindb=chaindb,
            chain_context=ChainContext(self.chain_id),
            consensus_context=ConsensusContext(chaindb.db),
        )

    def _evm_header(self, block_hash: Hash32) -> BlockHeaderAPI:
        return self._chaindb.get_block_header_by_hash(EvmHash(block_hash))

    def _vm_at(self, number: int | None) -> VirtualMachineAPI:
        """A VM whose state is the state after block ``number`` (the head's by default)."""
        block_hash = self.head.hash if number is None else self.backend.canonical_hash(number)
        if block_hash is None:
            raise DevChainError(f"no block {number}")
        header = self._evm_header(block_hash)
        return self._vm(self.config.vm_class(header.block_number, header.timestamp), header)

    def balance(self, address: Address | str, at: int | None = None) -> int:
        """The balance in wei of ``address`` at the head, or after block ``at``."""
        state = self._head_state() if at is None else self._vm_at(at).state
        return int(state.get_balance(EvmAddress(as_address(address))))

    def nonce(self, address: Address | str, at: int | None = None) -> int:
        """The nonce of ``address`` at the head, or after block ``at``."""
        state = self._head_state() if at is None else self._vm_at(at).state
        return int(state.get_nonce(EvmAddress(as_address(address))))

    def code(self, address: Address | str, at: int | None = None) -> bytes:
        """The code of ``address`` at the head, or after block ``at``."""
        state = self._head_state() if at is None else self._vm_at(at).state
        return bytes(state.get_code(EvmAddress(as_address(address))))

    def storage(self, address: Address | str, slot: int, at: int | None = None) -> int:
        """The value of storage slot ``slot`` of ``address`` at the head, or after block ``at``."""
        state = self._head_state() if at is None else self._vm_at(at).state
        return int(state.get_storage(EvmAddress(as_address(address)), slot))

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
        """Run a message call against the state after block ``at`` (the head by default), in
        that block's environment, and forget its effects. For checking what the chain holds;
        the RPC's eth_call is :mod:`ethread.methods`' business, not this."""
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
    """A dev chain as its pool's chain (:class:`~.txpool.PoolChain`). It takes no lock of the
    chain: the chain calls its pool under its own lock, and the pool calls back here."""

    def __init__(self, chain: DevChain) -> None:
        self._chain = chain

    @property
    def config(self) -> ChainConfig:
        return self._chain.config

    def head(self) -> Header:
        return self._chain.head

    def account(self, address: Address) -> AccountState:
        return self._chain.pool_account(address)


@cache
def _set_by_test(vm_class: type[VirtualMachineAPI]) -> type[VirtualMachineAPI]:
    """``vm_class`` without the header's gas rules (the gas limit's bound against the parent's,
    EIP-1559's base fee): for a block whose gas limit or base fee a test set."""

    def validate_gas(cls: Any, header: BlockHeaderAPI, parent_header: BlockHeaderAPI) -> None:
        return None

    return type(vm_class.__name__, (vm_class,), {"validate_gas": classmethod(validate_gas)})


def _word(value: int | bytes | str, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < 1 << 256:
            raise ValueError(f"{what}: out of the 256-bit range")
        return value
    raw = as_bytes(value, what)
    if len(raw) > 32:
        raise ValueError(f"{what}: more than 32 bytes")
    return int.from_bytes(raw, "big")


def encode_constructor_args(abi: Sequence[Mapping[str, Any]], args: Sequence[Any]) -> bytes:
    """ABI-encode ``args`` for the constructor of ``abi`` (none when it has no constructor)."""
    from eth_abi.abi import encode

    constructor = next((item for item in abi if item.get("type") == "constructor"), None)
    inputs = constructor.get("inputs", []) if constructor else []
    if len(inputs) != len(args):
        raise TypeError(f"the constructor takes {len(inputs)} arguments, {len(args)} given")
    return encode([_abi_type(i) for i in inputs], list(args))


def _abi_type(item: Mapping[str, Any]) -> str:
    kind: str = item["type"]
    if kind.startswith("tuple"):
        return "(" + ",".join(_abi_type(c) for c in item["components"]) + ")" + kind[5:]
    return kind
