"""Raw encodings (``ethread.methods.raw``): headers, blocks, receipts and transactions hash to
what the headers commit to, trie roots recomputed from the raw bytes."""

from __future__ import annotations

from typing import Any

import rlp
from eth_utils import keccak
from trie import HexaryTrie

import ethread
from ethread import methods
from ethread.web3 import EthreadProvider
from tests.support.rpc_cases import error, result


def trie_root(items: list[bytes]) -> bytes:
    trie = HexaryTrie({})
    for index, item in enumerate(items):
        trie[rlp.encode(index)] = item
    return bytes(trie.root_hash)


def test_raw_encodings_hash_to_what_the_headers_commit_to(rpc_compat_memory: ethread.MemoryBackend) -> None:
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        header_rlp = bytes.fromhex(result(rpc_compat_memory, "debug_getRawHeader", hex(number))[2:])
        assert keccak(header_rlp) == block.hash
        raw_block = bytes.fromhex(result(rpc_compat_memory, "debug_getRawBlock", "0x" + block.hash.hex())[2:])
        assert len(raw_block) == block.size
        items = rlp.decode(raw_block)
        assert keccak(rlp.encode(items[0])) == block.hash
        assert keccak(rlp.encode(items[2])) == block.header.uncles_hash
        transactions = [t if isinstance(t, bytes) else rlp.encode(t) for t in items[1]]
        assert trie_root(transactions) == block.header.transactions_root
        receipts = [bytes.fromhex(r[2:]) for r in result(rpc_compat_memory, "debug_getRawReceipts", hex(number))]
        assert trie_root(receipts) == block.header.receipts_root
        for itx, encoded in zip(block.transactions, transactions, strict=True):
            raw = result(rpc_compat_memory, "debug_getRawTransaction", "0x" + itx.hash.hex())
            assert keccak(bytes.fromhex(raw[2:])) == itx.hash == keccak(encoded)
    for method in ("debug_getRawHeader", "debug_getRawBlock", "debug_getRawReceipts"):
        assert result(rpc_compat_memory, method, "0x3e8") is None
    missing = "0x" + "01" * 32
    assert error(rpc_compat_memory, "debug_getRawHeader", missing) == \
        (-32000, "header #[" + " ".join(["1"] * 32) + "] not found")
    assert error(rpc_compat_memory, "debug_getRawBlock", missing)[1].startswith("block #[1 1 ")
    assert result(rpc_compat_memory, "debug_getRawReceipts", missing) == []
    assert result(rpc_compat_memory, "debug_getRawTransaction", missing) is None


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
