"""Running one message (a contract's code, called with some data and gas) three ways: on
ethread's Osaka VM as py-evm runs it, on the same VM through eth_call's lean classes
(``ethread.evm.lean_interpreter``), and on the execution specs' Osaka (``ethereum-execution``,
the reference); and signing P-256 inputs for P256VERIFY."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, decode_dss_signature
from eth.chains.base import ChainContext
from eth.db.atomic import AtomicDB
from eth.vm.message import Message
from eth_typing import Address
from ethereum.forks.osaka.fork_types import Account
from ethereum.forks.osaka.state import State, TransientStorage, set_account
from ethereum.forks.osaka.vm import BlockEnvironment, TransactionEnvironment
from ethereum.forks.osaka.vm import Message as SpecMessage
from ethereum.forks.osaka.vm.interpreter import process_message_call
from ethereum.forks.osaka.vm.precompiled_contracts.mapping import PRE_COMPILED_CONTRACTS
from ethereum_types.bytes import Bytes20, Bytes32
from ethereum_types.numeric import U64, U256, Uint

from ethread.evm import BlobParams, osaka_vm
from ethread.evm.lean_interpreter import lean_vm_class

SENDER = bytes.fromhex("a94f5374fce5edbc8e2a8697c15331677e6ebf0b")
CONTRACT = bytes.fromhex("0000000000000000000000000000000000c0de00")
COINBASE = bytes.fromhex("2adc25665018aa1fe0e6bc666dac8fc2697ff9ba")
NUMBER, TIMESTAMP, GAS_LIMIT, BASE_FEE = 1, 1000, 30_000_000, 7
VM = osaka_vm(BlobParams(6, 9, 5007716))


@dataclass(frozen=True)
class Outcome:
    """What a message did, as both implementations can say it."""

    success: bool
    output: bytes
    gas_used: int


def _header(vm_class: Any) -> Any:
    header_class = dict(vm_class.get_block_class()._meta.fields)["header"]
    return header_class(difficulty=0, block_number=NUMBER, gas_limit=GAS_LIMIT,
                        timestamp=TIMESTAMP, coinbase=COINBASE, base_fee_per_gas=BASE_FEE)


def run_py_evm(code: bytes, data: bytes, gas: int, *, lean: bool = False,
               vm_class: Any = VM) -> Outcome:
    """The message on ``vm_class`` (through eth_call's lean classes when ``lean``), its
    sender and the contract warm as a transaction would leave them."""
    vm = lean_vm_class(vm_class) if lean else vm_class
    state = vm.build_state(AtomicDB(), _header(vm), ChainContext(1), ())
    state.set_balance(SENDER, 10**18)
    state.set_code(CONTRACT, code)
    state.set_nonce(CONTRACT, 1)
    state.mark_address_warm(SENDER)
    state.mark_address_warm(CONTRACT)
    context = state.get_transaction_context_class()(gas_price=BASE_FEE, origin=SENDER)
    context._blob_versioned_hashes = []
    message = Message(gas=gas, to=Address(CONTRACT), sender=Address(SENDER), value=0, data=data,
                      code=code)
    computation = state.computation_class.apply_message(state, message, context)
    return Outcome(computation.is_success, bytes(computation.output),
                   gas - computation.get_gas_remaining())


def run_reference(code: bytes, data: bytes, gas: int) -> Outcome:
    """The message on the execution specs' Osaka, set up as :func:`run_py_evm` sets it up
    (EIP-3651's warm coinbase included)."""
    state = State()
    sender, contract, coinbase = Bytes20(SENDER), Bytes20(CONTRACT), Bytes20(COINBASE)
    set_account(state, sender, Account(nonce=Uint(0), balance=U256(10**18), code=b""))
    set_account(state, contract, Account(nonce=Uint(1), balance=U256(0), code=code))
    block = BlockEnvironment(
        chain_id=U64(1), state=state, block_gas_limit=Uint(GAS_LIMIT), block_hashes=[],
        coinbase=coinbase, number=Uint(NUMBER), base_fee_per_gas=Uint(BASE_FEE),
        time=U256(TIMESTAMP), prev_randao=Bytes32(bytes(32)), excess_blob_gas=U64(0),
        parent_beacon_block_root=Bytes32(bytes(32)))
    transaction = TransactionEnvironment(
        origin=sender, gas_price=Uint(BASE_FEE), gas=Uint(gas), access_list_addresses=set(),
        access_list_storage_keys=set(), transient_storage=TransientStorage(),
        blob_versioned_hashes=(), authorizations=(), index_in_block=Uint(0), tx_hash=None)
    message = SpecMessage(
        block_env=block, tx_env=transaction, caller=sender, target=contract,
        current_target=contract, gas=Uint(gas), value=U256(0), data=data,
        code_address=contract, code=code, depth=Uint(0), should_transfer_value=True,
        is_static=False,
        accessed_addresses={sender, contract, coinbase, *PRE_COMPILED_CONTRACTS},
        accessed_storage_keys=set(), disable_precompiles=False, parent_evm=None)
    result = process_message_call(message)
    return Outcome(result.error is None, bytes(result.return_data), gas - int(result.gas_left))


def p256_input(private_key: int, digest: bytes) -> bytes:
    """A P256VERIFY input whose signature verifies: hash, r, s, qx, qy."""
    key = ec.derive_private_key(private_key, ec.SECP256R1())
    r, s = decode_dss_signature(key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()))))
    public = key.public_key().public_numbers()
    return digest + b"".join(n.to_bytes(32, "big") for n in (r, s, public.x, public.y))
