"""rpc/pool_reads.py: the reads a dev chain answers from its pool before its backend does,
on a real dev chain with automine off. A pooled transaction is the transaction the chain later
mines with its block fields null (its own hash, sender and nonce, recomputed here with
eth-account); the pending nonce counts the pool; the pending block is the next number, with
the pool's transactions, and no hash, nonce or miner, as geth writes it. Everything else is
left to the chain (NOT_PENDING). eth_getProof on a forked chain is asked of the fork with the
parsed arguments, through a plain double of the chain."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from eth_account import Account
from eth_hash.auto import keccak

import ethread
from ethread.codec.answers import DEFAULT_ANSWERS, GETH_1_16
from ethread.codec.serialize import to_json
from ethread.devchain import DevChain
from ethread.errors import InvalidParams
from ethread.models import BlockHashRef
from ethread.rlpcodec.transactions import encode_transaction
from ethread.rpc.context import Context
from ethread.rpc.pool_reads import (
    NOT_PENDING,
    block_by_number,
    proof,
    transaction_by_hash,
    transaction_count,
)
from ethread.rpc.table import TABLE, call_method


@pytest.fixture
def paused() -> DevChain:
    """A fresh dev chain that keeps what is sent in its pool until told to mine."""
    return DevChain(ethread.MemoryBackend(), accounts=3, automine=False)


def _hex(raw: bytes) -> str:
    return "0x" + raw.hex()


def _refusal(call: Any, *args: Any) -> str:
    with pytest.raises(InvalidParams) as caught:
        call(*args)
    assert caught.value.code == -32602
    return caught.value.message


def test_a_pooled_transaction_is_the_mined_one_without_its_block(paused: DevChain) -> None:
    sender, receiver = paused.accounts[0], paused.accounts[1]
    tx_hash = paused.send(sender, receiver.address, value=12345)
    pooled = paused.pending_transaction(tx_hash)
    assert pooled is not None
    answer = transaction_by_hash(paused, [_hex(tx_hash)], DEFAULT_ANSWERS)
    signed = encode_transaction(pooled.tx)
    assert answer["hash"] == _hex(tx_hash) == _hex(keccak(signed))
    assert answer["from"] == _hex(sender.address) == Account.recover_transaction(signed).lower()
    assert (answer["blockHash"], answer["blockNumber"], answer["blockTimestamp"],
            answer["transactionIndex"]) == (None, None, None, None)
    assert answer["gasPrice"] == answer["maxFeePerGas"]  # a dynamic-fee transaction: its cap
    assert answer["value"] == hex(12345) and answer["nonce"] == "0x0"
    assert "blockTimestamp" not in transaction_by_hash(paused, [_hex(tx_hash)], GETH_1_16)

    paused.mine()
    assert transaction_by_hash(paused, [_hex(tx_hash)], DEFAULT_ANSWERS) is NOT_PENDING
    location = paused.backend.transaction_location(tx_hash)
    assert location is not None
    block = paused.backend.block_by_hash(location[0])
    assert block is not None
    mined = to_json(block.transactions[location[1]])
    block_keys = {"blockHash", "blockNumber", "blockTimestamp", "transactionIndex", "gasPrice"}
    assert {k: v for k, v in answer.items() if k not in block_keys} == {
        k: v for k, v in mined.items() if k not in block_keys}
    assert set(answer) == set(mined)


def test_a_pooled_legacy_transaction_answers_its_own_gas_price(paused: DevChain) -> None:
    sender = paused.accounts[2]
    tx_hash = paused.send(sender, paused.accounts[0].address, value=1, kind="legacy")
    answer = transaction_by_hash(paused, [_hex(tx_hash)], DEFAULT_ANSWERS)
    pooled = paused.pending_transaction(tx_hash)
    assert pooled is not None
    signed = encode_transaction(pooled.tx)
    assert keccak(signed) == tx_hash
    assert Account.recover_transaction(signed).lower() == answer["from"]
    assert answer["gasPrice"] == hex(pooled.tx.gas_price)  # type: ignore[union-attr]
    assert answer["type"] == "0x0" and answer["chainId"] == hex(paused.chain_id)


@pytest.mark.parametrize("params", [[], [_hex(b"\x01" * 32)]])
def test_a_transaction_not_in_the_pool_is_left_to_the_chain(paused: DevChain, params: list[Any]) -> None:
    assert transaction_by_hash(paused, params, DEFAULT_ANSWERS) is NOT_PENDING


def test_a_malformed_hash_is_refused_in_geths_words(paused: DevChain) -> None:
    assert (_refusal(transaction_by_hash, paused, ["0x12"], DEFAULT_ANSWERS)
            == "hex string has length 2, want 64 for common.Hash")


def test_the_pending_nonce_counts_the_pool(paused: DevChain) -> None:
    sender = paused.accounts[0]
    address = _hex(sender.address)
    assert transaction_count(paused, [address, "pending"], DEFAULT_ANSWERS) == "0x0"
    for _ in range(3):
        paused.send(sender, paused.accounts[1].address, value=1)
    assert transaction_count(paused, [address, "pending"], DEFAULT_ANSWERS) == "0x3"
    assert transaction_count(paused, [_hex(paused.accounts[1].address), "pending"],
                             DEFAULT_ANSWERS) == "0x0"
    for params in ([address, "latest"], [address], [address, "0x1"]):
        assert transaction_count(paused, params, DEFAULT_ANSWERS) is NOT_PENDING
    assert (_refusal(transaction_count, paused, ["0x01", "pending"], DEFAULT_ANSWERS)
            == "hex string has length 2, want 40 for common.Address")


def test_the_pending_block_is_the_next_one_without_hash_nonce_or_miner(paused: DevChain) -> None:
    sender = paused.accounts[0]
    hashes = [paused.send(sender, paused.accounts[1].address, value=n + 1) for n in range(2)]
    head = paused.head
    answer = block_by_number(paused, ["pending", False], DEFAULT_ANSWERS)
    assert (answer["hash"], answer["nonce"], answer["miner"]) == (None, None, None)
    assert answer["number"] == hex(head.number + 1)
    assert answer["parentHash"] == _hex(head.hash)
    assert answer["transactions"] == [_hex(h) for h in hashes]
    full = block_by_number(paused, ["pending", True], DEFAULT_ANSWERS)
    assert [tx["hash"] for tx in full["transactions"]] == answer["transactions"]
    assert all(tx["blockNumber"] == answer["number"] for tx in full["transactions"])
    mined = paused.mine()
    assert mined.number == head.number + 1
    assert [t.hash for t in mined.transactions] == hashes


@pytest.mark.parametrize("params", [["latest", False], ["0x0", True], ["pending"],
                                    ["pending", False, 1]])
def test_other_block_reads_are_left_to_the_chain(paused: DevChain, params: list[Any]) -> None:
    assert block_by_number(paused, params, DEFAULT_ANSWERS) is NOT_PENDING


def test_the_pending_blocks_flag_must_be_a_bool(paused: DevChain) -> None:
    assert (_refusal(block_by_number, paused, ["pending", "yes"], DEFAULT_ANSWERS)
            == "json: cannot unmarshal string into Go value of type bool")


def test_drops_answer_as_anvil_and_hardhat_do(paused: DevChain) -> None:
    sender = paused.accounts[0]
    first = paused.send(sender, paused.accounts[1].address, value=1)
    second = paused.send(paused.accounts[1], sender.address, value=1)
    ctx = Context().for_dev_chain(paused, ())

    def drop(method: str, *params: Any) -> Any:
        assert TABLE[method].required == len(params) == len(TABLE[method].params)
        return orjson.loads(call_method(paused.backend, method, list(params), ctx))

    assert drop("anvil_dropTransaction", _hex(first)) == _hex(first)
    assert drop("anvil_dropTransaction", _hex(first)) is None  # no longer there
    assert paused.pending_transaction(first) is None
    assert drop("hardhat_dropTransaction", _hex(first)) is False
    third = paused.send(paused.accounts[2], sender.address, value=1)
    assert drop("hardhat_dropTransaction", _hex(third)) is True
    assert drop("anvil_dropAllTransactions") is None
    assert paused.pending_transaction(second) is None and paused.pending == ()


def test_a_chain_not_forked_answers_its_own_proofs(paused: DevChain) -> None:
    assert proof(paused, [_hex(b"\x01" * 20), [], "latest"], DEFAULT_ANSWERS) is NOT_PENDING


class ForkedDouble:
    """A forked chain as eth_getProof sees it: the forked node's answer, and what was asked."""

    fork_origin = object()

    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.answer = answer
        self.asked: list[tuple[bytes, list[bytes], Any]] = []

    def fork_proof(self, address: bytes, keys: list[bytes], block: Any) -> dict[str, Any] | None:
        self.asked.append((address, list(keys), block))
        return self.answer


def test_a_forked_chain_asks_the_fork_with_the_parsed_arguments() -> None:
    chain = ForkedDouble({"address": "0x" + "01" * 20})
    block_hash = "0x" + "ab" * 32
    answer = proof(chain, [_hex(b"\x01" * 20), ["0x1", "02", "0x" + "ff" * 32],  # type: ignore[arg-type]
                           {"blockHash": block_hash}], DEFAULT_ANSWERS)
    assert answer == {"address": "0x" + "01" * 20}
    assert chain.asked == [(b"\x01" * 20, [b"\x01", b"\x02", b"\xff" * 32],
                            BlockHashRef(hash=b"\xab" * 32, require_canonical=False))]
    proof(chain, [_hex(b"\x01" * 20), []], DEFAULT_ANSWERS)  # type: ignore[arg-type]
    proof(chain, [_hex(b"\x01" * 20), [], None], DEFAULT_ANSWERS)  # type: ignore[arg-type]
    assert [asked[2] for asked in chain.asked[1:]] == ["latest", "latest"]


@pytest.mark.parametrize("params", [
    ["0x01", []],  # a malformed address: the chain's own eth_getProof refuses it
    [_hex(b"\x01" * 20), "0x1"],  # keys not a list
    [_hex(b"\x01" * 20), [1]],  # a key not a string
    [_hex(b"\x01" * 20), ["0x" + "1" * 65]],  # a key too long
    [_hex(b"\x01" * 20), ["0x1"], "newest"],  # a block that does not parse
    [_hex(b"\x01" * 20), ["0x1"] * 1025],  # more keys than geth reads
    [_hex(b"\x01" * 20)],
])
def test_arguments_that_do_not_parse_are_left_to_the_chain(params: list[Any]) -> None:
    chain = ForkedDouble({"never": "asked"})
    assert proof(chain, params, DEFAULT_ANSWERS) is NOT_PENDING  # type: ignore[arg-type]
    assert chain.asked == []


def test_a_proof_the_local_trie_holds_is_left_to_the_chain() -> None:
    chain = ForkedDouble(None)
    assert proof(chain, [_hex(b"\x01" * 20), ["0x1"] * 1024], DEFAULT_ANSWERS) is NOT_PENDING  # type: ignore[arg-type]
    assert len(chain.asked) == 1 and len(chain.asked[0][1]) == 1024


def test_the_rows_name_the_reads_each_kind_of_pool_answers() -> None:
    dev_pool = {name: row.pool for name, row in TABLE.items() if row.pool is not None}
    assert dev_pool == {"eth_getTransactionByHash": transaction_by_hash,
                        "eth_getTransactionCount": transaction_count,
                        "eth_getBlockByNumber": block_by_number, "eth_getProof": proof}
    served = {name for name, row in TABLE.items() if row.served_pool}
    assert served == {"eth_getTransactionByHash", "eth_getTransactionCount"}
