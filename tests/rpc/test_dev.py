"""Sending and test controls over JSON-RPC on a dev chain's network: eth_accounts,
eth_sendTransaction, eth_sendRawTransaction (all five kinds, refused in geth's words),
automine, evm_* and anvil_*/hardhat_* controls; a network without a dev chain answers -32601."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest
from eth_utils import to_checksum_address

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.signing import DevAccount, sign_authorization, sign_transaction, versioned_hash
from ethread.models import (
    AccessListTransaction,
    BlobTransaction,
    DynamicFeeTransaction,
    LegacyTransaction,
    LogFilter,
    SetCodeTransaction,
    Transaction,
)
from ethread.rlpcodec.transactions import encode_transaction
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher

GWEI = 10**9
STORE = bytes.fromhex("60003560005500")  # SSTORE(0, calldata word 0)
EMIT = bytes.fromhex("60206000a000")  # LOG0 of 32 zero bytes


class Rpc:
    def __init__(self, chain: DevChain | None, backend: Any = None) -> None:
        source = chain.backend if chain is not None else backend
        context = Context() if chain is None else Context().for_dev_chain(
            chain, tuple(account.address for account in chain.accounts))
        self.dispatcher = Dispatcher(source, context)

    def raw(self, method: str, *params: Any) -> dict[str, Any]:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
        answer = self.dispatcher.handle(body)
        assert answer is not None
        return orjson.loads(answer)  # type: ignore[no-any-return]

    def __call__(self, method: str, *params: Any) -> Any:
        answer = self.raw(method, *params)
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, method: str, *params: Any) -> dict[str, Any]:
        answer = self.raw(method, *params)
        assert "error" in answer, answer
        return answer["error"]  # type: ignore[no-any-return]


@pytest.fixture
def chain() -> DevChain:
    return DevChain(ethread.MemoryBackend(), accounts=3)


@pytest.fixture
def rpc(chain: DevChain) -> Rpc:
    return Rpc(chain)


def hx(value: bytes) -> str:
    return "0x" + value.hex()


def signed(chain: DevChain, account: DevAccount, tx: Transaction) -> str:
    chain_id = chain.chain_id if isinstance(tx, LegacyTransaction) else None
    return hx(encode_transaction(sign_transaction(tx, account, chain_id)))


def test_eth_accounts_are_the_test_mnemonic_accounts(rpc: Rpc) -> None:
    assert rpc("eth_accounts") == ["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                                   "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
                                   "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"]


def test_a_network_without_a_dev_chain_refuses_the_controls(chain: DevChain) -> None:
    plain = Rpc(None, chain.backend)
    assert plain("eth_accounts") == []
    for method in ("eth_sendTransaction", "eth_sendRawTransaction", "evm_mine", "evm_snapshot",
                   "evm_revert", "evm_increaseTime", "anvil_setBalance", "hardhat_setCode",
                   "anvil_impersonateAccount"):
        error = plain.error(method)
        assert error["code"] == -32601 and method in error["message"]


def test_send_transaction_automines_each_transaction_in_its_own_block(chain: DevChain, rpc: Rpc) -> None:
    a, b = (hx(x.address) for x in chain.accounts[:2])
    first = rpc("eth_sendTransaction", {"from": a, "to": b, "value": "0x5"})
    second = rpc("eth_sendTransaction", {"from": a, "to": b, "value": "0x7", "gasPrice": hex(3 * GWEI)})
    assert chain.head.number == 2
    one, two = chain.receipt(bytes.fromhex(first[2:])), chain.receipt(bytes.fromhex(second[2:]))
    assert one is not None and one.block_number == 1 and one.status == 1 and one.gas_used == 21_000
    assert two is not None and two.block_number == 2 and two.type == 0
    assert chain.balance(chain.accounts[1].address) == chain.balance(chain.accounts[2].address) + 12


def test_send_transaction_estimates_gas_and_refuses_unknown_senders(chain: DevChain, rpc: Rpc) -> None:
    a = hx(chain.accounts[0].address)
    created = rpc("eth_sendTransaction", {"from": a, "data": hx(contracts.initcode(STORE))})
    receipt = chain.receipt(bytes.fromhex(created[2:]))
    assert receipt is not None and receipt.status == 1 and receipt.contract_address is not None
    assert chain.code(receipt.contract_address) == STORE
    block = chain.block(receipt.block_number)
    assert receipt.gas_used <= block.transactions[0].transaction.gas < receipt.gas_used * 1.1 + 30_000
    error = rpc.error("eth_sendTransaction", {"from": hx(b"\x11" * 20), "to": a})
    assert error["code"] == -32000 and error["message"].startswith("unknown account")


def test_all_five_kinds_are_accepted_raw(chain: DevChain, rpc: Rpc) -> None:
    sender, other = chain.accounts[0], chain.accounts[1]
    to = other.address
    cid = chain.chain_id
    fee = dict(max_priority_fee_per_gas=GWEI, max_fee_per_gas=10 * GWEI)
    kinds: list[Transaction] = [
        LegacyTransaction(nonce=0, gas_price=3 * GWEI, gas=21_000, to=to, value=1, data=b"", v=0, r=0, s=0),
        AccessListTransaction(chain_id=cid, nonce=1, gas_price=3 * GWEI, gas=30_000, to=to, value=1,
                              data=b"", access_list=(), y_parity=0, r=0, s=0),
        DynamicFeeTransaction(chain_id=cid, nonce=2, gas=21_000, to=to, value=1, data=b"",
                              access_list=(), y_parity=0, r=0, s=0, **fee),
        BlobTransaction(chain_id=cid, nonce=3, gas=21_000, to=to, value=1, data=b"", access_list=(),
                        max_fee_per_blob_gas=GWEI, blob_versioned_hashes=(versioned_hash(b"x"),),
                        y_parity=0, r=0, s=0, **fee),
        SetCodeTransaction(chain_id=cid, nonce=4, gas=100_000, to=to, value=0, data=b"", access_list=(),
                           authorization_list=(sign_authorization(chain.accounts[2], cid, b"\x42" * 20, 0),),
                           y_parity=0, r=0, s=0, **fee),
    ]
    for number, tx in enumerate(kinds, start=1):
        tx_hash = rpc("eth_sendRawTransaction", signed(chain, sender, tx))
        receipt = chain.receipt(bytes.fromhex(tx_hash[2:]))
        assert receipt is not None and receipt.status == 1 and receipt.block_number == number
        assert receipt.type == tx.type
    assert chain.code(chain.accounts[2].address) == b"\xef\x01\x00" + b"\x42" * 20


def _transfer(chain: DevChain, **changes: Any) -> DynamicFeeTransaction:
    tx = DynamicFeeTransaction(chain_id=chain.chain_id, nonce=0, max_priority_fee_per_gas=GWEI,
                               max_fee_per_gas=10 * GWEI, gas=21_000, to=chain.accounts[1].address,
                               value=1, data=b"", access_list=(), y_parity=0, r=0, s=0)
    return dataclasses.replace(tx, **changes)


def test_raw_transactions_are_refused_in_geths_words_and_consume_nothing(chain: DevChain, rpc: Rpc) -> None:
    sender = chain.accounts[0]
    poor = DevAccount(50)
    balance = chain.balance(sender.address)
    cases = [
        (signed(chain, sender, _transfer(chain, nonce=1)), "nonce too high: next nonce 0, tx nonce 1"),
        (signed(chain, poor, _transfer(chain)),
         "insufficient funds for gas * price + value: balance 0, tx cost 210000000000001, overshot 210000000000001"),
        (signed(chain, sender, _transfer(chain, max_fee_per_gas=1, max_priority_fee_per_gas=1)),
         "max fee per gas less than block base fee: address 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, "
         "maxFeePerGas: 1, baseFee: 875000000"),
        (signed(chain, sender, _transfer(chain, gas=20_000)), "intrinsic gas too low: gas 20000, minimum needed 21000"),
        (signed(chain, sender, _transfer(chain, chain_id=1)), "invalid chain id for signer: have 1 want 1337"),
        (hx(encode_transaction(dataclasses.replace(sign_transaction(_transfer(chain), sender), s=0))),
         "invalid sender"),
        ("0x02c0", "rlp"),
    ]
    for raw, message in cases:
        error = rpc.error("eth_sendRawTransaction", raw)
        assert error["code"] == -32000 and error["message"].startswith(message), error
    assert chain.head.number == 0 and chain.pending == () and chain.balance(sender.address) == balance
    rpc("eth_sendRawTransaction", signed(chain, sender, _transfer(chain)))
    error = rpc.error("eth_sendRawTransaction", signed(chain, sender, _transfer(chain, value=2)))
    assert error["message"] == "nonce too low: next nonce 1, tx nonce 0"


def test_eth_account_signed_transactions_go_through(chain: DevChain, rpc: Rpc) -> None:
    account = chain.accounts[0].local_account
    to = to_checksum_address(chain.accounts[1].address)
    raw = account.sign_transaction({"chainId": chain.chain_id, "nonce": 0, "to": to, "value": 9,
                                    "gas": 21_000, "maxFeePerGas": 10 * GWEI,
                                    "maxPriorityFeePerGas": GWEI}).raw_transaction
    tx_hash = rpc("eth_sendRawTransaction", hx(bytes(raw)))
    included = ethread.methods.get_transaction_by_hash(chain.backend, bytes.fromhex(tx_hash[2:]))
    assert included is not None and included.sender == chain.accounts[0].address


def test_interval_mining_keeps_transactions_pending_until_a_block(chain: DevChain, rpc: Rpc) -> None:
    a, b = (hx(x.address) for x in chain.accounts[:2])
    rpc("evm_setAutomine", False)
    assert rpc("anvil_getAutomine") is False
    rpc("eth_sendTransaction", {"from": a, "to": b, "value": "0x1"})
    rpc("eth_sendTransaction", {"from": a, "to": b, "value": "0x1"})
    assert chain.head.number == 0 and len(chain.pending) == 2
    assert rpc("evm_mine") == "0x0"
    assert chain.head.number == 1 and len(chain.block(1).transactions) == 2


def test_snapshot_and_revert_drop_blocks_and_every_index(chain: DevChain, rpc: Rpc) -> None:
    a = hx(chain.accounts[0].address)
    chain.deploy_runtime(chain.accounts[0], EMIT)
    chain.mine()
    emitter = hx(ethread.methods.get_block_receipts(chain.backend, 1)[0].contract_address)  # type: ignore[index,arg-type]
    snapshot = rpc("evm_snapshot")
    assert snapshot == "0x1"
    tx_hash = rpc("eth_sendTransaction", {"from": a, "to": emitter, "gas": "0x186a0"})
    every = LogFilter(from_block=0, to_block="latest")
    assert len(ethread.methods.get_logs(chain.backend, every)) == 1
    assert rpc("eth_getTransactionByHash", tx_hash) is not None
    assert rpc("eth_blockNumber") == "0x2"
    assert rpc("evm_revert", snapshot) is True
    assert rpc("eth_blockNumber") == "0x1"
    assert rpc("eth_getTransactionByHash", tx_hash) is None
    assert ethread.methods.get_logs(chain.backend, every) == []
    assert rpc("eth_getBlockByNumber", "0x2", False) is None
    assert rpc("evm_revert", snapshot) is False  # used up
    again = rpc("eth_sendTransaction", {"from": a, "to": emitter, "gas": "0x186a0"})
    assert again == tx_hash  # the same transaction, mined again at the same height
    assert rpc("eth_getTransactionByHash", again)["blockNumber"] == "0x2"
    assert len(ethread.methods.get_logs(chain.backend, every)) == 1


def test_nested_snapshots_revert_in_any_order(chain: DevChain, rpc: Rpc) -> None:
    first = rpc("evm_snapshot")
    rpc("evm_mine")
    second = rpc("evm_snapshot")
    rpc("evm_mine")
    assert rpc("evm_revert", second) is True and chain.head.number == 1
    assert rpc("evm_revert", first) is True and chain.head.number == 0


def test_time_controls(chain: DevChain, rpc: Rpc) -> None:
    rpc("evm_mine")
    assert chain.head.timestamp == 10
    assert rpc("evm_increaseTime", 3600) == 3600
    rpc("evm_mine")
    assert chain.head.timestamp == 3620
    rpc("evm_setNextBlockTimestamp", hex(5000))
    rpc("evm_mine")
    assert chain.head.timestamp == 5000
    rpc("evm_mine", 6000)
    assert chain.head.timestamp == 6000
    assert rpc.error("evm_setNextBlockTimestamp", 6000)["message"].startswith("timestamp 6000 is not after")
    rpc("anvil_mine", "0x3", "0x2")
    assert chain.head.number == 7 and chain.head.timestamp == 6006
    rpc("evm_setNextBlockTimestamp", hex(7000))
    rpc("anvil_mine", "0x2", "0x0")  # an interval of 0 (viem's test client): the chain's clock
    assert chain.head.number == 9 and chain.head.timestamp == 7010


def test_request_accounts_and_unsigned_transactions_as_anvil_answers_them(
        chain: DevChain, rpc: Rpc) -> None:
    assert rpc("eth_requestAccounts") == rpc("eth_accounts")
    stranger = "0x" + "5a" * 20
    rpc("anvil_setBalance", stranger, hex(10**18))
    rpc("anvil_impersonateAccount", stranger)
    tx_hash = rpc("eth_sendUnsignedTransaction", {"from": stranger, "to": "0x" + "01" * 20,
                                                  "value": "0x9"})
    assert rpc("eth_getTransactionByHash", tx_hash)["from"] == stranger
    assert chain.balance(b"\x01" * 20) == 9


def test_state_controls_and_their_hardhat_aliases(chain: DevChain, rpc: Rpc) -> None:
    target = b"\x77" * 20
    rpc("anvil_setBalance", hx(target), hex(10**18))
    assert chain.balance(target) == 10**18
    rpc("hardhat_setCode", hx(target), hx(STORE))
    assert chain.code(target) == STORE
    assert rpc("anvil_setStorageAt", hx(target), "0x1", "0x" + "00" * 31 + "2a") is True
    assert chain.storage(target, 1) == 42
    rpc("hardhat_setNonce", hx(target), "0x5")
    assert chain.nonce(target) == 5
    assert chain.balance(target) == 10**18 and chain.code(target) == STORE  # kept
    assert chain.head.number == 4  # each edit is a block of its own, validated by the importer
    assert all(not chain.block(n).transactions for n in range(1, 5))


def test_impersonated_accounts_send_without_their_keys(chain: DevChain, rpc: Rpc) -> None:
    whale = b"\x57" * 20
    rpc("anvil_setBalance", hx(whale), hex(10**18))
    request = {"from": hx(whale), "to": hx(chain.accounts[1].address), "value": "0x64"}
    assert rpc.error("eth_sendTransaction", request)["message"].startswith("unknown account")
    rpc("anvil_impersonateAccount", hx(whale))
    before = chain.balance(chain.accounts[1].address)
    tx_hash = rpc("eth_sendTransaction", request)
    included = rpc("eth_getTransactionByHash", tx_hash)
    assert included["from"] == hx(whale) and included["blockNumber"] == "0x2"
    assert chain.balance(chain.accounts[1].address) == before + 100
    assert chain.nonce(whale) == 1
    # a contract can be impersonated too (the sender-is-an-EOA rule is waived)
    rpc("hardhat_setCode", hx(whale), hx(STORE))
    rpc("eth_sendTransaction", {**request, "value": "0x1"})
    assert chain.balance(chain.accounts[1].address) == before + 101
    rpc("anvil_stopImpersonatingAccount", hx(whale))
    assert rpc.error("eth_sendTransaction", request)["message"].startswith("unknown account")
