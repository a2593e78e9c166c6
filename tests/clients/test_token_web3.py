"""A token test suite as a web3.py user writes it for eth-tester: a real ERC-20 compiled by
solc-js (tests/contracts/Token.sol, artifact Token.json), deployed with
``constructor(...).transact()``, checked through receipts, events, errors, balances, nonces,
code, storage, gas estimates, snapshots and a raw transaction signed by eth-account.

Nothing in it knows ethread but the provider line (``w3`` below): the benchmark
(benchmarks/bench_testchain.py) runs this very file on eth-tester and anvil by replacing that
one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eth_account import Account
from eth_utils import keccak
from web3 import Web3
from web3.exceptions import ContractCustomError, ContractLogicError

import ethread
from ethread.devchain import DevChain
from ethread.web3 import EthreadProvider

ARTIFACT = json.loads((Path(__file__).resolve().parent.parent / "contracts" / "Token.json").read_text())
TOKEN = ARTIFACT["contracts"]["Token"]
SUPPLY = 1_000_000 * 10**18
ETHER = 10**18


@pytest.fixture(scope="module")
def w3() -> Web3:
    return Web3(EthreadProvider(DevChain(ethread.MemoryBackend())))  # the provider line


@pytest.fixture(scope="module")
def accounts(w3):
    return w3.eth.accounts


@pytest.fixture(scope="module")
def deployment(w3, accounts):
    Token = w3.eth.contract(abi=TOKEN["abi"], bytecode=TOKEN["bytecode"])
    tx_hash = Token.constructor("Test Token", "TST", SUPPLY).transact({"from": accounts[0]})
    return w3.eth.wait_for_transaction_receipt(tx_hash)


@pytest.fixture(scope="module")
def token(w3, deployment):
    return w3.eth.contract(address=deployment.contractAddress, abi=TOKEN["abi"])


@pytest.fixture(autouse=True)
def isolation(w3, token):
    snapshot = w3.provider.make_request("evm_snapshot", [])["result"]
    yield
    w3.provider.make_request("evm_revert", [snapshot])


def transfer(w3, token, sender, to, amount):
    tx_hash = token.functions.transfer(to, amount).transact({"from": sender})
    return w3.eth.wait_for_transaction_receipt(tx_hash)


def test_metadata(token):
    assert token.functions.name().call() == "Test Token"
    assert token.functions.symbol().call() == "TST"
    assert token.functions.decimals().call() == 18
    assert token.functions.totalSupply().call() == SUPPLY


def test_deployer_holds_the_supply_and_owns_the_token(token, accounts):
    assert token.functions.balanceOf(accounts[0]).call() == SUPPLY
    assert token.functions.owner().call() == accounts[0]


def test_deployment_receipt(deployment, token, accounts):
    assert deployment.status == 1
    assert deployment.contractAddress == token.address
    assert deployment["from"] == accounts[0] and not deployment.to
    minted = token.events.Transfer().process_receipt(deployment)
    assert len(minted) == 1 and minted[0].args.value == SUPPLY
    assert minted[0].args["from"] == "0x" + "00" * 20


def test_code_is_the_runtime_bytecode(w3, token):
    assert w3.eth.get_code(token.address).hex() == TOKEN["deployedBytecode"][2:]
    assert w3.eth.get_code(w3.eth.accounts[1]) == b""


@pytest.mark.parametrize("amount", [0, 1, 10**18, 12345 * 10**18, SUPPLY])
def test_transfer_moves_the_amount(w3, token, accounts, amount):
    receipt = transfer(w3, token, accounts[0], accounts[1], amount)
    assert receipt.status == 1
    assert token.functions.balanceOf(accounts[1]).call() == amount
    assert token.functions.balanceOf(accounts[0]).call() == SUPPLY - amount


@pytest.mark.parametrize("recipient", [1, 2, 3, 4, 5])
def test_transfer_emits_transfer(w3, token, accounts, recipient):
    receipt = transfer(w3, token, accounts[0], accounts[recipient], 7)
    (event,) = token.events.Transfer().process_receipt(receipt)
    assert event.args["from"] == accounts[0]
    assert event.args.to == accounts[recipient]
    assert event.args.value == 7
    assert event.address == token.address
    assert event.blockNumber == receipt.blockNumber


def test_transfer_to_self_keeps_the_balance(w3, token, accounts):
    transfer(w3, token, accounts[0], accounts[0], 5)
    assert token.functions.balanceOf(accounts[0]).call() == SUPPLY


def test_get_logs_finds_transfers_by_block_range(w3, token, accounts):
    start = w3.eth.block_number + 1
    for amount in (1, 2, 3):
        transfer(w3, token, accounts[0], accounts[2], amount)
    logs = token.events.Transfer().get_logs(from_block=start)
    assert [log.args.value for log in logs] == [1, 2, 3]
    assert logs[0].blockNumber < logs[1].blockNumber < logs[2].blockNumber


def test_get_logs_filters_on_an_indexed_argument(w3, token, accounts):
    start = w3.eth.block_number + 1
    transfer(w3, token, accounts[0], accounts[1], 10)
    transfer(w3, token, accounts[0], accounts[2], 20)
    logs = token.events.Transfer().get_logs(from_block=start, argument_filters={"to": accounts[2]})
    assert [log.args.value for log in logs] == [20]


def test_transfer_beyond_the_balance_is_a_custom_error(w3, token, accounts):
    needed = 5
    error = keccak(text="InsufficientBalance(address,uint256,uint256)")[:4]
    with pytest.raises(ContractCustomError) as raised:
        token.functions.transfer(accounts[0], needed).transact({"from": accounts[3]})
    assert raised.value.data[:10] == "0x" + error.hex()


@pytest.mark.parametrize("amount", [1, 10**18])
def test_custom_error_in_a_call(token, accounts, amount):
    with pytest.raises(ContractCustomError):
        token.functions.transfer(accounts[1], amount).call({"from": accounts[4]})


def test_transfer_from_without_allowance_is_a_require(token, accounts):
    with pytest.raises(ContractLogicError, match="Token: allowance exceeded"):
        token.functions.transferFrom(accounts[0], accounts[2], 1).transact({"from": accounts[1]})


def test_mint_by_another_account_is_refused(token, accounts):
    with pytest.raises(ContractCustomError):
        token.functions.mint(accounts[1], 1).transact({"from": accounts[1]})


def test_approve_sets_the_allowance_and_logs_approval(w3, token, accounts):
    tx_hash = token.functions.approve(accounts[1], 500).transact({"from": accounts[0]})
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash)
    (event,) = token.events.Approval().process_receipt(receipt)
    assert event.args.owner == accounts[0] and event.args.spender == accounts[1]
    assert token.functions.allowance(accounts[0], accounts[1]).call() == 500


@pytest.mark.parametrize("spent", [1, 250, 500])
def test_transfer_from_spends_the_allowance(w3, token, accounts, spent):
    w3.eth.wait_for_transaction_receipt(token.functions.approve(accounts[1], 500).transact({"from": accounts[0]}))
    tx_hash = token.functions.transferFrom(accounts[0], accounts[2], spent).transact({"from": accounts[1]})
    assert w3.eth.wait_for_transaction_receipt(tx_hash).status == 1
    assert token.functions.allowance(accounts[0], accounts[1]).call() == 500 - spent
    assert token.functions.balanceOf(accounts[2]).call() == spent


def test_an_unlimited_allowance_is_not_spent(w3, token, accounts):
    unlimited = 2**256 - 1
    w3.eth.wait_for_transaction_receipt(token.functions.approve(accounts[1], unlimited).transact({"from": accounts[0]}))
    w3.eth.wait_for_transaction_receipt(
        token.functions.transferFrom(accounts[0], accounts[1], 9).transact({"from": accounts[1]}))
    assert token.functions.allowance(accounts[0], accounts[1]).call() == unlimited


@pytest.mark.parametrize("amount", [1, 10**24])
def test_the_owner_mints(w3, token, accounts, amount):
    w3.eth.wait_for_transaction_receipt(token.functions.mint(accounts[5], amount).transact({"from": accounts[0]}))
    assert token.functions.balanceOf(accounts[5]).call() == amount
    assert token.functions.totalSupply().call() == SUPPLY + amount


def test_each_transaction_raises_the_nonce(w3, token, accounts):
    before = w3.eth.get_transaction_count(accounts[0])
    transfer(w3, token, accounts[0], accounts[1], 1)
    transfer(w3, token, accounts[0], accounts[1], 1)
    assert w3.eth.get_transaction_count(accounts[0]) == before + 2


def test_a_failed_transaction_raises_no_nonce(w3, token, accounts):
    before = w3.eth.get_transaction_count(accounts[6])
    with pytest.raises(ContractCustomError):
        token.functions.transfer(accounts[0], 1).transact({"from": accounts[6]})
    assert w3.eth.get_transaction_count(accounts[6]) == before


def test_gas_is_paid_in_ether(w3, token, accounts):
    before = w3.eth.get_balance(accounts[0])
    receipt = transfer(w3, token, accounts[0], accounts[1], 1)
    assert w3.eth.get_balance(accounts[0]) == before - receipt.gasUsed * receipt.effectiveGasPrice


@pytest.mark.parametrize("value", [1, ETHER, 100 * ETHER])
def test_ether_transfer(w3, accounts, value):
    before = w3.eth.get_balance(accounts[7])
    tx_hash = w3.eth.send_transaction({"from": accounts[0], "to": accounts[7], "value": value})
    assert w3.eth.wait_for_transaction_receipt(tx_hash).gasUsed == 21_000
    assert w3.eth.get_balance(accounts[7]) == before + value


def test_total_supply_is_in_storage_slot_2(w3, token):
    assert int.from_bytes(w3.eth.get_storage_at(token.address, 2), "big") == SUPPLY


def test_owner_is_in_storage_slot_3(w3, token, accounts):
    assert w3.eth.get_storage_at(token.address, 3)[-20:].hex() == accounts[0][2:].lower()


@pytest.mark.parametrize("holder", [0, 1])
def test_balances_live_in_the_mapping_at_slot_4(w3, token, accounts, holder):
    transfer(w3, token, accounts[0], accounts[1], 77)
    slot = keccak(bytes.fromhex(accounts[holder][2:].rjust(64, "0")) + (4).to_bytes(32, "big"))
    stored = int.from_bytes(w3.eth.get_storage_at(token.address, int.from_bytes(slot, "big")), "big")
    assert stored == token.functions.balanceOf(accounts[holder]).call()


def test_estimate_gas_is_enough_and_close(w3, token, accounts):
    estimate = token.functions.transfer(accounts[1], 10).estimate_gas({"from": accounts[0]})
    receipt = w3.eth.wait_for_transaction_receipt(
        token.functions.transfer(accounts[1], 10).transact({"from": accounts[0], "gas": estimate}))
    assert receipt.status == 1
    assert receipt.gasUsed <= estimate <= receipt.gasUsed * 1.2 + 5000


def test_estimate_gas_of_a_failing_call_raises(token, accounts):
    with pytest.raises(ContractCustomError):
        token.functions.transfer(accounts[0], 1).estimate_gas({"from": accounts[8]})


def test_snapshot_and_revert(w3, token, accounts):
    snapshot = w3.provider.make_request("evm_snapshot", [])["result"]
    transfer(w3, token, accounts[0], accounts[9], 1000)
    assert token.functions.balanceOf(accounts[9]).call() == 1000
    w3.provider.make_request("evm_revert", [snapshot])
    assert token.functions.balanceOf(accounts[9]).call() == 0


def test_isolation_undid_the_previous_test(token, accounts):
    assert token.functions.balanceOf(accounts[9]).call() == 0
    assert token.functions.balanceOf(accounts[0]).call() == SUPPLY


def test_a_raw_transaction_signed_by_eth_account(w3, token, accounts):
    signer = Account.from_key(keccak(text="token suite signer"))
    w3.eth.wait_for_transaction_receipt(
        w3.eth.send_transaction({"from": accounts[0], "to": signer.address, "value": ETHER}))
    transfer(w3, token, accounts[0], signer.address, 300)
    tx = token.functions.transfer(accounts[1], 120).build_transaction({
        "from": signer.address, "nonce": w3.eth.get_transaction_count(signer.address),
    })
    signed = signer.sign_transaction(tx)
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash)
    assert receipt.status == 1 and receipt["from"] == signer.address
    assert token.functions.balanceOf(signer.address).call() == 180
    assert w3.eth.get_transaction(tx_hash)["nonce"] == 0


def test_a_view_call_at_an_earlier_block(w3, token, accounts):
    before = w3.eth.block_number
    transfer(w3, token, accounts[0], accounts[1], 42)
    assert token.functions.balanceOf(accounts[1]).call(block_identifier=before) == 0
    assert token.functions.balanceOf(accounts[1]).call() == 42


def test_every_transaction_is_mined_in_its_own_block(w3, token, accounts):
    first = transfer(w3, token, accounts[0], accounts[1], 1)
    second = transfer(w3, token, accounts[0], accounts[1], 1)
    assert second.blockNumber == first.blockNumber + 1
    assert w3.eth.get_block(second.blockNumber).transactions == [second.transactionHash]


def test_a_transaction_can_be_looked_up(w3, token, accounts):
    receipt = transfer(w3, token, accounts[0], accounts[1], 3)
    tx = w3.eth.get_transaction(receipt.transactionHash)
    assert tx["from"] == accounts[0] and tx.to == token.address
    assert tx.blockNumber == receipt.blockNumber


def test_the_chain_id_is_a_dev_chain(w3):
    assert w3.eth.chain_id in (1337, 31337, 131277322940537)


def test_an_unknown_holder_has_nothing(token):
    assert token.functions.balanceOf("0x000000000000000000000000000000000000dEaD").call() == 0


def test_block_timestamps_never_go_back(w3, token, accounts):
    first = transfer(w3, token, accounts[0], accounts[1], 1)
    second = transfer(w3, token, accounts[0], accounts[1], 1)
    assert w3.eth.get_block(second.blockNumber).timestamp >= w3.eth.get_block(first.blockNumber).timestamp
