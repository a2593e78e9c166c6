"""devchain/sending.py: transactions made in code (``send``, ``deploy``, ``deploy_runtime``,
``fund``) in every kind the fork allows, with their nonces, fees and delegations; taken as a
node takes them (``submit``: raw bytes, automine on or off, impersonated senders); and refused
as a pool refuses them, without consuming a nonce."""

from __future__ import annotations

import pytest
from eth_abi.abi import encode
from eth_utils import keccak

import ethread
from ethread.backends.memory import MemoryBackend
from ethread.devchain import PRAGUE_FORKS, DevChain, DevChainError, contracts
from ethread.devchain.sending import CONTRACT_GAS, TRANSFER_GAS, Fees, encode_constructor_args
from ethread.devchain.signing import sign_authorization, sign_transaction, versioned_hash
from ethread.errors import TransactionRejected
from ethread.models import AccessListEntry, DynamicFeeTransaction, SetCodeTransaction
from ethread.rlpcodec.transactions import encode_transaction


@pytest.fixture(scope="module")
def prague() -> DevChain:
    return DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=4)


def test_prague_from_genesis_takes_every_kind_in_one_block(prague: DevChain) -> None:
    a = prague.accounts
    emitter = prague.deploy_runtime(a[0], contracts.LOG_EMITTER)
    prague.mine()
    topic = keccak(b"one")
    hashes = [
        prague.send(a[1], emitter, data=contracts.log_calldata([topic]), kind="legacy"),
        prague.send(a[1], emitter, data=contracts.log_calldata([topic]), kind="legacy",
                    protected=False),
        prague.send(a[2], emitter, kind="access-list",
                    access_list=[AccessListEntry(address=emitter, storage_keys=())]),
        prague.send(a[2], emitter, data=contracts.log_calldata([topic, topic])),
        prague.send(a[3], a[0].address, kind="blob", blob_hashes=[versioned_hash(b"x")]),
        # self-sponsored: the authorization's nonce is one above the transaction's
        prague.send(a[3], a[3].address, kind="set-code", delegations=[(a[3], emitter)]),
    ]
    block = prague.mine(withdrawals=[(a[0].address, 1)])
    assert [t.hash for t in block.transactions] == hashes
    assert [t.transaction.type for t in block.transactions] == [0, 0, 1, 2, 3, 4]
    receipts = [prague.receipt(h) for h in hashes]
    assert all(r is not None and r.status == 1 for r in receipts)
    assert [log.log_index for r in receipts if r for log in r.logs] == [0, 1, 2]
    assert prague.code(a[3].address) == b"\xef\x01\x00" + emitter
    assert prague.nonce(a[3].address) == 3  # two transactions' worth: sent, authorized


def test_presigned_authorization_and_chain_id_zero(prague: DevChain) -> None:
    a = prague.accounts
    with pytest.raises(DevChainError, match="create a contract"):
        prague.send(a[0], None, kind="set-code")
    target = prague.deploy_runtime(a[0], contracts.STORAGE)
    prague.mine()
    auth = sign_authorization(a[2], 0, target, prague.nonce(a[2].address))
    tx_hash = prague.send(a[1], a[2].address, kind="set-code", delegations=[auth])
    prague.mine()
    receipt = prague.receipt(tx_hash)
    assert receipt is not None and receipt.status == 1
    block = prague.block(receipt.block_number)
    tx = block.transactions[0].transaction
    assert isinstance(tx, SetCodeTransaction) and tx.authorization_list == (auth,)
    assert prague.code(a[2].address) == b"\xef\x01\x00" + target


STORE = bytes.fromhex("60003560005500")  # SSTORE(0, calldata word 0)


def _constructor_storing_its_argument(runtime: bytes) -> bytes:
    """Creation code whose constructor stores its one uint256 argument (the last 32 bytes of
    the code) in slot 0, then returns ``runtime``."""

    def prefix(start: int) -> bytes:
        return contracts.assemble(
            32, "CODESIZE", "SUB", 32, "SWAP1", 0, "CODECOPY",  # memory[0:32] = the argument
            0, "MLOAD", 0, "SSTORE",
            len(runtime).to_bytes(2, "big"), "DUP1", start.to_bytes(2, "big"), 0, "CODECOPY",
            0, "RETURN",
        )

    return prefix(len(prefix(0))) + runtime


CONSTRUCTOR = _constructor_storing_its_argument(STORE)


def test_deploy_takes_creation_bytecode_and_constructor_arguments(chain: DevChain) -> None:
    owner = chain.accounts[0]
    encoded = chain.deploy(owner, CONSTRUCTOR, encode(["uint256"], [41]))
    abi = [{"type": "constructor", "inputs": [{"name": "x", "type": "uint256"}]}]
    by_abi = chain.deploy(owner, "0x" + CONSTRUCTOR.hex(), abi=abi, args=(42,))
    chain.mine()
    assert chain.code(encoded) == STORE and chain.storage(encoded, 0) == 41
    assert chain.code(by_abi) == STORE and chain.storage(by_abi, 0) == 42
    runtime = chain.deploy_runtime(owner, STORE)
    chain.mine()
    assert chain.code(runtime) == STORE
    with pytest.raises(TypeError, match="abi"):
        chain.deploy(owner, CONSTRUCTOR, args=(1,))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        chain.deploy(owner, CONSTRUCTOR, abi=abi, args=())


def test_a_refused_send_consumes_no_nonce(chain: DevChain) -> None:
    sender, other = chain.accounts[:2]
    with pytest.raises(TransactionRejected, match="intrinsic gas too low: gas 20000, minimum needed 21000"):
        chain.send(sender, other.address, value=1, gas=20_000)
    with pytest.raises(TransactionRejected, match="insufficient funds"):
        chain.send(sender, other.address, value=10**30)
    with pytest.raises(TypeError, match="DevAccount"):
        chain.send(sender.address, other.address)  # type: ignore[arg-type]
    chain.send(sender, other.address, value=1)
    block = chain.mine()
    assert block.transactions[0].transaction.nonce == 0 and chain.nonce(sender.address) == 1



def _transfer(chain: DevChain, sender: int, to: bytes, value: int, nonce: int) -> DynamicFeeTransaction:
    tx = DynamicFeeTransaction(chain_id=chain.chain_id, nonce=nonce, max_priority_fee_per_gas=10**9,
                               max_fee_per_gas=30 * 10**9, gas=TRANSFER_GAS, to=to, value=value,
                               data=b"", access_list=(), y_parity=0, r=0, s=0)
    signed = sign_transaction(tx, chain.accounts[sender])
    assert isinstance(signed, DynamicFeeTransaction)
    return signed


def test_gas_and_fees_follow_the_kind_and_the_target(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    emitter = chain.deploy_runtime(a, contracts.LOG_EMITTER)
    chain.mine()
    plain = chain.send(a, b.address, value=1)
    to_code = chain.send(a, emitter)  # no data, but the target has code
    legacy = chain.send(b, a.address, kind="legacy", fees=Fees(gas_price=7 * 10**9))
    block = chain.mine()
    by_hash = {t.hash: t.transaction for t in block.transactions}
    assert by_hash[plain].gas == TRANSFER_GAS and by_hash[to_code].gas == CONTRACT_GAS
    assert isinstance(by_hash[plain], DynamicFeeTransaction)
    assert by_hash[plain].max_fee_per_gas == Fees().max_fee_per_gas
    assert by_hash[legacy].type == 0 and by_hash[legacy].gas_price == 7 * 10**9


def test_fund_and_next_nonce_count_what_is_pending(chain: DevChain) -> None:
    first, _, third = chain.accounts
    target = b"\x42" * 20
    assert chain.next_nonce(first.address) == 0
    chain.fund(target, 5)
    chain.fund(target, 6, sender=third)
    chain.send(first, target, value=7)
    assert chain.next_nonce(first.address) == 2 and chain.next_nonce(third.address) == 1
    assert chain.nonce(first.address) == 0  # nothing mined yet
    chain.mine()
    assert chain.balance(target) == 18 and chain.nonce(first.address) == 2


def test_kinds_and_targets_that_do_not_go_together(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    with pytest.raises(DevChainError, match="delegations kind='set-code'"):
        chain.send(a, b.address, delegations=[(a, b.address)])
    with pytest.raises(DevChainError, match="blob hashes need kind='blob'"):
        chain.send(a, b.address, blob_hashes=[versioned_hash(b"")])
    with pytest.raises(DevChainError, match="cannot create a contract"):
        chain.send(a, None, kind="blob", blob_hashes=[versioned_hash(b"")])
    with pytest.raises(ValueError, match="kind must be one of"):
        chain.send(a, b.address, kind="eip-9999")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        chain.deploy(a, b"")
    assert chain.next_nonce(a.address) == 0 and chain.pending == ()


def test_submit_takes_raw_bytes_and_mines_them_at_once_while_automining(chain: DevChain) -> None:
    a, b, _ = chain.accounts
    before = chain.balance(b.address)
    tx = _transfer(chain, 0, b.address, 9, nonce=0)
    tx_hash = chain.submit(encode_transaction(tx))
    receipt = chain.receipt(tx_hash)
    assert receipt is not None and receipt.status == 1 and receipt.sender == a.address
    assert chain.head.number == 1 and chain.balance(b.address) == before + 9
    with pytest.raises(TransactionRejected, match="nonce too low"):
        chain.submit(tx)


def test_without_automine_a_submitted_gap_waits_for_the_nonce_before_it() -> None:
    chain = DevChain(ethread.MemoryBackend(), accounts=2, automine=False)
    to = chain.accounts[1].address
    later = chain.submit(_transfer(chain, 0, to, 1, nonce=1))
    assert chain.pending == () and chain.head.number == 0
    first = chain.submit(_transfer(chain, 0, to, 1, nonce=0))
    assert [keccak(encode_transaction(t)) for t in chain.pending] == [first, later]
    assert [t.hash for t in chain.mine().transactions] == [first, later]


def test_an_impersonated_account_sends_without_a_signature(chain: DevChain) -> None:
    stranger = b"\x77" * 20
    chain.fund(stranger, 10**18)
    chain.mine()
    unsigned = DynamicFeeTransaction(chain_id=chain.chain_id, nonce=0, max_priority_fee_per_gas=1,
                                     max_fee_per_gas=30 * 10**9, gas=TRANSFER_GAS,
                                     to=chain.accounts[0].address, value=3, data=b"",
                                     access_list=(), y_parity=0, r=1, s=1)
    with pytest.raises(TransactionRejected, match="is not impersonated"):
        chain.submit(unsigned, sender=stranger)
    chain.impersonate(stranger)
    assert chain.is_impersonated(stranger)
    receipt = chain.receipt(chain.submit(unsigned, sender=stranger))
    assert receipt is not None and receipt.status == 1 and receipt.sender == stranger
    chain.stop_impersonating(stranger)
    assert not chain.is_impersonated(stranger)


def test_constructor_arguments_are_encoded_by_the_abi() -> None:
    abi = [{"type": "function", "name": "f", "inputs": []},
           {"type": "constructor", "inputs": [{"name": "a", "type": "uint256"},
                                              {"name": "b", "type": "address"}]}]
    assert encode_constructor_args(abi, (5, "0x" + "11" * 20)) == encode(
        ["uint256", "address"], [5, "0x" + "11" * 20])
    assert encode_constructor_args([{"type": "function", "name": "f", "inputs": []}], ()) == b""
    pairs = [{"type": "constructor", "inputs": [{"name": "p", "type": "tuple[]", "components": [
        {"name": "x", "type": "uint8"}, {"name": "y", "type": "bool"}]}]}]
    assert encode_constructor_args(pairs, ([(1, True), (2, False)],)) == encode(
        ["(uint8,bool)[]"], [[(1, True), (2, False)]])
