"""The dev chain's signing methods, anvil's remaining controls and state files, and the raw
transaction and account getters every backend answers.

State files are also checked against anvil itself (from tests/js, as the differential run
starts it): a state anvil dumps loads into a dev chain, and one a dev chain dumps loads into
anvil and comes back the same."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data
from eth_utils import to_checksum_address

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.builder import ForkSchedule
from ethread.web3 import EthreadProvider
from tests.support.anvil import Anvil, anvil_binary

TYPED_DATA: dict[str, Any] = {
    "types": {
        "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}],
        "Mail": [{"name": "to", "type": "address"}, {"name": "contents", "type": "string"}],
    },
    "primaryType": "Mail",
    "domain": {"name": "Ether Mail", "chainId": 1337},
    "message": {"to": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "contents": "Hello"},
}


@pytest.fixture
def chain() -> DevChain:
    return DevChain(ethread.MemoryBackend(), accounts=3)


def rpc(chain: DevChain, method: str, *params: Any) -> dict[str, Any]:
    """The whole answer object (result or error) through the in-process provider."""
    return EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type,return-value]


def ok(chain: DevChain, method: str, *params: Any) -> Any:
    answer = rpc(chain, method, *params)
    assert "error" not in answer, answer
    return answer["result"]


def error(chain: DevChain, method: str, *params: Any) -> tuple[int, str]:
    answer = rpc(chain, method, *params)
    assert "error" in answer, answer
    return answer["error"]["code"], answer["error"]["message"]


def address_of(chain: DevChain, index: int) -> str:
    return to_checksum_address(chain.accounts[index].address)


# -- signing ------------------------------------------------------------------------------------


def test_eth_sign_and_personal_sign_recover_to_the_account(chain: DevChain) -> None:
    me = address_of(chain, 1)
    signature = ok(chain, "eth_sign", me, "0x" + b"hello".hex())
    assert len(bytes.fromhex(signature[2:])) == 65 and signature[-2:] in ("1b", "1c")
    assert Account.recover_message(encode_defunct(b"hello"), signature=signature) == me
    assert ok(chain, "personal_sign", "0x" + b"hello".hex(), me) == signature


def test_typed_data_v4_recovers_and_is_taken_as_an_object_or_as_text(chain: DevChain) -> None:
    me = address_of(chain, 0)
    signature = ok(chain, "eth_signTypedData_v4", me, TYPED_DATA)
    assert Account.recover_message(encode_typed_data(full_message=TYPED_DATA),
                                   signature=signature) == me
    assert ok(chain, "eth_signTypedData_v4", me, json.dumps(TYPED_DATA)) == signature
    assert ok(chain, "eth_signTypedData", me, TYPED_DATA) == signature


def test_eth_sign_transaction_signs_what_send_would_send_without_sending(chain: DevChain) -> None:
    me, you = address_of(chain, 0), address_of(chain, 1)
    answer = ok(chain, "eth_signTransaction", {"from": me, "to": you, "value": "0x5"})
    assert Account.recover_transaction(answer["raw"]) == me
    tx = answer["tx"]
    assert (tx["to"], tx["value"], tx["nonce"], tx["type"], tx["gas"]) == (
        you.lower(), "0x5", "0x0", "0x2", "0x5208")
    assert chain.head.number == 0 and chain.pending == ()
    # the signed bytes are a transaction the chain takes as they are
    sent = ok(chain, "eth_sendRawTransaction", answer["raw"])
    assert sent == tx["hash"] and chain.receipt(sent) is not None


@pytest.mark.parametrize(("method", "params"), [
    ("eth_sign", ["0x" + "11" * 20, "0x00"]),
    ("personal_sign", ["0x00", "0x" + "11" * 20]),
    ("eth_signTypedData_v4", ["0x" + "11" * 20, TYPED_DATA]),
    ("eth_signTransaction", [{"from": "0x" + "11" * 20, "to": "0x" + "11" * 20}]),
])
def test_no_key_no_signature(chain: DevChain, method: str, params: list[Any]) -> None:
    assert error(chain, method, *params) == (-32602, "No Signer available")
    chain.impersonate("0x" + "11" * 20)  # anvil sends for impersonated accounts, never signs
    assert error(chain, method, *params) == (-32602, "No Signer available")


@pytest.mark.parametrize(("document", "words"), [
    ("not json", "not valid JSON"),
    ([1, 2], "expected an object"),
    ({**TYPED_DATA, "message": {"to": [], "contents": 1}}, "typed data"),
    ({**TYPED_DATA, "types": {**TYPED_DATA["types"],
                              "Person": [{"name": "wallet", "type": "address"}],
                              "Mail": [{"name": "to", "type": "Person[2]"},
                                       {"name": "contents", "type": "string"}]},
      "message": {"to": [{"wallet": "0x" + "bb" * 20}], "contents": "x"}},
     "Expected 2 items for array type Person[2], got 1 items"),
])
def test_bad_typed_data_is_invalid_params(chain: DevChain, document: Any, words: str) -> None:
    code, message = error(chain, "eth_signTypedData_v4", address_of(chain, 0), document)
    assert code == -32602 and words in message


def test_bad_signing_params_are_invalid_params(chain: DevChain) -> None:
    assert error(chain, "eth_sign", address_of(chain, 0), "hello")[0] == -32602
    assert error(chain, "eth_sign", "0x12", "0x00")[0] == -32602
    assert error(chain, "eth_signTransaction", {"to": address_of(chain, 0)})[0] == -32602
    assert error(chain, "eth_sign", address_of(chain, 0))[0] == -32602


def test_a_plain_backend_does_not_sign(rpc_compat_memory: ethread.MemoryBackend) -> None:
    answer = EthreadProvider(rpc_compat_memory).make_request(
        "eth_sign", ["0x" + "11" * 20, "0x00"])  # type: ignore[arg-type]
    assert answer["error"]["code"] == -32601  # type: ignore[typeddict-item]


# -- read-side: raw transactions and account info on any backend ----------------------------------


def test_raw_transaction_getters_on_an_imported_chain(rpc_compat_memory: ethread.MemoryBackend) -> None:
    provider = EthreadProvider(rpc_compat_memory)

    def call(method: str, *params: Any) -> Any:
        answer = provider.make_request(method, list(params))  # type: ignore[arg-type]
        assert "error" not in answer, answer
        return answer["result"]

    number = next(n for n in range(1, 60)
                  if len(call("eth_getBlockByNumber", hex(n), False)["transactions"]) > 1)
    block = call("eth_getBlockByNumber", hex(number), False)
    for index, tx_hash in enumerate(block["transactions"]):
        raw = call("eth_getRawTransactionByHash", tx_hash)
        assert raw == call("debug_getRawTransaction", tx_hash) and raw != "0x"
        assert call("eth_getRawTransactionByBlockNumberAndIndex", hex(number), hex(index)) == raw
        assert call("eth_getRawTransactionByBlockHashAndIndex", block["hash"], hex(index)) == raw
    # geth answers its empty byte string for what it does not hold
    assert call("eth_getRawTransactionByHash", "0x" + "ab" * 32) == "0x"
    assert call("eth_getRawTransactionByBlockNumberAndIndex", "0xffffff", "0x0") == "0x"
    assert call("eth_getRawTransactionByBlockHashAndIndex", block["hash"], "0x99") == "0x"
    bad = provider.make_request("eth_getRawTransactionByHash", ["0x12"])  # type: ignore[arg-type]
    assert bad["error"]["code"] == -32602  # type: ignore[typeddict-item]


def test_account_info_is_balance_nonce_and_code_of_one_state(chain: DevChain) -> None:
    emitter = chain.deploy_runtime(chain.accounts[0], contracts.LOG_EMITTER)
    chain.mine()
    me = address_of(chain, 0)
    for address in (me, to_checksum_address(emitter), "0x" + "00" * 19 + "42"):
        info = ok(chain, "eth_getAccountInfo", address, "latest")
        assert info == {"balance": ok(chain, "eth_getBalance", address, "latest"),
                        "nonce": ok(chain, "eth_getTransactionCount", address, "latest"),
                        "code": ok(chain, "eth_getCode", address, "latest")}
    assert ok(chain, "eth_getAccountInfo", me, "0x0")["nonce"] == "0x0"
    assert ok(chain, "eth_getAccountInfo", me)["nonce"] == "0x1"
    code, message = error(chain, "eth_getAccountInfo", me, "0x99")
    assert code == -32000 and "not found" in message
    assert error(chain, "eth_getAccountInfo", "0x12")[0] == -32602


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


# -- state files --------------------------------------------------------------------------------


def _busy(chain: DevChain) -> bytes:
    """A chain with a contract, storage, nonces and an edited account; the storage contract."""
    storage = chain.deploy_runtime(chain.accounts[0], contracts.STORAGE)
    chain.mine()
    chain.send(chain.accounts[1], storage, data=contracts.store_calldata({1: 11, 2**200: 7}))
    chain.send(chain.accounts[0], chain.accounts[2].address, value=12345)
    chain.mine()
    chain.set_storage("0x" + "77" * 20, 5, 55)
    return storage


SYSTEM_CONTRACTS = {"0x000f3df6d732807ef1319fb7b8bb8522d0beac02",
                    "0x0000f90827f1c53a10cb7a02335b175320002935"}
"""The beacon roots and block hash history: each block writes them, the one a state is loaded
in too, so their storage is compared apart from the rest."""


def _accounts(document: dict[str, Any]) -> dict[str, Any]:
    """Accounts of a state document in one form (numbers as ints, lower-case keys), the system
    contracts left out."""
    def number(value: Any) -> int:
        return value if isinstance(value, int) else int(value, 16)

    return {address.lower(): (number(fields["nonce"]), number(fields["balance"]),
                              fields["code"].lower(),
                              {int(k, 16): int(v, 16) for k, v in fields["storage"].items()
                               if int(v, 16)})
            for address, fields in document["accounts"].items()
            if address.lower() not in SYSTEM_CONTRACTS}


def test_dump_and_load_state_between_dev_chains(chain: DevChain) -> None:
    storage = _busy(chain)
    dumped = json.loads(chain.dump_state())
    accounts = _accounts(dumped)
    assert accounts["0x" + storage.hex()][3] == {1: 11, 2**200: 7}
    assert accounts["0x" + "77" * 20][3] == {5: 55}
    assert dumped["best_block_number"] == chain.head.number
    assert set(dumped) >= {"block", "accounts", "best_block_number", "blocks", "transactions"}
    hexed = ok(chain, "anvil_dumpState")
    assert json.loads(gzip.decompress(bytes.fromhex(hexed[2:]))) == dumped

    fresh = DevChain(ethread.MemoryBackend(), accounts=3, genesis_timestamp=5)
    assert ok(fresh, "anvil_loadState", hexed) is True
    assert fresh.storage(storage, 2**200) == 7 and fresh.code(storage) == chain.code(storage)
    assert fresh.balance(chain.accounts[2].address) == chain.balance(chain.accounts[2].address)
    assert fresh.nonce(chain.accounts[1].address) == 1
    assert fresh.head.timestamp >= chain.head.timestamp
    assert _accounts(json.loads(fresh.dump_state())) == accounts
    # plain JSON loads too, and a state loaded twice changes nothing more
    fresh.load_state(chain.dump_state())
    assert _accounts(json.loads(fresh.dump_state())) == accounts


@pytest.mark.parametrize(("state", "words"), [
    ("0x", "not valid JSON"),
    ("0x1f8b0000", "not valid gzip"),
    ("0x" + json.dumps([]).encode().hex(), "expected a JSON object"),
    ("0x" + json.dumps({"block": {}}).encode().hex(), "no accounts"),
    ("0x" + json.dumps({"accounts": {"0x12": {}}}).encode().hex(), "is not an address"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"nonce": -1}}}).encode().hex(),
     "out of range"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"code": "60"}}}).encode().hex(),
     "0x-prefixed hex"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"storage": {"0x1": "x"}}}}).encode().hex(),
     "not a number"),
    ("state", "hex string without 0x prefix"),
])
def test_bad_states_are_invalid_params(chain: DevChain, state: str, words: str) -> None:
    code, message = error(chain, "anvil_loadState", state)
    assert code == -32602 and words in message, message
    assert chain.head.number == 0


@pytest.fixture(scope="module")
def anvil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Anvil]:
    peer = Anvil(anvil_binary(), tmp_path_factory.mktemp("anvil-home"))
    try:
        yield peer
    finally:
        peer.process.terminate()
        peer.process.wait(timeout=10)


@pytest.mark.anvil
def test_states_travel_between_anvil_and_the_dev_chain(chain: DevChain, anvil: Anvil) -> None:
    # anvil -> ethread: anvil's own accounts, a contract with storage, a nonce
    anvil("anvil_reset")
    anvil("anvil_setCode", "0x" + "42" * 20, "0x6001600055")
    anvil("anvil_setStorageAt", "0x" + "42" * 20, "0x" + "00" * 31 + "09",
          "0x" + "00" * 31 + "2a")
    anvil("anvil_setNonce", "0x" + "42" * 20, "0x3")
    anvil("eth_sendTransaction", {"from": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                                  "to": "0x" + "43" * 20, "value": "0x7"})
    from_anvil = anvil("anvil_dumpState")
    expected = _accounts(json.loads(gzip.decompress(bytes.fromhex(from_anvil[2:]))))
    assert ok(chain, "anvil_loadState", from_anvil) is True
    got = _accounts(json.loads(chain.dump_state()))
    for address, fields in expected.items():
        assert got[address] == fields, address
    assert chain.storage("0x" + "42" * 20, 9) == 42 and chain.nonce("0x" + "42" * 20) == 3

    # ethread -> anvil -> ethread: the dev chain's accounts survive anvil
    storage = _busy(chain)
    ours = _accounts(json.loads(chain.dump_state()))
    anvil("anvil_reset")
    assert anvil("anvil_loadState", ok(chain, "anvil_dumpState")) is True
    assert int(anvil("eth_getStorageAt", "0x" + storage.hex(), hex(2**200), "latest"), 16) == 7
    back = _accounts(json.loads(gzip.decompress(bytes.fromhex(anvil("anvil_dumpState")[2:]))))
    for address, fields in ours.items():
        assert back[address] == fields, address


# -- ethread serve --state ----------------------------------------------------------------------


def test_serve_state_file_is_loaded_at_start_and_written_at_exit(tmp_path: Path) -> None:
    from tests.support.server_harness import KEY, ServeProcess, post

    state = tmp_path / "state.json"
    receiver = "0x" + "5e" * 20
    with ServeProcess(["--state", str(state), "--api-key", KEY], cwd=tmp_path) as served:
        url = f"http://127.0.0.1:{served.port}/v3/{KEY}"
        status, _, answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": "anvil_setBalance",
                                       "params": [receiver, "0x1234"]})
        assert status == 200 and "error" not in answer, answer
        code, err = served.stop()
    assert code == 0 and f"state written to {state}" in err
    assert json.loads(state.read_text())["accounts"][receiver]["balance"] == "0x1234"

    with ServeProcess(["--state", str(state), "--api-key", KEY], cwd=tmp_path) as served:
        url = f"http://127.0.0.1:{served.port}/v3/{KEY}"
        _, _, answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance",
                                  "params": [receiver, "latest"]})
        assert answer["result"] == "0x1234"


def test_serve_refuses_a_file_that_is_not_a_state(tmp_path: Path) -> None:
    from tests.support.server_harness import ethread_command

    bad = tmp_path / "state.json"
    bad.write_text('{"accounts": {"0x12": {}}}')
    done = subprocess.run([*ethread_command(), "serve", "--state", str(bad), "--port", "0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert f"state file {bad}: state: '0x12' is not an address" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([*ethread_command(), "serve", "--state", str(bad), "--era",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--state applies to a dev chain only" in done.stderr
