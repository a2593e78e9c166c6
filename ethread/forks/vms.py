"""The py-evm virtual machine class that runs a fork's blocks: py-evm's own up to Cancun,
``ethread.evm``'s Prague (py-evm's under the chain's blob parameters) and Osaka after it, each
BPO fork Osaka with its blob parameters.

Every class is made to answer the fork's rules where py-evm's differ from them
(:func:`ruled`): a transaction is valid or not by :mod:`.validity` (the one place), a
creation collides with an account holding storage (EIP-7610, every fork), and MODEXP answers
1 for an empty base to the power zero (every fork with the precompile)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from eth.constants import BLANK_ROOT_HASH
from eth.vm.spoof import SpoofTransaction

from ..evm import BlobParams, osaka_vm, prague_vm
from ..evm.modexp import MODEXP_ADDRESS, modexp_eip198, modexp_eip2565
from . import validity
from .table import Fork

if TYPE_CHECKING:
    from eth.abc import VirtualMachineAPI


@cache
def vm_class_for(fork: Fork, dao_fork_block: int | None) -> type[VirtualMachineAPI]:
    """The VM class for blocks under ``fork`` (a row with the chain's blob parameters)."""
    blob = fork.blob if fork.vm_base in ("prague", "osaka") else None
    return ruled(_vm_class(fork.vm_base, blob, dao_fork_block), fork)  # type: ignore[no-any-return]


_PRICED_BY_EIP198 = ("byzantium", "constantinople", "petersburg", "istanbul", "muir_glacier")


def ruled(vm: Any, fork: Fork) -> Any:
    """``vm`` answering ``fork``'s rules where py-evm's differ (see the module)."""
    state = vm.get_state_class()
    computation = state.computation_class
    precompiles = computation.get_precompiles()
    if MODEXP_ADDRESS in precompiles and fork.vm_base not in ("prague", "osaka"):
        fixed = modexp_eip198 if fork.vm_base in _PRICED_BY_EIP198 else modexp_eip2565
        computation = type(computation.__name__, (computation,), {
            "_precompiles": {**precompiles, MODEXP_ADDRESS: fixed}, "__module__": __name__})
    ruled_state = type(state.__name__, (state,), {
        "fork_rules": fork, "computation_class": computation,
        "validate_transaction": _validate_transaction,
        "py_evm_validate_transaction": state.validate_transaction,
        "has_code_or_nonce": _collides, "__module__": __name__})
    return type(vm.__name__, (vm,), {
        "fork_rules": fork, "_state_class": ruled_state,
        "validate_transaction_against_header": _validate_against_header,
        "__module__": __name__})


def _validate_against_header(vm: Any, base_header: Any, transaction: Any) -> None:
    """What the block has left: gas, and blob gas under the fork's maximum."""
    fork: Fork = vm.fork_rules
    tx = validity.fields_of_evm(transaction)
    blob_left = None
    if fork.blob is not None:
        blob_left = fork.blob.max_gas - (getattr(base_header, "blob_gas_used", 0) or 0)
    block = validity.BlockContext(gas_available=base_header.gas_limit - base_header.gas_used,
                                  blob_gas_available=blob_left)
    validity.check_gas_available(tx, block)
    validity.check_blob_gas_available(fork, tx, block)


def _validate_transaction(state: Any, transaction: Any) -> None:
    """The state's check of a transaction: :func:`.validity.validate_transaction`. A
    ``SpoofTransaction`` (a call's message, checked by its caller) keeps py-evm's checks; an
    impersonated sender (given, not recovered) may hold code."""
    if isinstance(transaction, SpoofTransaction):
        state.py_evm_validate_transaction(transaction)
        return
    fork: Fork = state.fork_rules
    sender = transaction.sender
    impersonated = getattr(transaction, "_given_sender", None) is not None
    context = state.execution_context
    block = validity.BlockContext(
        base_fee=context.base_fee_per_gas if fork.base_fee else None,
        blob_base_fee=state.blob_base_fee if fork.blob is not None else None)
    account = validity.SenderAccount(state.get_nonce(sender), state.get_balance(sender),
                                     b"" if impersonated else state.get_code(sender))
    validity.validate_transaction(fork, validity.fields_of_evm(transaction), block, account,
                                  sender=sender)


def _collides(state: Any, address: Any) -> bool:
    """Whether a creation at ``address`` collides: code, a nonce, or (EIP-7610) storage."""
    if state._account_db.account_has_code_or_nonce(address):
        return True
    return state._account_db._get_storage_root(address) != BLANK_ROOT_HASH  # type: ignore[no-any-return]


@cache
def _vm_class(base: str, blob: BlobParams | None, dao_fork_block: int | None,
              ) -> type[VirtualMachineAPI]:
    if base == "osaka":
        assert blob is not None
        return osaka_vm(blob)
    if base == "prague":
        # py-evm's Prague under the chain's blob parameters, MODEXP's answer corrected
        assert blob is not None
        return prague_vm(blob)
    from eth.vm import forks

    vm: Any = getattr(forks, base.title().replace("_", "") + "VM")  # (py-evm's names: ByzantiumVM)
    if base == "homestead":
        # py-evm's Homestead applies the mainnet DAO drain unless told otherwise.
        if dao_fork_block is None:
            vm = vm.configure(__name__="HomesteadVM", support_dao_fork=False)
        else:
            vm = vm.configure(__name__="HomesteadVM", _dao_fork_block_number=dao_fork_block)
    if base == "cancun":
        vm = without_code_rewrite(vm)
    return vm  # type: ignore[no-any-return]


def without_code_rewrite(vm: Any) -> Any:
    """``vm`` with a state class that skips py-evm's ``set_system_contracts``.

    py-evm's Cancun and Prague states call it for every state built, and it only rewrites the
    beacon-roots (and block-history) contract's code where exactly that code already is
    (``if not get_code(...) != CODE``): a no-op costing two trie reads and a code write.
    tests/forks/test_vms.py holds py-evm to that."""
    state = vm.get_state_class()
    quiet = state.configure(__name__=state.__name__, set_system_contracts=_keep_system_contracts)
    return vm.configure(__name__=vm.__name__, _state_class=quiet)


def _keep_system_contracts(state: Any) -> None:
    """In place of py-evm's ``set_system_contracts``: leave the state as it is."""
