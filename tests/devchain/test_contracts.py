"""devchain/contracts.py: the assembler's bytes against the opcode numbers of the Yellow Paper
(written out here, not read from py-evm's table the module uses), its widths, labels and
refusals; and each hand-assembled contract run by py-evm on a dev chain: the deployer leaves
the runtime as the code, the log emitter emits the topics and data asked, the reverter reverts
with the ABI encodings eth-abi decodes, the storage contract stores and loads, the environment
echo returns the block's and the call's fields."""

from __future__ import annotations

from typing import Any

import eth_abi
import pytest
from eth_hash.auto import keccak

import ethread
from ethread.devchain import DevChain
from ethread.devchain.contracts import (
    BARE_REVERT_CALL,
    ENV_ECHO,
    ENV_FIELDS,
    ERROR_CALL,
    ERROR_SELECTOR,
    LOG_EMITTER,
    PANIC_CALL,
    PANIC_SELECTOR,
    REVERTER,
    STORAGE,
    USER_ERROR,
    AssemblyError,
    assemble,
    env_echo_code,
    error_data,
    initcode,
    log_calldata,
    panic_data,
    store_bytes,
    store_calldata,
)
from tests.support.contracts import decode_env, load_calldata

# the assembler

YELLOW_PAPER = {"STOP": 0x00, "ADD": 0x01, "LT": 0x10, "EQ": 0x14, "ISZERO": 0x15, "BYTE": 0x1A,
                "KECCAK256": 0x20, "CALLDATALOAD": 0x35, "CALLDATASIZE": 0x36, "CODECOPY": 0x39,
                "BLOCKHASH": 0x40, "NUMBER": 0x43, "CHAINID": 0x46, "BASEFEE": 0x48,
                "MLOAD": 0x51, "MSTORE": 0x52, "SLOAD": 0x54, "SSTORE": 0x55, "JUMP": 0x56,
                "JUMPI": 0x57, "JUMPDEST": 0x5B, "DUP1": 0x80, "DUP2": 0x81, "LOG0": 0xA0,
                "LOG4": 0xA4, "RETURN": 0xF3, "REVERT": 0xFD, "INVALID": 0xFE}


@pytest.mark.parametrize(("name", "value"), sorted(YELLOW_PAPER.items()))
def test_an_opcode_assembles_to_its_number(name: str, value: int) -> None:
    assert assemble(name) == bytes([value])


@pytest.mark.parametrize(("value", "code"), [
    (0, "6000"),  # PUSH1 0: never PUSH0, which pre-Shanghai forks lack
    (1, "6001"), (0xFF, "60ff"), (0x100, "610100"), (0xFFFF, "61ffff"), (0x10000, "62010000"),
    (2**256 - 1, "7f" + "ff" * 32),
])
def test_an_int_is_pushed_with_the_narrowest_push(value: int, code: str) -> None:
    assert assemble(value).hex() == code


@pytest.mark.parametrize(("data", "code"), [
    (b"\x00", "6000"), (b"\x00\x00\x00\x01", "6300000001"), (b"\xaa" * 32, "7f" + "aa" * 32),
])
def test_bytes_are_pushed_at_their_own_width(data: bytes, code: str) -> None:
    assert assemble(data).hex() == code


def test_labels_may_be_used_before_they_are_defined_and_lists_splice() -> None:
    code = assemble("@end", "JUMP", ["ADD", ("ADD",)], "end:", "STOP")
    # PUSH2 0x0006, JUMP, ADD, ADD, JUMPDEST (at offset 6), STOP
    assert code.hex() == "610006" + "56" + "01" + "01" + "5b" + "00"
    assert assemble("start:", "@start", "JUMP").hex() == "5b" + "610000" + "56"


@pytest.mark.parametrize(("program", "message"), [
    (["PUSH_IT"], "unknown opcode 'PUSH_IT'"),
    (["a:", "a:"], "label 'a' defined twice"),
    (["@nowhere", "JUMP"], "undefined label 'nowhere'"),
    ([b""], "cannot push 0 bytes"),
    ([b"\x01" * 33], "cannot push 33 bytes"),
    ([-1], "cannot push -1"),
    ([2**256], f"cannot push {2**256}"),
])
def test_what_cannot_be_assembled(program: list[Any], message: str) -> None:
    with pytest.raises(AssemblyError) as caught:
        assemble(*program)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_store_bytes_writes_whole_words_the_last_zero_padded() -> None:
    data = bytes(range(40))
    assert store_bytes(64, data) == [data[:32], 64, "MSTORE", data[32:].ljust(32, b"\x00"), 96, "MSTORE"]
    assert store_bytes(0, b"") == []


# the encodings the reverter uses, against eth-abi and the well-known selectors


def test_panic_and_error_data_are_solidity_abi_encodings() -> None:
    assert PANIC_SELECTOR.hex() == "4e487b71" and ERROR_SELECTOR.hex() == "08c379a0"
    for code in (0, 1, 0x11, 2**256 - 1):
        assert panic_data(code) == PANIC_SELECTOR + eth_abi.encode(["uint256"], [code])
    for message in ("", USER_ERROR, "x" * 32, "é" * 40):
        encoded = error_data(message)
        assert encoded == ERROR_SELECTOR + eth_abi.encode(["string"], [message])
        assert eth_abi.decode(["string"], encoded[4:]) == (message,)


def test_calldata_builders() -> None:
    topics = [keccak(b"a"), keccak(b"b")]
    assert log_calldata(topics, b"data") == b"\x02" + topics[0] + topics[1] + b"data"
    assert log_calldata([]) == b"\x00"
    for bad in ([b"\x00" * 31], [b"\x00" * 32] * 5):
        with pytest.raises(ValueError, match=r"^a log has at most four topics of 32 bytes each$"):
            log_calldata(bad)
    assert store_calldata({1: 2}) == eth_abi.encode(["uint256", "uint256"], [1, 2])
    assert load_calldata(7) == eth_abi.encode(["uint256"], [7])
    with pytest.raises(ValueError, match=r"^at least one slot is needed"):
        store_calldata({})


def test_decode_env_reads_one_word_per_field() -> None:
    output = eth_abi.encode(["uint256"] * 3, [1, 2, 3])
    assert decode_env(output, ("A", "B", "C")) == {"A": 1, "B": 2, "C": 3}
    with pytest.raises(ValueError, match=r"^expected 64 bytes, got 96$"):
        decode_env(output, ("A", "B"))


# the contracts, run by py-evm on a dev chain


@pytest.fixture(scope="module")
def deployed() -> tuple[DevChain, dict[str, bytes]]:
    chain = DevChain(ethread.MemoryBackend(), accounts=2)
    deployer = chain.accounts[0]
    names = {"log": LOG_EMITTER, "revert": REVERTER, "storage": STORAGE, "env": ENV_ECHO}
    addresses = {name: chain.deploy_runtime(deployer, code) for name, code in names.items()}
    chain.mine()
    return chain, addresses


def test_initcode_deploys_its_runtime_unchanged(deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, addresses = deployed
    for name, code in {"log": LOG_EMITTER, "revert": REVERTER, "storage": STORAGE,
                       "env": ENV_ECHO}.items():
        assert chain.code(addresses[name]) == code
    assert initcode(b"").endswith(b"\xf3")  # an empty runtime: the prefix alone, ending in RETURN


@pytest.mark.parametrize("count", range(5))
def test_the_log_emitter_emits_what_its_calldata_asks(
        deployed: tuple[DevChain, dict[str, bytes]], count: int) -> None:
    chain, addresses = deployed
    topics = [keccak(bytes([count, i])) for i in range(count)]
    data = b"payload-%d" % count
    tx_hash = chain.send(chain.accounts[1], addresses["log"], data=log_calldata(topics, data))
    chain.mine()
    receipt = chain.receipt(tx_hash)
    assert receipt is not None and receipt.status == 1
    (log,) = receipt.logs
    assert (log.address, list(log.topics), log.data) == (addresses["log"], topics, data)


def test_the_log_emitter_takes_plain_transfers_and_refuses_five_topics(
        deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, addresses = deployed
    plain = chain.call(addresses["log"], b"", value=0)
    assert plain.success and plain.output == b""
    five = chain.call(addresses["log"], b"\x05" + b"\x00" * 32 * 5)
    assert not five.success  # INVALID


@pytest.mark.parametrize(("calldata", "output"), [
    (PANIC_CALL, panic_data(1)), (b"", panic_data(1)), (ERROR_CALL, error_data(USER_ERROR)),
    (BARE_REVERT_CALL, b""),
])
def test_the_reverter_reverts_as_solidity_does(deployed: tuple[DevChain, dict[str, bytes]],
                                               calldata: bytes, output: bytes) -> None:
    chain, addresses = deployed
    outcome = chain.call(addresses["revert"], calldata)
    assert not outcome.success and outcome.output == output


def test_the_reverter_succeeds_on_any_other_first_byte(
        deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, addresses = deployed
    outcome = chain.call(addresses["revert"], b"\x03")
    assert outcome.success and outcome.output == b""


def test_the_storage_contract_stores_and_loads(deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, addresses = deployed
    slots = {1: 5, 2**256 - 1: 7, 3: 2**255}
    chain.send(chain.accounts[1], addresses["storage"], data=store_calldata(slots))
    chain.mine()
    for slot, value in slots.items():
        assert chain.storage(addresses["storage"], slot) == value
        loaded = chain.call(addresses["storage"], load_calldata(slot))
        assert loaded.success and eth_abi.decode(["uint256"], loaded.output) == (value,)
    assert eth_abi.decode(["uint256"], chain.call(addresses["storage"], load_calldata(9)).output) == (0,)


def test_the_environment_echo_returns_the_blocks_and_the_calls_fields(
        deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, addresses = deployed
    caller = chain.accounts[1].address
    outcome = chain.call(addresses["env"], sender=caller, value=0)
    assert outcome.success
    env = decode_env(outcome.output)
    assert list(env) == list(ENV_FIELDS)
    head = chain.head
    assert env["CHAINID"] == chain.chain_id
    assert env["CALLER"] == env["ORIGIN"] == int.from_bytes(caller, "big")
    assert env["CALLVALUE"] == 0 and env["SELFBALANCE"] == chain.balance(addresses["env"])
    assert env["PARENTHASH"] == int.from_bytes(chain.block(env["NUMBER"] - 1).hash, "big")
    assert env["NUMBER"] in (head.number, head.number + 1)


def test_an_echo_of_chosen_fields(deployed: tuple[DevChain, dict[str, bytes]]) -> None:
    chain, _ = deployed
    fields = ("CHAINID", "NUMBER")
    code = env_echo_code(fields)
    assert code == assemble(["CHAINID", 0, "MSTORE"], ["NUMBER", 32, "MSTORE"], 64, 0, "RETURN")
    address = chain.deploy_runtime(chain.accounts[0], code)
    chain.mine()
    assert decode_env(chain.call(address).output, fields)["CHAINID"] == chain.chain_id
