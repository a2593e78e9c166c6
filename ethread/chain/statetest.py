"""Run execution-spec-tests state fixtures: each vector's transaction applied with py-evm to its
pre-state under its fork's VM, the state root and logs hash compared with the fixture's (a
refused transaction, ``expectException``, leaves the pre-state's root).

Results read as geth's ``evm statetest`` writes them, one per vector in the file's order; as
there, BLOCKHASH answers ``keccak(str(number))``, since a state fixture carries no blocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import rlp
from eth.abc import VirtualMachineAPI
from eth.db.account import AccountDB
from eth.db.atomic import AtomicDB
from eth.db.chain import ChainDB
from eth_hash.auto import keccak
from eth_utils import ValidationError

from ..errors import EthreadError
from ..evm import BlobParams
from ..evm.block_vm import vm_at
from ..forks import Fork, fork_named
from ..forks.validity import InvalidTransaction, check_type
from ..forks.vms import vm_class_for


class FixtureError(EthreadError):
    """A state fixture that cannot be read: no such file, not JSON, not a state test."""


@dataclass(frozen=True, slots=True)
class StateTestResult:
    """The outcome of one vector (a test, a fork, one of its post entries)."""

    name: str
    """The test's name (the key in its file)."""
    fork: str
    """The fork, as the fixture names it."""
    passed: bool
    """Whether the state root, the logs and the refusal (or not) are the fixture's."""
    state_root: bytes
    """The state root after the transaction (the pre-state's when it was refused)."""
    error: str
    """Why the vector failed; empty when it passed."""

    def as_json(self) -> dict[str, Any]:
        """The vector as geth's ``evm statetest`` reports one."""
        return {"name": self.name, "pass": self.passed,
                "stateRoot": "0x" + self.state_root.hex(), "fork": self.fork,
                "error": self.error}


def vm_for_fork(fork: str, blob_schedule: dict[str, Any] | None = None) -> type[VirtualMachineAPI]:
    """The VM class of a fixture's fork name (``"Osaka"``, ``"EIP158"``, ethread's names too),
    with blob parameters from ``blob_schedule`` (``config.blobSchedule``) when it names the fork.
    :class:`FixtureError` for a fork it does not know."""
    try:
        row = fork_named(fork)
    except KeyError:
        raise FixtureError(f"unknown fork {fork!r}") from None
    entry = (blob_schedule or {}).get(fork)
    if entry is not None:
        row = replace(row, blob=BlobParams(
            target=_int(entry["target"]), max=_int(entry["max"]),
            update_fraction=_int(entry["baseFeeUpdateFraction"])))
    return _state_test_vm(vm_class_for(row, None))  # type: ignore[no-any-return]


@cache
def _state_test_vm(vm_class: Any) -> Any:
    """``vm_class`` answering BLOCKHASH with the state tests' convention (see the module)."""
    return type(vm_class.__name__, (vm_class,), {"previous_hashes": property(_test_block_hashes),
                                                 "__module__": __name__})


def _test_block_hashes(vm: Any) -> tuple[bytes, ...]:
    number = vm.get_header().block_number
    return tuple(keccak(str(n).encode()) for n in range(number - 1, max(number - 257, -1), -1))


def _int(value: Any) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)


def _bytes(value: str) -> bytes:
    return bytes.fromhex(value.removeprefix("0x"))


def read_fixture(path: str | Path) -> dict[str, Any]:
    """A fixture file's tests, by name (:class:`FixtureError` if it cannot be read as one)."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise FixtureError(f"{path}: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise FixtureError(f"{path}: not JSON ({exc})") from None
    if not isinstance(document, dict) or not all(map(_is_state_test, document.values())):
        raise FixtureError(f"{path}: not a state test fixture (an object of tests, each with "
                           "env, pre, transaction and post entries with hash, logs and txbytes)")
    return document


def _is_state_test(test: Any) -> bool:
    return (isinstance(test, dict) and {"env", "pre", "transaction", "post"} <= test.keys()
            and isinstance(test["post"], dict)
            and all(isinstance(entries, list) and all(
                isinstance(entry, dict) and {"hash", "logs", "txbytes"} <= entry.keys()
                for entry in entries) for entries in test["post"].values()))


def run_test(name: str, test: dict[str, Any]) -> Iterator[StateTestResult]:
    """Every vector of one test: each fork in the file's order, each post entry in its order."""
    db = AtomicDB()
    pre_root = _write_pre_state(db, test["pre"])
    config = test.get("config") or {}
    schedule = config.get("blobSchedule")
    chain_id = _int(config.get("chainid", 1))
    for fork, entries in test["post"].items():
        try:
            vm_class = vm_for_fork(fork, schedule)
        except FixtureError as exc:
            for _ in entries:
                yield StateTestResult(name, fork, False, pre_root, str(exc))
            continue
        for entry in entries:
            yield _run_vector(name, fork, vm_class, db, pre_root, chain_id, test["env"], entry)


def _typed_kind(raw: bytes) -> int:
    """The type of a transaction's encoding (0 for a legacy RLP list)."""
    return raw[0] if raw and raw[0] <= 0x7F else 0


def _write_pre_state(db: AtomicDB, pre: dict[str, Any]) -> bytes:
    accounts = AccountDB(db)
    for address, account in pre.items():
        key = _bytes(address)
        accounts.set_balance(key, _int(account.get("balance", 0)))  # type: ignore[arg-type]
        accounts.set_nonce(key, _int(account.get("nonce", 0)))  # type: ignore[arg-type]
        accounts.set_code(key, _bytes(account.get("code", "0x")))  # type: ignore[arg-type]
        for slot, value in (account.get("storage") or {}).items():
            accounts.set_storage(key, _int(slot), _int(value))  # type: ignore[arg-type]
    accounts.persist()
    return bytes(accounts.state_root)


def _header(vm_class: Any, env: dict[str, Any], state_root: bytes) -> Any:
    """The block the vector's transaction runs in, from the fixture's ``env``."""
    header_class = dict(vm_class.get_block_class()._meta.fields)["header"]
    fields = {
        "coinbase": _bytes(env["currentCoinbase"]),
        "difficulty": _int(env.get("currentDifficulty", 0)),
        "block_number": _int(env["currentNumber"]),
        "gas_limit": _int(env["currentGasLimit"]),
        "timestamp": _int(env["currentTimestamp"]),
        "state_root": state_root,
        "base_fee_per_gas": _int(env.get("currentBaseFee", 0)),
        "excess_blob_gas": _int(env.get("currentExcessBlobGas", 0)),
    }
    if "currentRandom" in env and vm_class.consensus_class.__name__ != "PowConsensus":
        fields["mix_hash"] = _bytes(env["currentRandom"])
    if "currentBeaconRoot" in env:
        fields["parent_beacon_block_root"] = _bytes(env["currentBeaconRoot"])
    known = set(header_class._meta.field_names)
    return header_class(**{key: value for key, value in fields.items() if key in known})


def _run_vector(name: str, fork: str, vm_class: Any, db: AtomicDB, pre_root: bytes,
                chain_id: int, env: dict[str, Any], entry: dict[str, Any]) -> StateTestResult:
    expected_error = entry.get("expectException")
    header = _header(vm_class, env, pre_root)
    vm = vm_at(vm_class, header, ChainDB(db), chain_id)
    refusal = None
    root, logs_hash = pre_root, keccak(rlp.encode([]))
    rules: Fork = vm_class.fork_rules
    try:
        raw = _bytes(entry["txbytes"])
        check_type(rules, _typed_kind(raw))  # (a type the fork's decoder does not know)
        transaction = vm.get_transaction_builder().decode(raw)
        receipt, _ = vm.apply_transaction(header, transaction)
    except (InvalidTransaction, ValidationError, rlp.DecodingError,
            rlp.DeserializationError) as exc:
        refusal = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a vector py-evm cannot run fails; the run goes on
        return StateTestResult(name, fork, False, pre_root, f"{type(exc).__name__}: {exc}")
    else:
        vm.state.persist()
        root = bytes(vm.state.state_root)
        logs_hash = keccak(rlp.encode(receipt.logs))
    want_root = _bytes(entry["hash"])
    if refusal is not None and expected_error is None:
        error = f"unexpected error: {refusal}"
    elif refusal is None and expected_error is not None:
        error = f"expected error {expected_error}, got no error"
    elif root != want_root:
        error = f"post state root mismatch: got 0x{root.hex()}, want 0x{want_root.hex()}"
    elif logs_hash != _bytes(entry["logs"]):
        error = (f"post state logs hash mismatch: got 0x{logs_hash.hex()}, "
                 f"want {entry['logs']}")
    else:
        error = ""
    return StateTestResult(name, fork, not error, root, error)
