"""py-evm's virtual machines for running messages (eth_call, gas estimation, access lists),
with an account database and an interpreter loop that do less per message than py-evm's.

A message runs on a snapshot reverted afterwards (:mod:`.message`), and py-evm's account
database forgets every decoded account at a revert. :class:`LeanAccountDB` keeps what it
decodes and encodes in bounded tables (:class:`MessageTables`), changes one field without
py-evm's generic copy, and reads code without the block-witness bookkeeping.
It writes exactly what py-evm writes (the same RLP under the same keys, through the same
journal), so state roots, snapshots and reverts behave the same (:class:`LeanSnapshots`,
:class:`LeanTransientSnapshots`, :func:`discard_journal`).

:class:`LeanComputation` runs py-evm's opcodes with py-evm's loop, but charges a plain
opcode's fixed gas (py-evm's ``_FastOpcode``) in the loop and binds the stack's methods up
front. The opcodes of :data:`_LEAN_LOGIC` work on the stack's list and the memory's bytes
directly. The gas charged, the errors (the same exception and text) and their order are
py-evm's; opcodes and precompiles are read from the fork's computation class, never listed
here. With py-evm's DEBUG2 logging on, py-evm's own loop runs. Only messages use these
classes: blocks are executed and imported with py-evm's own.

Why keep it: ``benchmarks/bench_call.py --loop`` measures it against py-evm's loop. What it
costs: py-evm is pinned to one release (setup.cfg), ``tests/evm/test_lean_interpreter*.py``
compare it with py-evm's loop, and what it reads of py-evm's private state is checked at each
upgrade:

- the journal (``eth.db.journal``): ``JournalDB._journal``, ``._wrapped_db``; the journal's
  ``_checkpoint_stack``, ``_journal_data``, ``_clears_at``, ``_current_values``,
  ``_ignore_wrapped_db``; the markers ``DELETE_WRAPPED`` and ``REVERT_TO_WRAPPED``;
- the account database (``eth.db.account.AccountDB``): ``_batchdb``, ``_batchtrie``,
  ``_trie`` (a ``HashTrie`` whose ``_db`` holds ``root_hash``), ``_trie_logger``,
  ``_trie_cache``, ``_journaldb``, ``_journaltrie``, ``_account_cache``,
  ``_account_stores``, ``_dirty_accounts``, ``_dirty_account_stores()``,
  ``_get_encoded_account()``, ``_get_storage_root()``, ``_set_storage_root()``,
  ``_get_address_store()``, ``_raw_store_db``, ``_reset_access_counters()``; a storage
  lookup's ``_trie_nodes_batch``, ``_write_trie``, ``_starting_root_hash`` and a storage
  database's constructor fields (:mod:`ethread.methods.overlay_trie`);
- states: ``BaseState.snapshot``/``revert`` and ``CancunState``'s, ``_account_db``,
  ``_transient_storage_class``, ``transient_storage._db``;
- computations: the fields ``BaseComputation.__init__`` and ``ShanghaiComputation.__init__``
  set, ``_configure_gas_meter()``, ``Memory._bytes``, ``Stack.values``, ``CodeStream``'s
  ``_raw_code_bytes``, ``program_counter``, ``valid_positions`` and ``invalid_positions``,
  ``GasMeter.gas_remaining``, the loggers' ``show_debug2``, ``memory_gas_cost``,
  ``consume_initcode_gas_cost``, ``contracts_created``,
  ``transaction_context.get_next_log_counter()``;
- opcodes: ``eth.vm.opcode._FastOpcode`` (``gas_cost``, ``logic_fn``, ``mnemonic``), the
  logic functions in ``eth.vm.logic`` that have a lean twin, and Byzantium's static-context
  wrapper of LOG (``__wrapped__``, its qualified name);
- messages: ``Message.__slots__`` and ``_is_delegation`` (:class:`CheckedMessage`), and the
  executors' ``build_computation``, ``calc_message_refund``, ``get_code_at_address``,
  ``calculate_gas_refund``, ``calc_data_floor_gas`` (:mod:`.message`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rlp
from eth._utils.numeric import ceil32
from eth.constants import (
    BLANK_ROOT_HASH,
    EMPTY_SHA3,
    GAS_LOGDATA,
    GAS_LOGTOPIC,
    UINT_64_MAX,
    UINT_256_MAX,
)
from eth.db.account import AccountDB
from eth.db.journal import DELETE_WRAPPED, REVERT_TO_WRAPPED, JournalDB
from eth.exceptions import (
    FullStack,
    Halt,
    InsufficientFunds,
    InsufficientStack,
    InvalidInstruction,
    InvalidJumpDestination,
    OutOfGas,
    Revert,
    WriteProtection,
)
from eth.rlp.accounts import Account
from eth.validation import validate_canonical_address, validate_uint64, validate_uint256
from eth.vm.code_stream import CodeStream
from eth.vm.computation import BaseComputation, memory_gas_cost
from eth.vm.forks.shanghai.computation import ShanghaiComputation
from eth.vm.gas_meter import GasMeter
from eth.vm.interrupt import MissingBytecode
from eth.vm.logic import arithmetic as arithmetic_logic
from eth.vm.logic import block as block_logic
from eth.vm.logic import comparison as comparison_logic
from eth.vm.logic import context as context_logic
from eth.vm.logic import duplication as duplication_logic
from eth.vm.logic import flow as flow_logic
from eth.vm.logic import logging as logging_logic
from eth.vm.logic import memory as memory_logic
from eth.vm.logic import stack as stack_logic
from eth.vm.logic import swap as swap_logic
from eth.vm.logic import system as system_logic
from eth.vm.logic.invalid import InvalidOpcode
from eth.vm.memory import Memory
from eth.vm.message import Message as EvmMessage
from eth.vm.opcode import _FastOpcode
from eth.vm.opcode_values import JUMPDEST, STOP
from eth.vm.stack import Stack, to_bytes
from eth_typing import Address, Hash32

from ..lru import LRU
from .classes import made, start_computation, subclass
from .hooks import WATCHED

MAX_KEPT_ACCOUNTS = 1 << 13
"""Entries in each of the two account tables: a few MB at most."""
MAX_KEPT_CODE_BYTES = 16 << 20
"""The code table's bound in bytes; code larger than a 64th of it is not kept (one large
override must not flush the rest)."""
MAX_KEPT_POSITION_CODE_BYTES = 1 << 18
"""The jump positions' bound in bytes of code; code larger than a 16th of it is not kept."""
MAX_KEPT_INTRINSIC_GAS = 4096
"""Entries in the intrinsic gas table (small integers)."""
MAX_KEPT_TRIE_NODES = 1 << 16
"""Decoded trie nodes a simulation's overlay tries share (:mod:`.overlay_trie`)."""
MAX_KEPT_HEADERS = 256
"""py-evm's headers of simulated blocks (:mod:`.simulate`)."""

AccountFields = tuple[int, int, bytes, bytes]
"""An account's nonce, balance, storage root and code hash."""
JumpPositions = tuple[set[int], set[int], int]
"""py-evm's ``CodeStream`` sets of valid and invalid positions, and their code's length."""

_NO_ACCOUNT = Account()
"""The account of an address with none (immutable: one serves every read)."""


def _third(value: JumpPositions) -> int:
    return value[2]


class MessageTables:
    """What messages on any state may share: bounded :class:`~ethread.lru.LRU` tables keyed by
    content, so never stale. Owned by a :class:`~.message.CallStates` (one per dispatcher and
    backend), or by one run alone."""

    def __init__(self) -> None:
        self.decoded: LRU[bytes, Account] = LRU(MAX_KEPT_ACCOUNTS)
        self.encoded: LRU[AccountFields, tuple[Account, bytes]] = LRU(MAX_KEPT_ACCOUNTS)
        self.code: LRU[bytes, bytes] = LRU(MAX_KEPT_ACCOUNTS, max_bytes=MAX_KEPT_CODE_BYTES,
                                           weigh=len)
        self.jump_positions: LRU[bytes, JumpPositions] = LRU(
            MAX_KEPT_ACCOUNTS, max_bytes=MAX_KEPT_POSITION_CODE_BYTES, weigh=_third)
        self.intrinsic_gas: LRU[tuple[Any, bool, int, int], int] = LRU(MAX_KEPT_INTRINSIC_GAS)
        """py-evm's intrinsic gas of a message without an access list, by all the rule reads of it."""
        self.trie_nodes: LRU[bytes, Any] = LRU(MAX_KEPT_TRIE_NODES)
        """Stored trie nodes by their hash, decoded (a simulation's overlay tries)."""
        self.evm_headers: LRU[tuple[type, bytes], Any] = LRU(MAX_KEPT_HEADERS)
        """py-evm's header of a simulated block by its class and RLP."""
        self.system_writes: LRU[tuple[type, bytes, int | None], Any] = LRU(MAX_KEPT_HEADERS)
        """A simulated block's system writes without state overrides, by VM class, draft
        header's RLP and blob base fee: the state root after them, the trie nodes they made
        and py-evm's header at that root (:mod:`.simulate`); an empty tuple where the writes
        deleted a node (the block then makes them on its own state)."""

    def decode_account(self, encoded: bytes) -> Account:
        """The account ``encoded`` holds (py-evm's RLP decoding, once per distinct encoding)."""
        account = self.decoded.get(encoded)
        if account is None:
            account = rlp.decode(encoded, sedes=Account)
            self.decoded.put(encoded, account)
        return account

    def encode_account(self, account: Account) -> bytes:
        """The RLP of ``account`` (py-evm's encoding, once per distinct account)."""
        fields = (account.nonce, account.balance, account.storage_root, account.code_hash)
        kept = self.encoded.get(fields)
        if kept is None:
            kept = self._keep(fields, account)
        return kept[1]

    def account_with(self, fields: AccountFields) -> tuple[Account, bytes]:
        """The account with these fields and its RLP (each made once per distinct account)."""
        kept = self.encoded.get(fields)
        if kept is None:
            kept = self._keep(fields, Account(*fields))
        return kept

    def _keep(self, fields: AccountFields, account: Account) -> tuple[Account, bytes]:
        kept = (account, rlp.encode(account, sedes=Account))
        self.encoded.put(fields, kept)
        return kept

    def keep_code(self, code_hash: bytes, code: bytes) -> None:
        """Keep ``code`` under its hash (unless it is larger than a 64th of the bound)."""
        if len(code) <= MAX_KEPT_CODE_BYTES // 64:
            self.code.put(code_hash, code)

    def positions(self, code: bytes) -> tuple[set[int], set[int]]:
        """The jump positions of ``code`` (filled as jumps are checked), shared per code."""
        kept = self.jump_positions.get(code)
        if kept is None:
            kept = (set(), set(), len(code))
            if len(code) <= MAX_KEPT_POSITION_CODE_BYTES // 16:
                self.jump_positions.put(code, kept)
        return kept[0], kept[1]


def discard_journal(db: Any, checkpoint: Any) -> None:
    """py-evm's ``JournalDB.discard``, done in place when ``checkpoint`` is the journal's last
    one and nothing was cleared (a message's snapshot); any other case is py-evm's own."""
    journal = db._journal
    stack = journal._checkpoint_stack
    data = journal._journal_data
    if (stack and stack[-1] == checkpoint and data and next(reversed(data)) == checkpoint
            and not journal._clears_at):
        stack.pop()
        rollback = data.popitem()[1]
        current = journal._current_values
        for key, value in rollback.items():
            if value is REVERT_TO_WRAPPED:
                current.pop(key, None)
            else:  # (DELETE_WRAPPED, or the bytes it held)
                current[key] = value
        return
    journal.discard(checkpoint)


class LeanJournalDB(JournalDB):
    """py-evm's journaled database with item reads and writes done in one call each."""

    __slots__ = ()

    def __getitem__(self, key: bytes) -> bytes:
        journal: Any = self._journal
        value = journal._current_values.get(
            key, REVERT_TO_WRAPPED if journal._ignore_wrapped_db else None)
        if value is None:
            found: bytes = self._wrapped_db[key]
            return found
        if value is DELETE_WRAPPED:
            raise KeyError(key, "item is deleted in JournalDB, and will be deleted from the "
                                "wrapped DB")
        if value is REVERT_TO_WRAPPED:
            raise KeyError(key, "item is deleted in JournalDB, and is presumed gone from the "
                                "wrapped DB")
        kept: bytes = value
        return kept

    def __setitem__(self, key: bytes, value: bytes) -> None:
        journal: Any = self._journal
        checkpoints = journal._journal_data
        revert = checkpoints[next(reversed(checkpoints))]  # (the last checkpoint's changes)
        current = journal._current_values
        if key not in revert:
            revert[key] = current.get(key, REVERT_TO_WRAPPED)
        current[key] = value


class LeanAccountDB(AccountDB):
    """py-evm's account database with :class:`MessageTables` that outlive its reverts."""

    def __init__(self, db: Any, state_root: Hash32 = BLANK_ROOT_HASH) -> None:
        super().__init__(db, state_root)
        self._journaldb = LeanJournalDB(self._batchdb)
        self._journaltrie = LeanJournalDB(self._trie_cache)
        self.tables = MessageTables()
        """Its own until the owner of its state shares others (:meth:`use_tables`)."""

    def use_tables(self, tables: MessageTables) -> None:
        """Read through ``tables`` from now on (those of the object that owns the state)."""
        self.tables = tables

    _warm: set[Any]
    """Addresses and (address, slot) pairs accessed in the running transaction."""
    _warmed: list[Any]
    """The same, in the order they were first accessed (what a discard takes back)."""
    _warm_marks: list[tuple[int, int]]
    """(checkpoint, length of :attr:`_warmed` when it was recorded), oldest first."""

    def _reset_access_counters(self) -> None:
        """py-evm's, in plain sets instead of a journaled database (its readers are here)."""
        self._warm = set()
        self._warmed = []
        self._warm_marks = []

    def is_address_warm(self, address: Address) -> bool:
        """Whether the running transaction has accessed ``address`` (EIP-2929)."""
        return address in self._warm

    def mark_address_warm(self, address: Address) -> None:
        """Note ``address`` as accessed (undone by a discard of an earlier checkpoint)."""
        warm = self._warm
        if address not in warm:
            warm.add(address)
            self._warmed.append(address)

    def is_storage_warm(self, address: Address, slot: int) -> bool:
        """Whether the running transaction has accessed ``slot`` of ``address``."""
        return (address, slot) in self._warm

    def mark_storage_warm(self, address: Address, slot: int) -> None:
        """Note ``slot`` of ``address`` as accessed (undone as an address is)."""
        key = (address, slot)
        warm = self._warm
        if key not in warm:
            warm.add(key)
            self._warmed.append(key)

    def record(self) -> Any:
        """py-evm's, with the access sets marked rather than journaled."""
        checkpoint = self._journaldb.record()
        self._journaltrie.record(checkpoint)
        for _, store in self._dirty_account_stores():
            store.record(checkpoint)
        self._warm_marks.append((checkpoint, len(self._warmed)))
        return checkpoint

    def discard(self, checkpoint: Any) -> None:
        """py-evm's; what was accessed since ``checkpoint`` is cold again."""
        discard_journal(self._journaldb, checkpoint)  # (first: refuses one it does not know)
        discard_journal(self._journaltrie, checkpoint)
        self._account_cache.clear()
        stores = self._account_stores
        for address in self._dirty_accounts:
            stores[address].discard(checkpoint)
        marks, warm, warmed = self._warm_marks, self._warm, self._warmed
        while marks:
            recorded, length = marks.pop()
            if recorded == checkpoint:
                while len(warmed) > length:
                    warm.discard(warmed.pop())
                break

    def commit(self, checkpoint: Any) -> None:
        """py-evm's; what was accessed since ``checkpoint`` stays warm."""
        self._journaldb.commit(checkpoint)
        self._journaltrie.commit(checkpoint)
        for _, store in self._dirty_account_stores():
            store.commit(checkpoint)
        marks = self._warm_marks
        while marks and marks.pop()[0] != checkpoint:
            pass

    def _get_account(self, address: Address, from_journal: bool = True) -> Account:
        if from_journal:
            cached = self._account_cache.get(address)
            if cached is not None:
                return cached
        encoded = self._get_encoded_account(address, from_journal)
        account = self.tables.decode_account(encoded) if encoded else _NO_ACCOUNT
        if from_journal:
            self._account_cache[address] = account
        return account

    def _set_account(self, address: Address, account: Account) -> None:
        self._account_cache[address] = account
        self._journaltrie[address] = self.tables.encode_account(account)

    def _set_fields(self, address: Address, fields: AccountFields) -> None:
        """:meth:`_set_account` of the account with ``fields``."""
        account, encoded = self.tables.account_with(fields)
        self._account_cache[address] = account
        self._journaltrie[address] = encoded

    def set_nonce(self, address: Address, nonce: int) -> None:
        """py-evm's, building the changed account directly."""
        validate_canonical_address(address, title="Storage Address")
        validate_uint64(nonce, title="Nonce")
        account = self._get_account(address)
        self._set_fields(address, (nonce, account.balance, account.storage_root,
                                   account.code_hash))

    def increment_nonce(self, address: Address) -> None:
        """py-evm's (:meth:`set_nonce` of the nonce plus one), reading the account once."""
        if address.__class__ is not bytes or len(address) != 20:
            validate_canonical_address(address, title="Storage Address")
        account = self._get_account(address)
        nonce = account.nonce + 1
        if nonce > UINT_64_MAX:  # (an account's nonce is an int, at least 0)
            validate_uint64(nonce, title="Nonce")
        self._set_fields(address, (nonce, account.balance, account.storage_root,
                                   account.code_hash))

    def touch_account(self, address: Address) -> None:
        """py-evm's: the account written back as it is."""
        if address.__class__ is not bytes or len(address) != 20:
            validate_canonical_address(address, title="Storage Address")
        self._set_account(address, self._get_account(address))

    def set_balance(self, address: Address, balance: int) -> None:
        """py-evm's, building the changed account directly."""
        validate_canonical_address(address, title="Storage Address")
        validate_uint256(balance, title="Account Balance")
        account = self._get_account(address)
        self._set_fields(address, (account.nonce, balance, account.storage_root,
                                   account.code_hash))

    @property  # type: ignore[override]
    def state_root(self) -> Hash32:
        """py-evm's, read from the trie itself rather than through its wrapper."""
        trie: Any = self._trie._db
        root: Hash32 = trie.root_hash
        return root

    @state_root.setter
    def state_root(self, value: Hash32) -> None:
        trie: Any = self._trie._db
        if trie.root_hash != value:
            self._trie_cache.reset_cache()
            trie.root_hash = value

    def get_code(self, address: Address) -> bytes:
        """py-evm's, without block-witness notes, kept by hash in :class:`MessageTables`."""
        validate_canonical_address(address, title="Storage Address")
        code_hash = self.get_code_hash(address)
        if code_hash == EMPTY_SHA3:
            return b""
        tables = self.tables
        code = tables.code.get(code_hash)
        if code is None:
            try:
                code = self._journaldb[code_hash]
            except KeyError:
                raise MissingBytecode(code_hash) from KeyError
            tables.keep_code(code_hash, code)
        return code


def _push(size: int) -> Any:
    """py-evm's PUSH<size> (``push_XX``) without its nested calls."""

    def push(computation: Any) -> None:
        code = computation.code
        start = code.program_counter
        code.program_counter = start + size
        value = code._raw_code_bytes[start:start + size]
        if len(value) != size:
            value = value.ljust(size, b"\x00")
        values = computation._stack.values
        if len(values) > 1023:
            raise FullStack("Stack limit reached")
        values.append(value)

    return push


def _dup(position: int) -> Any:
    """py-evm's DUP<position> (``Stack.dup``) on the stack's list itself."""

    def dup(computation: Any) -> None:
        values = computation._stack.values
        if len(values) > 1023:
            raise FullStack("Stack limit reached")
        try:
            values.append(values[-position])
        except IndexError:
            raise InsufficientStack(f"Insufficient stack items for DUP{position}") from None

    return dup


def _swap(position: int) -> Any:
    """py-evm's SWAP<position> (``Stack.swap``) on the stack's list itself."""
    index = -position - 1

    def swap(computation: Any) -> None:
        values = computation._stack.values
        try:
            values[-1], values[index] = values[index], values[-1]
        except IndexError:
            raise InsufficientStack(f"Insufficient stack items for SWAP{position}") from None

    return swap


def _pop(computation: Any) -> None:
    """py-evm's POP (``Stack.pop1_any``) on the stack's list itself."""
    try:
        computation._stack.values.pop()
    except IndexError:
        raise InsufficientStack("Wanted 1 stack item, had none") from None


def _binary(operation: Callable[[int, int], int]) -> Any:
    """A py-evm logic function of two stack items (the top one first) and one result."""

    def binary(computation: Any) -> None:
        values = computation._stack.values
        if len(values) < 2:
            raise InsufficientStack(f"Wanted 2 stack items, only had {len(values)}")
        left = values.pop()
        right = values.pop()
        values.append(operation(left if left.__class__ is int else int.from_bytes(left, "big"),
                                right if right.__class__ is int else int.from_bytes(right, "big")))

    return binary


def _unary(operation: Callable[[int], int]) -> Any:
    """A py-evm logic function of one stack item (``stack_pop1_int``) and one result."""

    def unary(computation: Any) -> None:
        values = computation._stack.values
        try:
            item = values.pop()
        except IndexError:
            raise InsufficientStack("Wanted 1 stack item, had none") from None
        values.append(operation(item if item.__class__ is int else int.from_bytes(item, "big")))

    return unary


def _pop_int(values: list[Any]) -> int:
    """py-evm's ``stack_pop1_int`` on the stack's list itself."""
    try:
        item = values.pop()
    except IndexError:
        raise InsufficientStack("Wanted 1 stack item, had none") from None
    return item if item.__class__ is int else int.from_bytes(item, "big")


def _push_checked(values: list[Any], item: int | bytes) -> None:
    """py-evm's ``stack_push_int`` of a stack word by construction (only the limit checked)."""
    if len(values) > 1023:
        raise FullStack("Stack limit reached")
    values.append(item)


def _mstore(computation: Any) -> None:
    """py-evm's MSTORE: the word (right-aligned in 32 bytes) written at the offset."""
    values = computation._stack.values
    start = _pop_int(values)
    try:
        value = values.pop()
    except IndexError:
        raise InsufficientStack("Wanted 1 stack item, had none") from None
    word = (value.to_bytes(32, "big") if value.__class__ is int
            else to_bytes(value).rjust(32, b"\x00")[-32:])
    if start + 32 > len(computation._memory._bytes):  # (else: nothing to charge or grow)
        computation.extend_memory(start, 32)
    computation._memory._bytes[start:start + 32] = word


def _mload(computation: Any) -> None:
    """py-evm's MLOAD: the 32 bytes at the offset, pushed as bytes."""
    values = computation._stack.values
    start = _pop_int(values)
    if start + 32 > len(computation._memory._bytes):  # (else: nothing to charge or grow)
        computation.extend_memory(start, 32)
    values.append(bytes(computation._memory._bytes[start:start + 32]))  # (one was popped)


def _calldataload(computation: Any) -> None:
    """py-evm's CALLDATALOAD."""
    values = computation._stack.values
    start = _pop_int(values)
    word = computation.msg.data_as_bytes[start:start + 32]
    values.append(word.ljust(32, b"\x00").lstrip(b"\x00"))  # (one was popped)


def _output(computation: Any) -> bytes:
    """RETURN's and REVERT's first step: the memory range read as the output."""
    values = computation._stack.values
    if len(values) < 2:
        raise InsufficientStack(f"Wanted 2 stack items, only had {len(values)}")
    start = _pop_int(values)
    size = _pop_int(values)
    if not size or start + size > len(computation._memory._bytes):  # (else: nothing to charge or grow)
        computation.extend_memory(start, size)
    output: bytes = bytes(computation._memory._bytes[start:start + size])
    computation.output = output
    return output


def _return(computation: Any) -> None:
    """py-evm's RETURN: the output read from memory, then the halt."""
    _output(computation)
    raise Halt("RETURN")


def _revert(computation: Any) -> None:
    """py-evm's REVERT: the output read from memory, then the Revert error carrying it."""
    raise Revert(_output(computation))


def _log(topic_count: int, own_entries: bool) -> Any:
    """py-evm's LOG<topic_count> (``log_XX``, with Byzantium's static-context check; before
    Byzantium no message is static). With ``own_entries`` (a class whose ``add_log_entry`` is
    py-evm's own) the entry is appended without that method's checks."""

    def log(computation: Any) -> None:
        if computation.msg.is_static:
            raise WriteProtection("Cannot modify state while inside of a STATICCALL context")
        values = computation._stack.values
        if len(values) < 2:
            raise InsufficientStack(f"Wanted 2 stack items, only had {len(values)}")
        start = _pop_int(values)
        size = _pop_int(values)
        if topic_count > 1:
            topics: tuple[int, ...] = computation._stack.pop_ints(topic_count)
        elif topic_count:
            topics = (_pop_int(values),)
        else:
            topics = ()
        cost = GAS_LOGDATA * size + GAS_LOGTOPIC * topic_count
        meter = computation._gas_meter
        remaining = meter.gas_remaining
        if cost > remaining:  # GasMeter.consume_gas's check and words
            raise OutOfGas(f"Out of gas: Needed {cost} - Remaining {remaining} - Reason: "
                           "Log topic and data gas cost")
        meter.gas_remaining = remaining - cost
        if not size or start + size > len(computation._memory._bytes):  # (else: nothing to charge or grow)
            computation.extend_memory(start, size)
        data = bytes(computation._memory._bytes[start:start + size])
        account = computation.msg.storage_address
        if own_entries:
            computation._log_entries.append(
                (computation.transaction_context.get_next_log_counter(), account, topics, data))
        else:
            computation.add_log_entry(account=account, topics=topics, data=data)

    return log


def _lean_log(logic: Any, own_entries: bool) -> Any:
    """The lean LOG for py-evm's ``logic`` of a LOG opcode (plain or static-checked), else None."""
    for topic_count, plain in enumerate(_PY_EVM_LOGS):
        if logic is plain or (getattr(logic, "__wrapped__", None) is plain
                              and logic.__qualname__.startswith("ensure_no_static.")):
            return _LEAN_LOGS[own_entries][topic_count]
    return None


_PY_EVM_LOGS = (logging_logic.log0, logging_logic.log1, logging_logic.log2, logging_logic.log3,
                logging_logic.log4)
_LEAN_LOGS = {own: tuple(_log(n, own) for n in range(5)) for own in (False, True)}


def _jump_to(computation: Any, destination: int) -> None:
    code = computation.code
    code.program_counter = destination
    if code.peek() != JUMPDEST:
        raise InvalidJumpDestination("Invalid Jump Destination")
    if not code.is_valid_opcode(destination):
        raise InvalidInstruction("Jump resulted in invalid instruction")


def _jump(computation: Any) -> None:
    """py-evm's JUMP."""
    _jump_to(computation, _pop_int(computation._stack.values))


def _jumpi(computation: Any) -> None:
    """py-evm's JUMPI."""
    values = computation._stack.values
    if len(values) < 2:
        raise InsufficientStack(f"Wanted 2 stack items, only had {len(values)}")
    destination = _pop_int(values)
    if _pop_int(values):
        _jump_to(computation, destination)


def _watched(before: Any, cost: int, logic: Any, mnemonic: str) -> Any:
    """A plain opcode behind a watcher (:func:`~.hooks.watched_class`): the watcher, its gas, its logic."""

    def run(computation: Any) -> None:
        before(computation)
        meter = computation._gas_meter
        remaining = meter.gas_remaining
        if cost > remaining:
            raise OutOfGas(f"Out of gas: Needed {cost} - Remaining {remaining} - Reason: {mnemonic}")
        meter.gas_remaining = remaining - cost
        logic(computation)

    return run


def _number(computation: Any) -> None:
    _push_checked(computation._stack.values, computation.state.block_number)


def _caller(computation: Any) -> None:
    _push_checked(computation._stack.values, computation.msg.sender)


def _address(computation: Any) -> None:
    _push_checked(computation._stack.values, computation.msg.storage_address)


def _callvalue(computation: Any) -> None:
    _push_checked(computation._stack.values, computation.msg.value)


def _calldatasize(computation: Any) -> None:
    _push_checked(computation._stack.values, len(computation.msg.data))


_LEAN_PUSHES = [_push(size) for size in range(33)]
_PUSH_SIZES = {push: size for size, push in enumerate(_LEAN_PUSHES)}
"""The size of each lean PUSH (run in the loop itself: :func:`_fast_table`)."""
_WORD = UINT_256_MAX
_LEAN_PURE: dict[Any, Any] = {
    arithmetic_logic.add: _binary(lambda left, right: (left + right) & _WORD),
    arithmetic_logic.sub: _binary(lambda left, right: (left - right) & _WORD),
    arithmetic_logic.mul: _binary(lambda left, right: (left * right) & _WORD),
    arithmetic_logic.shl: _binary(lambda shift, value: 0 if shift >= 256 else (value << shift) & _WORD),
    arithmetic_logic.shr: _binary(lambda shift, value: 0 if shift >= 256 else value >> shift),
    comparison_logic.lt: _binary(lambda left, right: 1 if left < right else 0),
    comparison_logic.gt: _binary(lambda left, right: 1 if left > right else 0),
    comparison_logic.eq: _binary(lambda left, right: 1 if left == right else 0),
    comparison_logic.and_op: _binary(lambda left, right: left & right),
    comparison_logic.or_op: _binary(lambda left, right: left | right),
    comparison_logic.xor: _binary(lambda left, right: left ^ right),
    comparison_logic.iszero: _unary(lambda value: 1 if value == 0 else 0),
    comparison_logic.not_op: _unary(lambda value: _WORD - value),
}
"""py-evm's pure arithmetic and comparison logic (the same results: py-evm's formulas)."""

_LEAN_LOGIC: dict[Any, Any] = {
    **_LEAN_PURE,
    **{getattr(stack_logic, f"push{size}"): _LEAN_PUSHES[size] for size in range(33)},
    **{getattr(duplication_logic, f"dup{n}"): _dup(n) for n in range(1, 17)},
    **{getattr(swap_logic, f"swap{n}"): _swap(n) for n in range(1, 17)},
    stack_logic.pop: _pop,
    flow_logic.jump: _jump,
    flow_logic.jumpi: _jumpi,
    memory_logic.mstore: _mstore,
    memory_logic.mload: _mload,
    context_logic.calldataload: _calldataload,
    context_logic.caller: _caller,
    context_logic.address: _address,
    context_logic.callvalue: _callvalue,
    context_logic.calldatasize: _calldatasize,
    block_logic.number: _number,
    system_logic.return_op: _return,
    system_logic.revert: _revert,
}
"""py-evm's logic functions with a lean equivalent, by the function."""


class LeanStack(Stack):
    """py-evm's stack with ``pop_ints`` done in one pass (the same items, order and errors)."""

    __slots__ = ()

    def pop_ints(self, num_items: int) -> tuple[int, ...]:
        """The top ``num_items`` items as integers, the top first."""
        values = self.values
        if num_items > len(values):
            raise InsufficientStack(f"Wanted {num_items} stack items, only had {len(values)}")
        popped = values[-num_items:]  # (py-evm's slice, whatever num_items is)
        del values[-num_items:]
        popped.reverse()
        return tuple([item if item.__class__ is int else int.from_bytes(item, "big")  # type: ignore[arg-type]
                      for item in popped])


FastOpcodes = dict[int, tuple[int, Any, str]]
"""A computation class's plain opcodes: value -> (fixed gas, logic, mnemonic)."""


def _fast_opcodes(cls: Any) -> FastOpcodes | None:
    """The plain opcodes of ``cls`` (kept on the class), or None when the loop must be py-evm's."""
    kept: FastOpcodes | None = cls.__dict__.get("_fast_opcodes")
    if kept is None:
        kept = {}
        own_entries = cls.add_log_entry is BaseComputation.add_log_entry
        if cls.consume_gas is BaseComputation.consume_gas:  # no class charges gas its own way
            for value, opcode in cls.opcodes.items():
                before, inner = getattr(opcode, WATCHED, (None, None))
                if type(opcode) is _FastOpcode:
                    logic = (_LEAN_LOGIC.get(opcode.logic_fn)
                             or _lean_log(opcode.logic_fn, own_entries)
                             or opcode.logic_fn)
                    kept[value] = (opcode.gas_cost, logic, opcode.mnemonic)
                elif type(inner) is _FastOpcode and inner.logic_fn in _LEAN_LOGIC:
                    kept[value] = (0, _watched(before, inner.gas_cost, _LEAN_LOGIC[inner.logic_fn],
                                               inner.mnemonic), inner.mnemonic)
        cls._fast_opcodes = kept
    return kept


PY_EVM_INIT, BASE_INIT, SHANGHAI_INIT = "py-evm", "base", "shanghai"
"""How a lean computation class sets up a computation: py-evm's constructors, or the fields
of ``BaseComputation`` set directly, alone or with Shanghai's warm coinbase."""


def _init_kind(cls: Any) -> str:
    """How ``cls`` sets up a computation (worked out once per class, kept on it)."""
    kept: str | None = cls.__dict__.get("_init_kind")
    if kept is None:
        inits = [k for k in cls.__mro__ if "__init__" in k.__dict__ and k is not LeanComputation]
        kept = (BASE_INIT if inits[0] is BaseComputation
                else SHANGHAI_INIT if inits[:2] == [ShanghaiComputation, BaseComputation]
                else PY_EVM_INIT)
        cls._init_kind = kept
    return kept


def _fast_table(cls: Any) -> list[tuple[int, Any, str, int] | None]:
    """:func:`_fast_opcodes` of ``cls`` by value, with the size of each PUSH the loop runs itself."""
    kept: list[tuple[int, Any, str, int] | None] | None = cls.__dict__.get("_fast_table")
    if kept is None:
        fast = _fast_opcodes(cls) or {}
        kept = [None if value not in fast
                else (*fast[value], _PUSH_SIZES.get(fast[value][1], 0)) for value in range(256)]
        cls._fast_table = kept
    return kept


class LeanComputation:
    """Put before a fork's computation class: the loop of the module docstring."""

    _stack: Any
    _gas_meter: Any
    _memory: Any
    logger: Any
    state: Any
    msg: Any
    transaction_context: Any
    code: Any
    children: list[Any]
    accounts_to_delete: list[Any]
    beneficiaries: list[Any]
    _log_entries: list[Any]
    data_floor_cost: int
    _configure_gas_meter: Callable[[], Any]

    def __init__(self, state: Any, message: Any, transaction_context: Any) -> None:
        kind = _init_kind(type(self))
        if kind is PY_EVM_INIT:
            super().__init__(state, message, transaction_context)  # type: ignore[call-arg]
        else:  # BaseComputation's (and Shanghai's) fields, set here
            self.state = state
            self.msg = message
            self.transaction_context = transaction_context
            code = message.code
            self.code = stream = CodeStream(code)
            # whether a position starts an opcode depends only on the code: shared
            stream.valid_positions, stream.invalid_positions = (
                state._account_db.tables.positions(code))
            self._gas_meter = self._configure_gas_meter()
            self.children = []
            self.accounts_to_delete = []
            self.beneficiaries = []
            self._memory = Memory()
            self._log_entries = []
            self.data_floor_cost = 0
            if kind is SHANGHAI_INIT:  # EIP-3651: the coinbase is warm
                state.mark_address_warm(state.coinbase)
        self._stack = stack = LeanStack()
        # what py-evm's cached properties would bind on first use
        self.stack_pop_ints = stack.pop_ints
        self.stack_pop_bytes = stack.pop_bytes
        self.stack_pop_any = stack.pop_any
        self.stack_pop1_int = stack.pop1_int
        self.stack_pop1_bytes = stack.pop1_bytes
        self.stack_pop1_any = stack.pop1_any
        self.stack_push_int = stack.push_int
        self.stack_push_bytes = stack.push_bytes

    def extend_memory(self, start_position: int, size: int) -> None:
        """py-evm's, returning at once when the memory already holds the range."""
        if (start_position.__class__ is not int or size.__class__ is not int or size <= 0
                or start_position < 0 or start_position > UINT_256_MAX or size > UINT_256_MAX
                or self.logger.show_debug2):
            base: Any = super()
            base.extend_memory(start_position, size)
            return
        before_size = len(self._memory._bytes)  # (always whole words)
        end = start_position + size
        if end <= before_size:
            return
        after_size = ceil32(end)
        fee = memory_gas_cost(after_size) - memory_gas_cost(before_size)
        if fee > 0:
            meter = self._gas_meter
            remaining = meter.gas_remaining
            if fee > remaining or meter.logger.show_debug2:  # (its words, its log)
                meter.consume_gas(fee, reason=f"Expanding memory {before_size} -> {after_size}")
            else:
                meter.gas_remaining = remaining - fee
        memory = self._memory
        try:  # Memory.extend's growth (a fresh buffer when a view of the old one is out)
            memory._bytes.extend(bytes(after_size - before_size))
        except BufferError:
            memory._bytes = memory._bytes + bytearray(after_size - before_size)

    @classmethod
    def apply_message(cls, state: Any, message: Any, transaction_context: Any,
                      parent_computation: Any = None) -> Any:
        """py-evm's ``apply_message``; a run's first message skips its snapshot (the run's own undoes it)."""
        if parent_computation is not None or message.depth:
            base: Any = super()
            return base.apply_message(state, message, transaction_context, parent_computation)
        if message.should_transfer_value and message.value:  # py-evm's transfer, its words
            sender_balance = state.get_balance(message.sender)
            if sender_balance < message.value:
                raise InsufficientFunds(f"Insufficient funds: {sender_balance} < {message.value}")
            state.delta_balance(message.sender, -1 * message.value)
            state.delta_balance(message.storage_address, message.value)
        state.touch_account(message.storage_address)
        return cls.apply_computation(state, message, transaction_context)

    @classmethod
    def apply_computation(cls, state: Any, message: Any, transaction_context: Any,
                          parent_computation: Any = None) -> Any:
        """py-evm's ``apply_computation`` with the plain opcodes' gas charged in the loop."""
        base: Any = super()
        if BaseComputation.logger.show_debug2 or GasMeter.logger.show_debug2:
            return base.apply_computation(state, message, transaction_context, parent_computation)
        fast = _fast_table(cls)
        kind: Any = cls
        with kind(state, message, transaction_context) as computation:
            if start_computation(kind, computation, message, parent_computation):
                return computation
            opcodes = computation.opcodes
            meter = computation._gas_meter
            code = computation.code
            raw, length = code._raw_code_bytes, len(code._raw_code_bytes)
            values = computation._stack.values  # (the stack's one list)
            while True:
                # CodeStream's iteration, without a generator: the byte at the program
                # counter, then STOP once past the end (opcodes move the counter themselves)
                counter = code.program_counter
                if counter < length:
                    value = raw[counter]
                    code.program_counter = counter + 1
                else:
                    value = STOP
                plain = fast[value]
                try:
                    if plain is not None:
                        cost, logic, mnemonic, push = plain
                        remaining = meter.gas_remaining
                        if cost > remaining:  # GasMeter.consume_gas's check and words
                            raise OutOfGas(f"Out of gas: Needed {cost} - Remaining {remaining} "
                                           f"- Reason: {mnemonic}")
                        meter.gas_remaining = remaining - cost
                        if push:  # the lean PUSH (_push), here
                            end = counter + 1 + push
                            code.program_counter = end
                            word = raw[counter + 1:end]
                            if len(word) != push:
                                word = word.ljust(push, b"\x00")
                            if len(values) > 1023:
                                raise FullStack("Stack limit reached")
                            values.append(word)
                        else:
                            logic(computation)
                    else:
                        try:
                            opcode = opcodes[value]
                        except KeyError:
                            opcode = InvalidOpcode(value)
                        opcode(computation=computation)
                except Halt:
                    break
                if counter >= length:  # (py-evm's iteration ends after that STOP whatever it did)
                    break
        return computation


class CheckedMessage(EvmMessage):
    """py-evm's ``Message`` for a run's first message, made without checking its (parsed) fields."""

    __slots__ = ()

    def __init__(self, gas: int, to: bytes, sender: bytes, value: int, data: bytes, code: bytes,
                 create_address: bytes | None, is_delegation: bool, refund: int) -> None:
        self.gas = gas
        self.to = to  # type: ignore[assignment]
        self.sender = sender  # type: ignore[assignment]
        self.value = value
        self.data = data
        self.depth = 0
        self.code = code
        self.storage_address = create_address  # type: ignore[assignment]  # None: the callee
        self.code_address = None  # type: ignore[assignment]  # None: the callee
        self.should_transfer_value = True
        self.is_static = False
        self._is_delegation = is_delegation
        self.refund = refund


class LeanSnapshots:
    """Put before a state class whose snapshots are py-evm's ``BaseState``'s, flattened."""

    _account_db: Any

    def snapshot(self) -> tuple[Hash32, Any]:
        """py-evm's: the state root and a checkpoint of the accounts."""
        db = self._account_db
        return db.state_root, db.record()

    def revert(self, snapshot: tuple[Hash32, Any]) -> None:
        """py-evm's: the state root put back, then the accounts rolled back."""
        db = self._account_db
        db.state_root = snapshot[0]
        db.discard(snapshot[1])


class LeanTransientSnapshots:
    """Put before a state class whose snapshots are py-evm's ``CancunState``'s, flattened."""

    _account_db: Any
    transient_storage: Any

    def snapshot(self) -> tuple[Hash32, Any]:
        """py-evm's: the state root and a checkpoint, recorded in the transient storage too."""
        db = self._account_db
        root = db.state_root
        checkpoint = db.record()
        self.transient_storage._db.record(checkpoint)
        return root, checkpoint

    def revert(self, snapshot: tuple[Hash32, Any]) -> None:
        """py-evm's: the state root put back, accounts and transient storage rolled back."""
        db = self._account_db
        checkpoint = snapshot[1]
        db.state_root = snapshot[0]
        db.discard(checkpoint)
        discard_journal(self.transient_storage._db, checkpoint)


def _snapshots(state: Any) -> tuple[type, ...]:
    """The lean snapshot class to put before ``state`` (none if its snapshots are not py-evm's)."""
    from eth.vm.forks.cancun.state import CancunState
    from eth.vm.state import BaseState
    from eth.vm.transient_storage import TransientStorage

    if state.snapshot is BaseState.snapshot and state.revert is BaseState.revert:
        return (LeanSnapshots,)
    if (state.snapshot is CancunState.snapshot and state.revert is CancunState.revert
            and state._transient_storage_class is TransientStorage):
        return (LeanTransientSnapshots,)
    return ()


def share_tables(vm: Any, tables: MessageTables) -> None:
    """Make ``vm``'s state read through ``tables`` (nothing for py-evm's own classes)."""
    db = vm.state._account_db
    if isinstance(db, LeanAccountDB):
        db.use_tables(tables)


def lean_vm_class(vm_class: Any) -> Any:
    """``vm_class`` with :class:`LeanAccountDB` and :class:`LeanComputation` (made once per class)."""
    return made(_lean_vm_class, vm_class)


def _lean_vm_class(vm_class: Any) -> Any:
    state = vm_class.get_state_class()
    computation = subclass(state.computation_class, {}, mixins=(LeanComputation,))
    lean = subclass(state, {"account_db_class": LeanAccountDB, "computation_class": computation},
                    mixins=_snapshots(state))
    return subclass(vm_class, {"_state_class": lean})


def plain_computation_class(computation_class: type) -> type:
    """The fork's own computation class under the lean one (what a step tracer runs on)."""
    mro = computation_class.__mro__
    if LeanComputation in mro:
        return mro[mro.index(LeanComputation) + 1]
    return computation_class
