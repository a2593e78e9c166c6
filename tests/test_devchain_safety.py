"""A dev chain is safe by default: the newest fork, creation bytecode deployed as such (and a
failed creation raising), hex converted once or refused with a TypeError, nothing consumed by
a refused send, and the accounts every tool uses."""

from __future__ import annotations

import pytest
import rlp
from eth_abi.abi import encode

import ethread
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import DevChain, DevChainError, contracts
from ethread.encoding import block_item
from ethread.errors import TransactionRejected

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


@pytest.fixture
def chain() -> DevChain:
    return DevChain(ethread.MemoryBackend(), accounts=3)


def test_the_newest_fork_from_genesis(chain: DevChain) -> None:
    assert chain.next_fork() == "osaka"
    assert chain.config.fork_at(0, 0) == "osaka"


def test_accounts_are_anvils_and_hardhats(chain: DevChain) -> None:
    assert [a.address.hex() for a in chain.accounts] == [
        "f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        "70997970c51812dc3a010c7d01b50e0d17dc79c8",
        "3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    ]
    first = chain.local_accounts[0]
    assert first.address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert first.key.hex().removeprefix("0x") == (
        "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
    assert chain.balance(first.address) == 1_000_000 * 10**18


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


def test_a_failed_creation_raises_and_stores_nothing(chain: DevChain) -> None:
    owner = chain.accounts[0]
    chain.deploy(owner, "0x60006000fd")  # PUSH1 0 PUSH1 0 REVERT
    with pytest.raises(DevChainError, match=r"the deployment of 0x[0-9a-f]{40} .* failed"):
        chain.mine()
    assert chain.head.number == 0 and chain.pending == ()


def test_hex_strings_are_converted_once(chain: DevChain) -> None:
    sender, target = chain.accounts[0], chain.deploy_runtime(chain.accounts[0], STORE)
    chain.mine()
    word = (7).to_bytes(32, "big")
    chain.send(sender, "0x" + target.hex(), data="0x" + word.hex())
    chain.mine()
    assert chain.storage("0x" + target.hex(), 0) == 7
    assert chain.block(2).transactions[0].transaction.data == word  # not the ASCII text


@pytest.mark.parametrize(("to", "data", "error", "message"), [
    ("f39fd6e51aad88f6f4ce6ab8827279cfffb92266", b"", TypeError, "0x-prefixed hex string"),
    (b"\x01" * 19, b"", ValueError, "expected 20 bytes, got 19"),
    (None, "a9059cbb", TypeError, "0x-prefixed hex string"),
    (None, 5, TypeError, "not int"),
    ("0xzz", b"", ValueError, "not hex"),
])
def test_what_cannot_be_bytes_is_refused_with_what_to_pass(
        chain: DevChain, to: object, data: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        chain.send(chain.accounts[0], to, data=data)  # type: ignore[arg-type]
    assert chain.pending == ()


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


def test_blocks_stored_without_a_second_execution_reimport_block_for_block() -> None:
    """A test chain executes each block once (``revalidate=False``, the default); what it
    stores is still exactly what the full import path makes of the same block."""
    chain = DevChain(ethread.MemoryBackend(), accounts=3)
    a, b, c = chain.accounts
    emitter = chain.deploy_runtime(a, contracts.LOG_EMITTER)
    chain.send(b, c.address, value=5, kind="legacy")
    chain.mine()
    chain.send(a, emitter, data=contracts.log_calldata([b"\x01" * 32], b"x"), kind="access-list")
    chain.send(c, a.address, value=1, delegations=[(b, emitter)], kind="set-code")
    chain.mine()
    again = ethread.MemoryBackend()
    replay = ChainImporter(again, parse_genesis(chain.genesis), verify_seals=False)
    for number in range(1, chain.head.number + 1):
        assert replay.import_block(rlp.encode(block_item(
            chain.block(number).header, [t.transaction for t in chain.block(number).transactions],
            chain.block(number).uncles, chain.block(number).withdrawals)))
        original, copy = chain.block(number), again.block_by_hash(chain.block(number).hash)
        assert copy == original
        assert again.receipts(original.hash) == chain.backend.receipts(original.hash)
