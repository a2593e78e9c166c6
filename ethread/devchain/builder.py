"""A chain built in code, for the project's tests and the ``ethread serve`` demo.

Every block the dev chain makes goes through the real import path: the block is assembled and
executed with py-evm on a VM at its parent (which fills in state root, receipts root, bloom,
gas used, withdrawals root, blob gas and requests hash), RLP-encoded, and handed as bytes to
:meth:`ChainImporter.import_block`, which decodes, re-executes, validates and stores it like
any block of a real chain. Blocks before the merge carry zero proof-of-work seals, which is
why the importer runs with ``verify_seals=False``; everything else is checked.

Related modules: :mod:`.contracts` (hand-assembled contracts), :mod:`.signing` (dev accounts,
signatures) and :mod:`.demo` (the demo chain ``ethread serve`` shows).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import rlp
from eth._utils.address import generate_contract_address
from eth.abc import BlockAPI, BlockHeaderAPI, ChainDatabaseAPI, VirtualMachineAPI
from eth.consensus.context import ConsensusContext
from eth.vm.chain_context import ChainContext
from eth_typing import Address as EvmAddress
from eth_typing import Hash32 as EvmHash
from eth_utils import ValidationError, keccak

from ..backend import WritableBackend
from ..chain.genesis import parse_genesis
from ..chain.importer import ChainImporter
from ..encoding import block_item, decode_header, transaction_hash
from ..errors import EthreadError
from ..forks import BLOCK_FORKS, FORK_ORDER, TIME_FORKS, ChainConfig, fork_at_least
from ..models import (
    AccessListEntry,
    AccessListTransaction,
    Address,
    Authorization,
    BlobTransaction,
    Block,
    DynamicFeeTransaction,
    Hash32,
    Header,
    LegacyTransaction,
    Receipt,
    SetCodeTransaction,
    Transaction,
    Withdrawal,
)
from . import contracts
from .signing import DevAccount, dev_accounts, sign_authorization, sign_transaction

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


DEFAULT_FORKS = ForkSchedule(
    blocks=(
        ("homestead", 0), ("tangerine_whistle", 3), ("spurious_dragon", 6), ("byzantium", 9),
        ("constantinople", 12), ("petersburg", 15), ("istanbul", 18), ("muir_glacier", 21),
        ("berlin", 24), ("london", 27), ("arrow_glacier", 30), ("gray_glacier", 33),
        ("paris", 36),
    ),
    times=(("shanghai", 390), ("cancun", 420), ("prague", 450)),
)
"""The rpc-compat chain's schedule: with the default 10-second blocks from timestamp 0,
Shanghai starts at block 39, Cancun at 42 and Prague at 45."""

PRAGUE_FORKS = ForkSchedule.from_genesis("prague")
"""Everything active from genesis: the fastest chain to build for post-merge tests."""


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
) -> dict[str, Any]:
    """A geth-style genesis.json document (as a dict): ``accounts`` funded with ``balance``,
    the system contracts, and ``alloc`` (geth's alloc form, hex strings) on top."""
    merged = ChainConfig.from_genesis_config(forks.genesis_config(chain_id)).fork_at(0, timestamp)
    document_alloc: dict[str, Any] = system_contracts()
    for account in accounts:
        document_alloc["0x" + account.address.hex()] = {"balance": hex(balance)}
    document_alloc.update(alloc or {})
    return {
        "config": forks.genesis_config(chain_id),
        "nonce": "0x0",
        "timestamp": hex(timestamp),
        "extraData": "0x" + extra_data.hex(),
        "gasLimit": hex(gas_limit),
        "difficulty": "0x0" if fork_at_least(merged, "paris") else hex(0x20000),
        "mixHash": "0x" + ZERO_HASH.hex(),
        "coinbase": "0x" + ZERO_ADDRESS.hex(),
        "alloc": document_alloc,
    }


# --------------------------------------------------------------------------------------------
# The chain


TxKind: TypeAlias = Literal["legacy", "access-list", "dynamic-fee", "blob", "set-code"]
KIND_SINCE: dict[str, str] = {
    "legacy": "frontier",
    "access-list": "berlin",
    "dynamic-fee": "london",
    "blob": "cancun",
    "set-code": "prague",
}
"""The first fork that accepts each transaction kind."""


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
        if kind == "dynamic-fee":
            return DynamicFeeTransaction(
                chain_id=chain_id, nonce=self.nonce,
                max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
                max_fee_per_gas=fees.max_fee_per_gas, gas=self.gas, to=self.to,
                value=self.value, data=self.data, access_list=self.access_list,
                y_parity=0, r=0, s=0,
            )
        if self.to is None:
            raise DevChainError(f"a {kind} transaction cannot create a contract")
        if kind == "blob":
            return BlobTransaction(
                chain_id=chain_id, nonce=self.nonce,
                max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
                max_fee_per_gas=fees.max_fee_per_gas, gas=self.gas, to=self.to,
                value=self.value, data=self.data, access_list=self.access_list,
                max_fee_per_blob_gas=fees.max_fee_per_blob_gas,
                blob_versioned_hashes=self.blob_hashes, y_parity=0, r=0, s=0,
            )
        return SetCodeTransaction(
            chain_id=chain_id, nonce=self.nonce,
            max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
            max_fee_per_gas=fees.max_fee_per_gas, gas=self.gas, to=self.to, value=self.value,
            data=self.data, access_list=self.access_list,
            authorization_list=self.authorizations, y_parity=0, r=0, s=0,
        )



@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What a read-only call returned: output (revert data when it reverted) and gas used."""

    output: bytes
    success: bool
    gas_used: int


class DevChain:
    """A chain grown block by block in code, on top of a writable backend.

    Transactions wait in a pending list (:meth:`send`, :meth:`deploy`, :meth:`fund`) until
    :meth:`mine` puts them all in the next block. Nonces, fees and gas are filled in unless
    given. A mining failure (an invalid transaction) drops the pending list and raises.
    """

    def __init__(
        self,
        backend: WritableBackend,
        *,
        chain_id: int = DEV_CHAIN_ID,
        forks: ForkSchedule = DEFAULT_FORKS,
        accounts: int = 10,
        balance: int = DEV_BALANCE,
        block_time: int = 10,
        genesis_timestamp: int = 0,
        gas_limit: int = 30_000_000,
        alloc: Mapping[str, Mapping[str, Any]] | None = None,
        coinbase: Address = b"\xc0" + b"\x00" * 18 + b"\x01",
    ) -> None:
        if block_time < 1:
            raise ValueError("block_time must be at least one second")
        self.backend = backend
        self.chain_id = chain_id
        self.block_time = block_time
        self.coinbase = coinbase
        self.accounts = dev_accounts(accounts)
        self.genesis = genesis_document(
            chain_id=chain_id, forks=forks, accounts=self.accounts, balance=balance,
            timestamp=genesis_timestamp, gas_limit=gas_limit, alloc=alloc,
        )
        parsed = parse_genesis(self.genesis)
        self.config: ChainConfig = parsed.config
        self.importer = ChainImporter(backend, parsed, verify_seals=False)
        self._chaindb: ChainDatabaseAPI = backend.evm_database()
        self._pending: list[Transaction] = []
        self._nonces: dict[Address, int] = {}
        self._siblings = 0
        self._withdrawal_index: int | None = None
        self._lock = threading.RLock()

    # -- where the chain stands ----------------------------------------------------------------

    @property
    def head(self) -> Header:
        number = self.backend.pointer("latest")
        block_hash = self.backend.canonical_hash(number) if number is not None else None
        header = self.backend.header_by_hash(block_hash) if block_hash is not None else None
        if header is None:
            raise DevChainError("the backend holds no chain")
        return header

    def block(self, number: int) -> Block:
        block_hash = self.backend.canonical_hash(number)
        block = self.backend.block_by_hash(block_hash) if block_hash is not None else None
        if block is None:
            raise DevChainError(f"no block {number}")
        return block

    def next_fork(self, timestamp: int | None = None) -> str:
        """The fork the next block will be in (with the default timestamp unless given)."""
        head = self.head
        when = head.timestamp + self.block_time if timestamp is None else timestamp
        return self.config.fork_at(head.number + 1, when)

    def receipt(self, tx_hash: Hash32) -> Receipt | None:
        location = self.backend.transaction_location(tx_hash)
        if location is None:
            return None
        receipts = self.backend.receipts(location[0])
        return receipts[location[1]] if receipts is not None else None

    @property
    def pending(self) -> tuple[Transaction, ...]:
        return tuple(self._pending)

    # -- transactions --------------------------------------------------------------------------

    def send(
        self,
        sender: DevAccount,
        to: Address | None = None,
        *,
        value: int = 0,
        data: bytes = b"",
        kind: TxKind | None = None,
        gas: int | None = None,
        protected: bool = True,
        access_list: Sequence[AccessListEntry] = (),
        blob_hashes: Sequence[Hash32] = (),
        delegations: Sequence[tuple[DevAccount, Address] | Authorization] = (),
        fees: Fees = DEFAULT_FEES,
    ) -> Hash32:
        """Sign a transaction from ``sender`` and queue it for the next block; its hash.

        ``kind`` defaults to dynamic-fee from London on and legacy before; blob and set-code
        transactions must be asked for. A legacy transaction is replay-protected (EIP-155)
        from Spurious Dragon on unless ``protected`` is False. ``delegations`` are
        (authority, code address) pairs the chain signs with the right nonces, or
        authorizations signed beforehand (see :func:`sign_authorization`). Gas defaults to
        21,000 for a plain transfer and :data:`CONTRACT_GAS` otherwise.
        """
        with self._lock:
            fork = self.next_fork()
            kind = kind or ("dynamic-fee" if fork_at_least(fork, "london") else "legacy")
            self._check_kind(fork, kind, to, blob_hashes, delegations)
            nonce = self._take_nonce(sender.address)  # first: see _authorizations
            draft = _Draft(
                nonce=nonce, to=to, value=value, data=data,
                gas=gas if gas is not None else self._default_gas(to, data, kind),
                access_list=tuple(access_list), blob_hashes=tuple(blob_hashes),
                authorizations=self._authorizations(delegations),
            )
            tx = draft.unsigned(kind, self.chain_id, fees)
            protect = kind == "legacy" and protected and fork_at_least(fork, "spurious_dragon")
            signed = sign_transaction(tx, sender, self.chain_id if protect else None)
            self._pending.append(signed)
            return transaction_hash(signed)

    @staticmethod
    def _check_kind(fork: str, kind: TxKind, to: Address | None, blob_hashes: Sequence[Hash32],
                    delegations: Sequence[object]) -> None:
        if not fork_at_least(fork, KIND_SINCE[kind]):
            raise DevChainError(f"the next block is {fork}: no {kind} transactions before "
                                f"{KIND_SINCE[kind]}")
        if (blob_hashes and kind != "blob") or (delegations and kind != "set-code"):
            raise DevChainError("blob hashes need kind='blob', delegations kind='set-code'")
        if kind in ("blob", "set-code") and to is None:
            raise DevChainError(f"a {kind} transaction cannot create a contract")

    def deploy(self, sender: DevAccount, runtime: bytes, *, value: int = 0,
               kind: TxKind | None = None, gas: int | None = None) -> Address:
        """Queue a contract creation deploying ``runtime`` as is; the address it will have."""
        with self._lock:
            nonce = self._peek_nonce(sender.address)
            self.send(sender, None, value=value, data=contracts.initcode(runtime), kind=kind,
                      gas=gas)
            return generate_contract_address(EvmAddress(sender.address), nonce)

    def fund(self, address: Address, value: int, *, sender: DevAccount | None = None) -> Hash32:
        """Queue a plain transfer of ``value`` wei to ``address`` (from the first dev account)."""
        return self.send(sender or self.accounts[0], address, value=value)

    def _peek_nonce(self, address: Address) -> int:
        if address not in self._nonces:
            self._nonces[address] = self.nonce(address)
        return self._nonces[address]

    def _take_nonce(self, address: Address) -> int:
        nonce = self._peek_nonce(address)
        self._nonces[address] = nonce + 1
        return nonce

    def _default_gas(self, to: Address | None, data: bytes, kind: TxKind) -> int:
        plain = to is not None and not data and kind != "set-code" and not self.code(to)
        return TRANSFER_GAS if plain else CONTRACT_GAS

    def _authorizations(self, delegations: Sequence[tuple[DevAccount, Address] | Authorization],
                        ) -> tuple[Authorization, ...]:
        """Sign (authority, address) pairs with the nonce each authority will have when its
        authorization applies: after the sender's nonce was raised for the transaction."""
        out = []
        for item in delegations:
            if isinstance(item, Authorization):
                out.append(item)
                continue
            authority, address = item
            nonce = self._take_nonce(authority.address)
            out.append(sign_authorization(authority, self.chain_id, address, nonce))
        return tuple(out)

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
        from the last withdrawal of the chain. ``uncles`` come from :meth:`sibling`.
        """
        with self._lock:
            transactions, self._pending = self._pending, []
            self._nonces.clear()
            parent = self._evm_header(self.head.hash)
            when = parent.timestamp + self.block_time if timestamp is None else timestamp
            number = parent.block_number + 1
            fork = self.config.fork_at(number, when)
            if uncles and fork_at_least(fork, "paris"):
                raise DevChainError("there are no uncles after the merge")
            if withdrawals and not fork_at_least(fork, "shanghai"):
                raise DevChainError("there are no withdrawals before Shanghai")
            paid = self._withdrawals(withdrawals) if fork_at_least(fork, "shanghai") else None
            block = self._execute(parent, when, coinbase or self.coinbase, extra_data,
                                  transactions, uncles, paid)
            self.importer.import_block(rlp.encode(block))
            if paid:
                self._withdrawal_index = paid[-1].index + 1
            return self.block(number)

    def mine_until(self, number: int) -> Block:
        """Mine blocks until the head is at ``number``; the first one takes whatever is
        pending, the others are empty. The head."""
        block = self.block(self.head.number)
        while block.number < number:
            block = self.mine()
        return block

    def mine_until_fork(self, fork: str) -> Block:
        """Mine until the next block would be in ``fork`` (or a later one); the head."""
        while not fork_at_least(self.next_fork(), fork):
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
            if fork_at_least(self.config.fork_at(number, when), "paris"):
                raise DevChainError("there are no uncles after the merge")
            self._siblings += 1
            block = self._execute(
                parent, when, coinbase or b"\x0c" + self._siblings.to_bytes(19, "big"),
                b"sibling %d" % self._siblings, (), (), None,
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
        while number >= 0:
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
    ) -> BlockAPI:
        """A sealed block: the template (header from the parent, body) executed by py-evm on
        a VM at the parent, which fills in every root and total. Nothing becomes canonical."""
        number = parent.block_number + 1
        vm_class = self.config.vm_class(number, timestamp)
        fork = self.config.fork_at(number, timestamp)
        params: dict[str, Any] = {
            "timestamp": timestamp, "coinbase": coinbase, "extra_data": extra_data,
            # Zero seals before the merge (py-evm's default nonce is not zero); a made-up
            # randomness beacon after it.
            "nonce": ZERO_NONCE,
            "mix_hash": keccak(b"prevrandao %d" % number) if fork_at_least(fork, "paris")
            else ZERO_HASH,
        }
        if not (fork_at_least(fork, "london") and getattr(parent, "base_fee_per_gas", None) is None):
            params["gas_limit"] = parent.gas_limit  # London's first block doubles it instead
        if fork_at_least(fork, "cancun"):
            params["parent_beacon_block_root"] = keccak(b"beacon root %d" % number)
        header = decode_header(rlp.encode(vm_class.create_header_from_parent(parent, **params)))
        template = rlp.decode(
            rlp.encode(block_item(header, transactions, uncles, withdrawals)),
            sedes=vm_class.get_block_class(),
        )
        vm = self._vm(vm_class, vm_class.create_header_from_parent(parent, timestamp=timestamp))
        try:
            return vm.import_block(template).block
        except (ValidationError, ValueError) as exc:
            raise DevChainError(f"block {number} ({fork}) cannot be built: {exc}") from exc

    # -- state ---------------------------------------------------------------------------------

    def _vm(self, vm_class: type[VirtualMachineAPI], header: BlockHeaderAPI) -> VirtualMachineAPI:
        return vm_class(
            header=header,
            chaindb=self._chaindb,
            chain_context=ChainContext(self.chain_id),
            consensus_context=ConsensusContext(self._chaindb.db),
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

    def balance(self, address: Address, at: int | None = None) -> int:
        return self._vm_at(at).state.get_balance(EvmAddress(address))

    def nonce(self, address: Address, at: int | None = None) -> int:
        return self._vm_at(at).state.get_nonce(EvmAddress(address))

    def code(self, address: Address, at: int | None = None) -> bytes:
        return self._vm_at(at).state.get_code(EvmAddress(address))

    def storage(self, address: Address, slot: int, at: int | None = None) -> int:
        return self._vm_at(at).state.get_storage(EvmAddress(address), slot)

    def call(
        self,
        to: Address,
        data: bytes = b"",
        *,
        sender: Address = ZERO_ADDRESS,
        value: int = 0,
        gas: int = 30_000_000,
        at: int | None = None,
    ) -> CallOutcome:
        """Run a message call against the state after block ``at`` (the head by default), in
        that block's environment, and forget its effects. For checking what the chain holds;
        the RPC's eth_call is :mod:`ethread.methods`' business, not this."""
        vm = self._vm_at(at)
        code_address = EvmAddress(to)
        code = vm.state.get_code(code_address)
        if code[:3] == b"\xef\x01\x00" and len(code) == 23:  # EIP-7702 delegation
            code_address = EvmAddress(code[3:])
            code = vm.state.get_code(code_address)
        computation = vm.execute_bytecode(
            origin=EvmAddress(sender), gas_price=0, gas=gas, to=EvmAddress(to),
            sender=EvmAddress(sender), value=value, data=data, code=code,
            code_address=code_address,
        )
        return CallOutcome(output=bytes(computation.output), success=computation.is_success,
                           gas_used=computation.get_gas_used())
