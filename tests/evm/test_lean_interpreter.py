"""The virtual machines messages run on (:mod:`ethread.evm.lean_interpreter`) answer what py-evm's
own classes answer: the same output, gas, errors and error texts for every kind of message on
every fork, and an account database that writes the same state (reads, snapshots, reverts and
state roots) as py-evm's.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
import rlp
from eth.constants import BLANK_ROOT_HASH
from eth.db.account import AccountDB
from eth.db.atomic import AtomicDB
from eth.rlp.accounts import Account
from eth_typing import Address

from ethread import MemoryBackend
from ethread.devchain import DevChain
from ethread.devchain.contracts import assemble
from ethread.devchain.genesis import ForkSchedule
from ethread.evm.lean_interpreter import LeanAccountDB, MessageTables, lean_vm_class
from ethread.forks import fork_at_least
from ethread.methods import message as message_module
from ethread.methods.message import CallStates, execution, gas_for
from ethread.models import CallRequest
from tests.support.call_outcomes import FORKS, outcome_of, probe_chain, probe_requests
from tests.support.osaka_runs import p256_input

FAILING_CODES = (
    bytes([0x01]),                          # ADD on an empty stack: stack underflow
    bytes([0x60, 0x05, 0x56]),              # JUMP to a byte that is no JUMPDEST
    bytes([0xFE]),                          # INVALID
    bytes([0x0C]),                          # an opcode no fork defines
    assemble(*[item for _ in range(40) for item in (1, "POP")], 0, 0, "RETURN"),  # plain opcodes
    assemble(1, 0, "SSTORE", 0, 0, "RETURN"),      # a write (static gas plus SSTORE's own)
    bytes([0x60, 0x01] * 1025),             # the 1025th push: a full stack
    assemble(2, 3, "SWAP1", "DUP2", "ADD", "MUL", 0, "MSTORE", 32, 0, "RETURN"),
    bytes([0x61, 0x01]),                    # PUSH2 past the end of the code: zero-padded
    bytes([0x60, 0x01, 0x81]),              # DUP2 of one item
    bytes([0x60, 0x01, 0x91]),              # SWAP2 of one item
    bytes([0x60, 0x01, 0x50, 0x50]),        # a second POP
    bytes([0x60, 0x01, 0x80] * 512 + [0x80]),  # DUP1 past the stack's limit
    assemble(1, 2, 3, "DUP3", "SWAP2", "POP", "ADD", "DUP1", "SWAP1", "SUB", 0, "MSTORE", 32, 0,
             "RETURN"),
)
"""Creation code run as the message itself: each stops in its own way."""


def _returning(*program: Any) -> bytes:
    return assemble(*program, 0, "MSTORE", 32, 0, "RETURN")


MAX_WORD = b"\xff" * 32
ERROR_SELECTOR = bytes.fromhex("08c379a0")
PURE_CODES = (
    _returning(1, 0, "SUB"),                                  # 0 - 1 wraps
    _returning(MAX_WORD, 2, "ADD"),                           # past 2**256 wraps
    _returning(MAX_WORD, MAX_WORD, "MUL"),
    _returning(b"\x00\x07", 300, "SHL"), _returning(b"\x00\x07", 4, "SHL"),
    _returning(MAX_WORD, 255, "SHL"), _returning(MAX_WORD, 255, "SHR"), _returning(7, 256, "SHR"),
    _returning(b"\x00\x05", 5, "EQ"), _returning(3, b"\x00\x04", "LT"), _returning(3, 4, "GT"),
    _returning(0, "ISZERO"), _returning(b"\x00", "NOT"), _returning(9, "ISZERO", "NOT"),
    _returning(0x0F0F, MAX_WORD, "AND", 0xF0, "OR", 0xFF, "XOR"),
    _returning(1, 2, "ADD", 3, "MUL", 4, "SUB", 2, "SHR", 1, "SHL", 5, "GT", 6, "LT", 7, "EQ"),
    bytes([0x60, 0x01, 0x01]), bytes([0x60, 0x01, 0x10]), bytes([0x60, 0x01, 0x1C]),  # one item
    bytes([0x15]), bytes([0x19]),                             # ISZERO, NOT of none
)
"""Creation code of py-evm's pure arithmetic and comparison opcodes (the lean loop's own
versions): results that wrap, operands pushed as bytes and as numbers, and a stack too short."""

JUMPDEST_AT_4 = bytes([0x60, 0x04, 0x56, 0xFE, 0x5B, 0x00])
PUSH_DATA_AT_4 = bytes([0x60, 0x04, 0x56, 0x61, 0x5B, 0x00])
MEMORY_AND_CONTEXT_CODES = (
    _returning("NUMBER"), _returning("CALLER"), _returning("ADDRESS"), _returning("CALLVALUE"),
    _returning("CALLDATASIZE"), _returning(0, "CALLDATALOAD"), _returning(MAX_WORD, "CALLDATALOAD"),
    _returning(b"\x00\x01"), _returning(MAX_WORD), _returning(b"\x00" * 32),   # words as bytes
    assemble(0xAB, 40, "MSTORE", 33, "MLOAD", 0, "MSTORE", 32, 0, "RETURN"),   # across words
    assemble(200, "MLOAD", 0, "MSTORE", 300, 0, "RETURN"),                      # MLOAD grows it
    assemble(7, 2**40, "MSTORE"),                     # memory past any gas: out of gas
    assemble(7, MAX_WORD, "MSTORE"),                  # at the last offset
    assemble(MAX_WORD, "MLOAD"),
    assemble(0, MAX_WORD, "RETURN"),                  # nothing returned from anywhere: free
    assemble(2**40, 0, "RETURN"),                     # returning past any gas
    assemble(5, 0, "MSTORE", 20, 10, "RETURN"),       # inside memory, not word-aligned
    assemble(5, 0, "MSTORE", 64, 16, "RETURN"),       # partly past it: grows by a word
    bytes([0x52]), bytes([0x60, 0x01, 0x52]),         # MSTORE of none, of one
    bytes([0x51]), bytes([0x35]), bytes([0xF3]), bytes([0x60, 0x01, 0xF3]),  # MLOAD, CALLDATALOAD, RETURN
    bytes([0x60, 0x01] * 1024 + [0x43]), bytes([0x60, 0x01] * 1024 + [0x33]),  # a full stack
    bytes([0x60, 0x01] * 1024 + [0x36]), bytes([0x60, 0x01] * 1024 + [0x51]),
    assemble(MAX_WORD, 0, "MSTORE", 32, 0, "LOG0", 5, 3, "LOG1", 1, 2, 3, 32, 1, "LOG3",
             b"\x00\x09", 4, 3, 2, 1, 0, 64, "LOG4", 0, 0, "RETURN"),  # data past memory: grows
    assemble(7, 8, 40, 0, "LOG2", 0, MAX_WORD, "LOG0", 0, 0, "RETURN"),  # no data at any offset
    assemble(2**40, 0, "LOG0"), assemble(1, 0, 2**40, "LOG0"),  # data past any gas
    bytes([0xA0]), bytes([0x60, 0x01, 0xA0]), bytes([0x60, 0x01, 0x60, 0x01, 0xA1]),  # short stacks
    bytes([0x60, 0x01] * 4 + [0xA4]),
    assemble(1, "@there", "JUMPI", "INVALID", "there:", 7, 0, "MSTORE", 32, 0, "RETURN"),  # taken
    assemble(0, "@there", "JUMPI", 5, 0, "MSTORE", 32, 0, "RETURN", "there:", "STOP"),  # not
    assemble("@there", "JUMP", "INVALID", "there:", "NUMBER", 0, "MSTORE", 32, 0, "RETURN"),
    bytes([0x60, 0x01, 0x60, 0x04, 0x57, 0x61, 0x5B, 0x00]),  # JUMPI into PUSH2's data (a 0x5b)
    bytes([0x60, 0x03, 0x56, 0x5B]), bytes([0x60, 0x01, 0x61, 0xFF, 0xFF, 0x57]),  # past the end
    bytes([0x56]), bytes([0x57]), bytes([0x60, 0x01, 0x57]),  # JUMP, JUMPI with too few items
    assemble(ERROR_SELECTOR, 0, "MSTORE", 32, 32, "MSTORE", 4, 64, "MSTORE",
             b"nope", 0xE0, "SHL", 96, "MSTORE", 100, 28, "REVERT"),  # Error("nope")
    assemble(5, 0, "MSTORE", 64, 16, "REVERT"),       # partly past memory: grows by a word
    assemble(0, MAX_WORD, "REVERT"), assemble(0, 0, "REVERT"),  # nothing, from anywhere
    assemble(2**40, 0, "REVERT"), assemble(1, MAX_WORD, "REVERT"),  # past any gas
    bytes([0xFD]), bytes([0x60, 0x01, 0xFD]),         # REVERT with too few items
    bytes([0x60, 0x01] * 1024 + [0x60, 0x00, 0xFD]),  # a full stack, then REVERT
    # a 0x5b at position 4: a JUMPDEST in the first code, PUSH2's data in the second (the
    # positions a jump checks are kept by the code: neither may answer for the other)
    JUMPDEST_AT_4, PUSH_DATA_AT_4, JUMPDEST_AT_4,
    assemble("COINBASE", "BALANCE", "POP", "GAS", 0, "MSTORE", 32, 0, "RETURN"),  # warm from Shanghai
)
"""Creation code of the memory, flow and context opcodes the lean loop runs itself (MSTORE,
MLOAD, RETURN, REVERT, CALLDATALOAD, LOG0-LOG4, JUMP, JUMPI, NUMBER, CALLER, ADDRESS, CALLVALUE,
CALLDATASIZE): growth and its gas, offsets past any gas, words pushed as bytes, jumps taken,
not taken and refused, a stack too short and one too full."""


def _answers(backend: Any, requests: list[CallRequest], gas_limit: int,
             vm_classes: Any = lean_vm_class) -> list[Any]:
    answers: list[Any] = []
    for request in requests:
        try:
            with execution(backend, request, "latest",
                           states=CallStates(vm_classes=vm_classes)) as run:
                gas = gas_for(request, gas_limit)
                answers.append((type(run.vm).get_state_class().account_db_class.__name__,
                                outcome_of(run, gas, False), outcome_of(run, gas, True)))
        except Exception as exc:  # refused before a run
            answers.append(("refused", type(exc).__name__, str(exc)))
    return answers


@pytest.mark.parametrize("fork", FORKS)
def test_messages_answer_what_py_evms_classes_answer(fork: str, monkeypatch: pytest.MonkeyPatch,
                                                    ) -> None:
    backend, chain, probe = probe_chain(fork)
    logger = chain.deploy_runtime(chain.accounts[0], assemble(0, 0, "LOG0", 0, 0, "RETURN"))
    chain.mine()
    header = backend.header_by_hash(backend.canonical_hash(1))  # type: ignore[arg-type]
    assert header is not None
    requests = probe_requests(fork, chain, probe)
    requests.append(CallRequest(to=logger))
    # a LOG in a static context (refused from Byzantium; STATICCALL is an invalid opcode before)
    requests.append(CallRequest(data=assemble(0, 0, 0, 0, logger, 100_000, "STATICCALL", 0,
                                              "MSTORE", 32, 0, "RETURN")))
    for code in FAILING_CODES + PURE_CODES + MEMORY_AND_CONTEXT_CODES:
        requests.append(CallRequest(data=code))
    for data in (b"\x01", b"\x02" * 5, b"\x03" * 33, b"\x00\x00\x04"):  # CALLDATALOAD's padding
        requests.append(CallRequest(to=probe, data=data))
    burner = FAILING_CODES[4]
    zeros = burner.count(0)
    per_byte = 16 if fork_at_least(fork, "istanbul") else 68
    intrinsic = ((21_000 if fork == "frontier" else 53_000) + 4 * zeros
                 + per_byte * (len(burner) - zeros))
    if fork_at_least(fork, "shanghai"):
        intrinsic += 2 * ((len(burner) + 31) // 32)  # the initcode's words
    for extra in range(0, 240, 20):  # out of gas at each of the plain opcodes in turn
        requests.append(CallRequest(data=burner, gas=intrinsic + extra))
    lean = _answers(backend, requests, header.gas_limit)
    reference = _answers(backend, requests, header.gas_limit, lambda vm_class: vm_class)
    assert {a[0] for a in lean if a[0] != "refused"} == {"LeanAccountDB"}
    assert {a[0] for a in reference if a[0] != "refused"} == {"AccountDB"}
    assert [a[1:] for a in lean] == [a[1:] for a in reference]
    errors = {outcome[3] for a in lean if a[0] != "refused" for outcome in a[1:]
              if outcome[0] != "rejected"}
    # every way to stop ran: success, out of gas, a bad stack, a bad jump, an invalid opcode
    assert {"NoneType", "OutOfGas", "InsufficientStack", "InvalidJumpDestination",
            "InvalidInstruction", "FullStack"} <= errors, errors
    assert ("Revert" in errors) == fork_at_least(fork, "byzantium")  # (before, REVERT is invalid)
    texts = {outcome[4] for a in lean if a[0] != "refused" for outcome in a[1:]
             if outcome[0] != "rejected"}
    assert any(t and t.startswith("Out of gas") and t.endswith(("PUSH1", "POP"))
               for t in texts), texts


def test_lean_computations_set_up_without_py_evms_constructors_where_they_can() -> None:
    """Every fork's computation (behind the time limit's class too) is set up by the lean
    constructor, with Shanghai's warm coinbase from Shanghai on; a class with a constructor
    of its own goes through py-evm's."""
    from eth.vm import forks

    from ethread.evm.lean_interpreter import BASE_INIT, PY_EVM_INIT, SHANGHAI_INIT, _init_kind
    from ethread.evm.time_limit import interruptible

    kinds = {}
    for name in ("FrontierVM", "ByzantiumVM", "BerlinVM", "LondonVM", "ShanghaiVM", "CancunVM",
                 "PragueVM"):
        computation = lean_vm_class(getattr(forks, name)).get_state_class().computation_class
        kinds[name] = (_init_kind(computation), _init_kind(interruptible(computation)))
    assert kinds == {name: (kind, kind) for name, kind in (
        ("FrontierVM", BASE_INIT), ("ByzantiumVM", BASE_INIT), ("BerlinVM", BASE_INIT),
        ("LondonVM", BASE_INIT), ("ShanghaiVM", SHANGHAI_INIT), ("CancunVM", SHANGHAI_INIT),
        ("PragueVM", SHANGHAI_INIT))}

    class Traced(computation):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)

    assert _init_kind(Traced) == PY_EVM_INIT


def test_lean_classes_are_made_once_per_fork_class() -> None:
    from eth.vm.forks import CancunVM

    lean = lean_vm_class(CancunVM)
    assert lean_vm_class(CancunVM) is lean
    state = lean.get_state_class()
    assert state.account_db_class is LeanAccountDB
    assert issubclass(state.computation_class, CancunVM.get_state_class().computation_class)


def _random_account(rng: random.Random) -> Account:
    return Account(rng.choice((0, 1, rng.getrandbits(64))),
                   rng.choice((0, 1, 10**18, rng.getrandbits(256))),
                   rng.choice((BLANK_ROOT_HASH, rng.randbytes(32))),
                   rng.randbytes(32))


def test_account_tables_agree_with_rlp() -> None:
    rng = random.Random(7)
    tables = MessageTables()
    for _ in range(500):
        account = _random_account(rng)
        encoded = rlp.encode(account, sedes=Account)
        assert tables.encode_account(account) == encoded
        assert tables.encode_account(account) == encoded  # kept
        made, made_encoded = tables.account_with((account.nonce, account.balance,
                                                  account.storage_root, account.code_hash))
        assert made_encoded == encoded and tuple(made) == tuple(account)
        decoded = tables.decode_account(encoded)
        assert tuple(decoded) == tuple(account)
        assert tables.decode_account(encoded) is decoded


@pytest.mark.parametrize("seed", range(6))
def test_lean_account_db_writes_what_py_evms_writes(seed: int) -> None:
    """The same random reads, writes, accessed addresses and slots, snapshots, reverts and
    commits (of any open snapshot) on both databases, from the same stored state: every read,
    every warm address and slot and every state root the same, and the same stored nodes once
    persisted."""
    rng = random.Random(seed)
    addresses = [Address(rng.randbytes(20)) for _ in range(6)]
    seed_db = AtomicDB()
    setup = AccountDB(seed_db)
    for address in addresses[:4]:
        setup.set_balance(address, rng.getrandbits(80))
        setup.set_nonce(address, rng.randrange(5))
        setup.set_code(address, rng.randbytes(rng.randrange(1, 40)))
        setup.set_storage(address, 1, rng.getrandbits(64))
    setup.persist()
    root = setup.state_root
    dbs = [AtomicDB(), AtomicDB()]
    for db in dbs:
        for key, value in seed_db.wrapped_db.kv_store.items():  # type: ignore[attr-defined]
            db[key] = value
    plain, lean = AccountDB(dbs[0], root), LeanAccountDB(dbs[1], root)
    checkpoints: list[tuple[Any, Any]] = []
    for _ in range(300):
        address = rng.choice(addresses)
        step = rng.randrange(16)
        if step == 0:
            value = rng.getrandbits(90)
            plain.set_balance(address, value)
            lean.set_balance(address, value)
        elif step == 1:
            plain.increment_nonce(address)
            lean.increment_nonce(address)
        elif step == 2:
            code = rng.randbytes(rng.randrange(0, 30))
            plain.set_code(address, code)
            lean.set_code(address, code)
        elif step == 3:
            slot, value = rng.randrange(4), rng.getrandbits(70)
            plain.set_storage(address, slot, value)
            lean.set_storage(address, slot, value)
        elif step == 4:
            plain.touch_account(address)
            lean.touch_account(address)
        elif step == 5 and rng.random() < 0.3:
            plain.delete_account(address)
            lean.delete_account(address)
        elif step == 6:
            checkpoints.append((plain.record(), lean.record()))
        elif step == 7 and checkpoints:  # any open checkpoint: the later ones go with it
            ours, theirs = checkpoints[rng.randrange(len(checkpoints))]
            del checkpoints[checkpoints.index((ours, theirs)):]
            plain.discard(ours)
            lean.discard(theirs)
        elif step == 8 and checkpoints:
            ours, theirs = checkpoints[rng.randrange(len(checkpoints))]
            del checkpoints[checkpoints.index((ours, theirs)):]
            plain.commit(ours)
            lean.commit(theirs)
        elif step == 9:
            nonce = rng.randrange(2**64 - 1)
            plain.set_nonce(address, nonce)
            lean.set_nonce(address, nonce)
        elif step in (10, 11):
            plain.mark_address_warm(address)
            lean.mark_address_warm(address)
        elif step in (12, 13):
            slot = rng.randrange(3)
            plain.mark_storage_warm(address, slot)
            lean.mark_storage_warm(address, slot)
        elif step == 14 and not checkpoints:  # (between transactions, as py-evm calls it)
            plain.lock_changes()
            lean.lock_changes()
        assert [(plain.is_address_warm(a), [plain.is_storage_warm(a, s) for s in range(3)])
                for a in addresses] == [
                (lean.is_address_warm(a), [lean.is_storage_warm(a, s) for s in range(3)])
                for a in addresses]
        assert ([plain.get_balance(a) for a in addresses], [plain.get_nonce(a) for a in addresses],
                [plain.get_code(a) for a in addresses], [plain.get_storage(a, 1) for a in addresses],
                [plain.account_exists(a) for a in addresses]) == (
                [lean.get_balance(a) for a in addresses], [lean.get_nonce(a) for a in addresses],
                [lean.get_code(a) for a in addresses], [lean.get_storage(a, 1) for a in addresses],
                [lean.account_exists(a) for a in addresses])
    while checkpoints:
        ours, theirs = checkpoints.pop()
        plain.commit(ours)
        lean.commit(theirs)
    assert plain.make_state_root() == lean.make_state_root()
    plain.persist()
    lean.persist()
    assert plain.state_root == lean.state_root
    assert dbs[0].wrapped_db.kv_store == dbs[1].wrapped_db.kv_store  # type: ignore[attr-defined]


def test_a_kept_state_is_left_as_it_was_found() -> None:
    """Messages that succeed, revert, fail, transfer value and store transient values, run one
    after another on one kept state (the message a run starts with takes no snapshot of its
    own), each leave the state as they found it: every later run answers what it answers on a
    fresh state."""
    backend, chain, probe = probe_chain("prague")
    requests = probe_requests("prague", chain, probe) + [CallRequest(data=code) for code in FAILING_CODES]
    # transient storage: what one run stores, the next must not load
    requests += [CallRequest(data=assemble(0, "TLOAD", 0, "MSTORE", 7, 0, "TSTORE", 32, 0, "RETURN"))] * 2
    states = CallStates(per_block=1)
    kept = [outcome_of_call(backend, request, states) for request in requests]
    again = [outcome_of_call(backend, request, states) for request in reversed(requests)]
    fresh = [outcome_of_call(backend, request, CallStates()) for request in requests]
    assert kept == fresh and list(reversed(again)) == fresh
    errors = {o[3] for o in fresh if o[0] not in ("rejected", "refused")}
    assert {"NoneType", "Revert", "OutOfGas", "InsufficientStack"} <= errors, errors
    assert any(o[0] == "rejected" for o in fresh)


def outcome_of_call(backend: Any, request: CallRequest, states: CallStates) -> Any:
    try:
        with execution(backend, request, "latest", states=states) as run:
            header = backend.header_by_hash(backend.canonical_hash(1))
            outcome = outcome_of(run, gas_for(request, header.gas_limit), False)
            root = run.state.state_root
            return (*outcome, root)
    except Exception as exc:  # refused before a run
        return ("refused", type(exc).__name__, str(exc))


def test_code_is_kept_by_hash_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code read through a lean database is kept by its hash in its tables' code LRU, bounded
    in bytes and in entries; code larger than a 64th of the bound is read but not kept."""
    from eth_utils import keccak

    from ethread.evm import lean_interpreter

    monkeypatch.setattr(lean_interpreter, "MAX_KEPT_CODE_BYTES", 64 * 100)
    db = LeanAccountDB(AtomicDB())
    kept = db.tables.code
    codes = [bytes([n % 256]) * 90 + n.to_bytes(4, "big") for n in range(200)]
    addresses = [Address(n.to_bytes(20, "big")) for n in range(1, 201)]
    for address, code in zip(addresses, codes, strict=True):
        db.set_code(address, code)
    db.set_code(Address(b"\xee" * 20), b"\x01" * 200)  # over a 64th of the bound
    for address, code in zip(addresses, codes, strict=True):
        assert db.get_code(address) == code
        assert kept.weight <= 64 * 100
    assert db.get_code(Address(b"\xee" * 20)) == b"\x01" * 200
    assert kept.get(keccak(b"\x01" * 200)) is None
    assert all(kept.get(keccak(code)) in (None, code) for code in codes)
    assert 0 < len(kept) <= 64 * 100 // 94


def test_states_of_one_owner_share_its_tables() -> None:
    """Every state a :class:`CallStates` builds reads through that owner's tables; a run
    without one keeps its own."""
    backend, _, _ = probe_chain("prague")
    states = CallStates()
    request = CallRequest(data=_returning("NUMBER"))
    with execution(backend, request, "latest", states=states) as run:
        assert run.state._account_db.tables is states.tables
        assert run.tables is states.tables
    with execution(backend, request, "latest", states=states, own_state=True) as run:
        assert run.state._account_db.tables is states.tables
    with execution(backend, request, "latest") as run:
        assert run.state._account_db.tables is not states.tables
        assert run.tables is None


LOG_CODES = (
    assemble(MAX_WORD, 0, "MSTORE", 32, 0, "LOG0", 9, 5, 3, "LOG1", 1, 2, 3, 32, 1, "LOG3",
             b"\x00\x09", 4, 3, 2, 64, 0, "LOG4", "CALLER", 7, 32, 0, "LOG2", 0, 0, "RETURN"),
    assemble(1, 2, 0, 0, "LOG2", 2**40, 0, "LOG0"),   # one entry, then out of gas
)


@pytest.mark.parametrize("fork", ["frontier", "byzantium", "cancun", "prague"])
def test_log_entries_are_py_evms(fork: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean LOG opcodes record the entries py-evm's record (counter, address, topics,
    data), directly for a class with py-evm's ``add_log_entry`` and through the class's own
    otherwise."""
    backend, _, _ = probe_chain(fork)
    seen: list[Any] = []
    outcome = message_module.PreparedMessage._outcome

    def recording(self: Any, transaction: Any, computation: Any, *figures: bool) -> Any:
        seen.append(computation._log_entries)
        return outcome(self, transaction, computation, *figures)

    monkeypatch.setattr(message_module.PreparedMessage, "_outcome", recording)

    def entries(vm_class: Any) -> list[Any]:
        seen.clear()
        for code in LOG_CODES:
            with execution(backend, CallRequest(data=code), "latest",
                           states=CallStates(vm_classes=vm_class)) as run:
                run.run(1_000_000)
        return list(seen)

    lean = entries(lean_vm_class)
    assert [len(e) for e in lean] == [5, 1]
    assert lean == entries(lambda vm_class: vm_class)

    noted: list[Any] = []

    def with_own_entries(vm_class: Any) -> Any:
        lean = lean_vm_class(vm_class)
        state = lean.get_state_class()

        class Noting(state.computation_class):  # type: ignore[misc, name-defined]
            def add_log_entry(self, account: Any, topics: Any, data: Any) -> None:
                noted.append((account, topics, data))
                super().add_log_entry(account, topics, data)

        return lean.configure(_state_class=state.configure(computation_class=Noting))

    assert entries(with_own_entries) == lean
    assert noted == [entry[1:] for entry in lean[0] + lean[1]]


@pytest.mark.parametrize("seed", range(4))
def test_journal_discard_rolls_back_what_py_evms_rolls_back(seed: int) -> None:
    """:func:`discard_journal` against py-evm's ``JournalDB.discard``: the same random writes,
    deletes, clears, checkpoints, commits and discards (of any open checkpoint) on two
    journals leave the same values, and both refuse a checkpoint they do not hold."""
    from eth.db.backends.memory import MemoryDB
    from eth.db.journal import JournalDB
    from eth_utils import ValidationError

    from ethread.evm.lean_interpreter import discard_journal

    rng = random.Random(seed)
    keys = [bytes([k]) for k in range(6)]
    wrapped = {k: b"w" + k for k in keys[:3]}
    plain, lean = JournalDB(MemoryDB(dict(wrapped))), JournalDB(MemoryDB(dict(wrapped)))
    open_checkpoints: list[tuple[Any, Any]] = []
    fast = 0
    for _ in range(400):
        key, step = rng.choice(keys), rng.randrange(9)
        if step in (0, 1):
            value = rng.randbytes(2)
            plain[key] = lean[key] = value
        elif step == 2 and key in plain:
            del plain[key]
            del lean[key]
        elif step == 3 and rng.random() < 0.2:
            plain.clear()
            lean.clear()
        elif step in (4, 5):
            open_checkpoints.append((plain.record(), lean.record()))
        elif step == 6 and open_checkpoints:
            index = rng.randrange(len(open_checkpoints))
            ours, theirs = open_checkpoints[index]
            del open_checkpoints[index:]
            fast += theirs == lean._journal._checkpoint_stack[-1]
            plain.discard(ours)
            discard_journal(lean, theirs)
        elif step == 7 and len(open_checkpoints) > 1:
            index = rng.randrange(1, len(open_checkpoints))
            ours, theirs = open_checkpoints[index]
            del open_checkpoints[index:]
            plain.commit(ours)
            lean.commit(theirs)
        assert [(k in plain, plain.get(k)) for k in keys] == [(k in lean, lean.get(k)) for k in keys]
    assert fast > 5
    with pytest.raises(ValidationError):
        discard_journal(lean, -1)


@pytest.mark.parametrize("fork", ["byzantium", "cancun", "prague"])
def test_a_kept_state_forgets_transient_storage(fork: str) -> None:
    """A message's transient storage goes with its snapshot: the next message on the same
    kept state reads it empty, as on a state of its own."""
    from ethread.evm.lean_interpreter import LeanSnapshots, LeanTransientSnapshots

    backend, _, _ = probe_chain(fork)
    states = CallStates(per_block=1)
    kept: set[Any] = set()
    if fork == "byzantium":
        reads = [CallRequest(data=_returning("NUMBER"))]
        expected: list[Any] = [None]
    else:
        reads = [CallRequest(data=assemble(7, 0, "TSTORE", 0, "TLOAD", 0, "MSTORE", 32, 0, "RETURN")),
                 CallRequest(data=_returning(0, "TLOAD"))]
        expected = [7, 0]
    for request, value in zip(reads * 2, expected * 2, strict=True):
        with execution(backend, request, "latest", states=states) as run:
            kept.add(id(run.state))
            outcome = run.run(1_000_000)
            assert outcome.error is None
            if value is not None:
                assert int.from_bytes(outcome.output, "big") == value
            snapshots = LeanTransientSnapshots if fork != "byzantium" else LeanSnapshots
            assert isinstance(run.state, snapshots)
    assert len(kept) == 1


@pytest.mark.parametrize("code", [
    assemble(5, 0, "MSTORE", 32, 0, "REVERT"),       # a revert
    bytes([0x01]),                                   # a stack underflow
    bytes([0xFE]),                                   # an invalid opcode
], ids=["revert", "underflow", "invalid"])
def test_a_failed_run_leaves_no_garbage_cycle(code: bytes) -> None:
    """A failed run's error is kept without the traceback that tied it to the computation in
    a reference cycle: nothing is left for the garbage collector (which would otherwise run
    every few failed calls)."""
    import gc

    backend, _, _ = probe_chain("prague")
    states = CallStates()
    request = CallRequest(data=code)

    def failed() -> None:
        with execution(backend, request, "latest", states=states) as run:
            outcome = run.run(1_000_000)
        assert outcome.error is not None and outcome.error.__traceback__ is None

    failed()  # (anything made once: tables, classes)
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            failed()
        # what the collector would free now, kept for a look (threads other tests left alive
        # may make cycles of their own meanwhile: only the runs' own objects count)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if _of_a_run(o)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left, f"{len(left)} objects of failed runs left in cycles, e.g. {left[:5]}"


def _of_a_run(thing: object) -> bool:
    """Whether ``thing`` belongs to a run: a computation, a message or state of py-evm's or
    ethread's, an error, or a frame or traceback of their code."""
    import types

    if isinstance(thing, types.FrameType):
        return _our_file(thing.f_code.co_filename)
    if isinstance(thing, types.TracebackType):
        return _our_file(thing.tb_frame.f_code.co_filename)
    if isinstance(thing, BaseException):
        return True
    module = getattr(type(thing), "__module__", "") or ""
    return module.split(".")[0] in ("eth", "ethread")


def _our_file(filename: str) -> bool:
    return any(f"{os.sep}{part}{os.sep}" in filename for part in ("eth", "ethread"))


def staticcall(address: int, data: bytes, gas: int | str = "GAS") -> bytes:
    """Creation code that stores ``data`` in memory, STATICCALLs ``address`` with it and
    returns (success, return data size, first returned word)."""
    code: list[Any] = []
    for start in range(0, len(data), 32):
        code += [int.from_bytes(data[start:start + 32].ljust(32, b"\x00"), "big"), 0x400 + start,
                 "MSTORE"]
    code += [32, 64, len(data), 0x400, address, gas, "STATICCALL", 0, "MSTORE",
             "RETURNDATASIZE", 32, "MSTORE", 96, 0, "RETURN"]
    return assemble(*code)


def modexp_input(base: int, exponent: int, modulus: int, body: bytes) -> bytes:
    return b"".join(n.to_bytes(32, "big") for n in (base, exponent, modulus)) + body


CLZ = b"\x1e"  # (the dev chain's assembler predates it)


VALID = p256_input(0xBEEF, b"\x42" * 32)


REQUESTS = [
    assemble(1) + CLZ + assemble(0, "MSTORE", 32, 0, "RETURN"),  # 255
    assemble(0) + CLZ + assemble(0, "MSTORE", 32, 0, "RETURN"),  # 256
    CLZ,                                                         # an empty stack
    staticcall(0x100, VALID),                                    # verifies: 1
    staticcall(0x100, VALID[:-1]),                               # no output
    staticcall(0x100, VALID, 6899),                              # out of gas
    staticcall(0x05, modexp_input(1, 1, 1, b"\x03\x02\x05")),    # 9 % 5 = 4
    staticcall(0x05, modexp_input(1025, 1, 1, b"\x03\x02\x05")),  # over EIP-7823's bound
    staticcall(0x05, modexp_input(0, 0, 1, b"\x05")),            # 0 ** 0 % 5 = 1
]


def answers(backend: Any, gas_limit: int, vm_classes: Any = lean_vm_class) -> list[tuple[Any, ...]]:
    found = []
    for data in REQUESTS:
        request = CallRequest(data=data)
        with execution(backend, request, "latest", states=CallStates(vm_classes=vm_classes)) as run:
            gas = gas_for(request, gas_limit)
            found.append((type(run.vm).get_state_class().account_db_class.__name__,
                          outcome_of(run, gas, False), outcome_of(run, gas, True)))
    return found


def test_osaka_messages_answer_the_same_both_ways() -> None:
    backend = MemoryBackend()
    chain = DevChain(backend, forks=ForkSchedule.from_genesis("osaka"), accounts=1)
    chain.mine()
    header = backend.header_by_hash(backend.canonical_hash(1))  # type: ignore[arg-type]
    assert header is not None
    lean = answers(backend, header.gas_limit)
    reference = answers(backend, header.gas_limit, lambda vm_class: vm_class)
    assert {a[0] for a in lean} == {"LeanAccountDB"}
    assert {a[0] for a in reference} == {"AccountDB"}
    assert [a[1:] for a in lean] == [a[1:] for a in reference]

    def words(index: int) -> list[int]:
        output = bytes.fromhex(lean[index][1][0])
        return [int.from_bytes(output[i:i + 32], "big") for i in range(0, len(output), 32)]

    assert words(0) == [255] and words(1) == [256]
    assert lean[2][1][3] == "InsufficientStack"
    assert words(3) == [1, 32, 1]  # success, 32 bytes, the word 1
    assert words(4) == [1, 0, 0]   # success, nothing returned
    assert words(5) == [0, 0, 0]   # the call ran out of gas
    assert words(6) == [1, 1, 4 << 248]
    assert words(7) == [0, 0, 0]
    assert words(8) == [1, 1, 1 << 248]
