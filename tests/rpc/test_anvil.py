"""anvil's controls on a dev chain (``ethread.rpc.anvil``): the next blocks' gas limit, base
fee and coinbase, the chain id, reset, mining with a count, interval and options, and the node
info and metadata in anvil's shapes. (Signing: tests/codec/test_devsign.py; state files:
tests/devchain/test_state_file.py.)"""

from __future__ import annotations

import ethread
from ethread.devchain import DevChain
from ethread.devchain.genesis import ForkSchedule
from tests.support.provider_calls import address_of, error, ok

# -- anvil's controls ---------------------------------------------------------------------------


def test_gas_limit_base_fee_and_coinbase_of_the_next_blocks(chain: DevChain) -> None:
    assert ok(chain, "evm_setBlockGasLimit", "0x2625a00") is True  # 40,000,000 at once
    assert ok(chain, "anvil_setNextBlockBaseFeePerGas", hex(7 * 10**9)) is None
    assert ok(chain, "anvil_setCoinbase", "0x" + "cb" * 20) is None
    assert ok(chain, "anvil_nodeInfo")["environment"]["baseFee"] == hex(7 * 10**9)
    tx_hash = ok(chain, "eth_sendTransaction", {"from": address_of(chain, 0),
                                               "to": address_of(chain, 1), "value": "0x1"})
    block = ok(chain, "eth_getBlockByNumber", "latest", False)
    assert (block["gasLimit"], block["baseFeePerGas"], block["miner"]) == (
        "0x2625a00", hex(7 * 10**9), "0x" + "cb" * 20)
    receipt = ok(chain, "eth_getTransactionReceipt", tx_hash)
    assert int(receipt["effectiveGasPrice"], 16) >= 7 * 10**9
    ok(chain, "evm_mine")
    after = ok(chain, "eth_getBlockByNumber", "latest", False)
    assert after["gasLimit"] == "0x2625a00" and int(after["baseFeePerGas"], 16) < 7 * 10**9
    assert error(chain, "evm_setBlockGasLimit", "0x10")[0] == -32602
    assert error(chain, "anvil_setCoinbase", "0x12")[0] == -32602
    assert error(chain, "anvil_setNextBlockBaseFeePerGas", "fast")[0] == -32602


def test_no_base_fee_before_london() -> None:
    chain = DevChain(ethread.MemoryBackend(), accounts=1, forks=ForkSchedule.from_genesis("berlin"))
    code, message = error(chain, "anvil_setNextBlockBaseFeePerGas", "0x1")
    assert code == -32602 and "London" in message


def test_set_chain_id_signs_and_checks_for_the_new_id(chain: DevChain) -> None:
    assert ok(chain, "anvil_setChainId", "0x7a69") is None
    assert ok(chain, "eth_chainId") == "0x7a69"
    tx_hash = ok(chain, "eth_sendTransaction", {"from": address_of(chain, 0),
                                               "to": address_of(chain, 1), "value": "0x1"})
    assert ok(chain, "eth_getTransactionByHash", tx_hash)["chainId"] == "0x7a69"
    signed = chain.accounts[1].local_account.sign_transaction({
        "chainId": 1337, "nonce": 0, "to": address_of(chain, 2), "value": 1, "gas": 21000,
        "maxFeePerGas": 10**10, "maxPriorityFeePerGas": 1})
    code, message = error(chain, "eth_sendRawTransaction", "0x" + signed.raw_transaction.hex())
    assert code == -32000 and "chain id" in message
    assert error(chain, "anvil_setChainId", "0x0")[0] == -32602


def test_reset_goes_back_to_genesis(chain: DevChain) -> None:
    genesis = ok(chain, "eth_getBlockByNumber", "0x0", False)["hash"]
    ok(chain, "anvil_mine", "0x3")
    snapshot = ok(chain, "evm_snapshot")
    ok(chain, "eth_sendTransaction", {"from": address_of(chain, 0), "to": address_of(chain, 1),
                                      "value": "0x1"})
    assert ok(chain, "hardhat_reset") is None
    assert ok(chain, "eth_blockNumber") == "0x0"
    assert ok(chain, "eth_getBlockByNumber", "latest", False)["hash"] == genesis
    assert ok(chain, "eth_getTransactionCount", address_of(chain, 0), "latest") == "0x0"
    assert ok(chain, "evm_revert", snapshot) is False
    assert ok(chain, "anvil_reset", {}) is None
    code, message = error(chain, "anvil_reset", {"forking": {"jsonRpcUrl": "http://127.0.0.1:1"}})
    assert code == -32602 and "forking" in message


def test_mine_with_count_interval_and_options(chain: DevChain) -> None:
    ok(chain, "anvil_mine", "0x3", "0x64")
    times = [int(ok(chain, "eth_getBlockByNumber", hex(n), False)["timestamp"], 16)
             for n in range(4)]
    assert times == [0, 100, 200, 300]
    assert ok(chain, "evm_mine", {"timestamp": 1000, "blocks": 2}) == "0x0"
    head = ok(chain, "eth_getBlockByNumber", "latest", False)
    assert head["number"] == "0x5"
    assert int(ok(chain, "eth_getBlockByNumber", "0x4", False)["timestamp"], 16) == 1000
    assert error(chain, "evm_mine", {"blocks": 1, "when": 3})[0] == -32602
    assert error(chain, "anvil_mine", "0x" + "f" * 8)[0] == -32602


def test_node_info_and_metadata_in_anvil_shapes(chain: DevChain) -> None:
    ok(chain, "evm_mine")
    snapshot = ok(chain, "evm_snapshot")
    info = ok(chain, "anvil_nodeInfo")
    head = ok(chain, "eth_getBlockByNumber", "latest", False)
    assert info["currentBlockNumber"] == head["number"] == "0x1"
    assert info["currentBlockHash"] == head["hash"]
    assert info["currentBlockTimestamp"] == int(head["timestamp"], 16)
    assert info["hardFork"] == chain.next_fork().capitalize()
    assert info["environment"]["chainId"] == 1337
    assert set(info["environment"]) == {"baseFee", "chainId", "gasLimit", "gasPrice"}
    assert info["forkConfig"] == {"forkUrl": None, "forkBlockNumber": None,
                                  "forkRetryBackoff": None}
    metadata = ok(chain, "anvil_metadata")
    assert metadata == ok(chain, "hardhat_metadata")
    assert metadata["latestBlockNumber"] == 1 and metadata["latestBlockHash"] == head["hash"]
    assert metadata["snapshots"] == {str(int(snapshot, 16)): [1, head["hash"]]}
    assert metadata["clientVersion"].startswith("ethread/") and metadata["forkedNetwork"] is None
