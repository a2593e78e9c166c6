"""Blocks and uncles (``ethread.methods.blocks``) on the rpc-compat chain: by number, tag and hash,
every hash recomputed and linked, uncles by hash and number, an uncle's JSON a bodiless block."""

from __future__ import annotations

import json

import rlp
from eth_utils import keccak

import ethread
from ethread import methods
from ethread.models import BlockHashRef
from ethread.rlpcodec.headers import encode_header, header_fields
from ethread.rlpcodec.transactions import encode_transaction


def test_blocks_by_number_tag_and_hash(rpc_compat_memory: ethread.MemoryBackend) -> None:
    latest = methods.get_block_by_number(rpc_compat_memory, "latest")
    assert latest is not None and latest.number == 45
    for tag in ("pending", "safe", "finalized"):
        assert methods.get_block_by_number(rpc_compat_memory, tag) == latest
    assert methods.get_block_by_number(rpc_compat_memory, "earliest").number == 0  # type: ignore[union-attr]
    assert methods.get_block_by_hash(rpc_compat_memory, latest.hash) == latest
    assert methods.get_block_by_number(rpc_compat_memory, 46) is None
    assert methods.get_block_by_number(rpc_compat_memory, BlockHashRef(hash=latest.hash)) == latest


def test_every_block_hash_recomputes_and_links(rpc_compat_memory: ethread.MemoryBackend) -> None:
    parent = None
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        assert keccak(encode_header(block.header)) == block.hash
        if parent is not None:
            assert block.header.parent_hash == parent.hash
        for itx in block.transactions:
            assert keccak(encode_transaction(itx.transaction)) == itx.hash
            assert methods.get_transaction_by_hash(rpc_compat_memory, itx.hash) == itx
        parent = block


def test_uncles_by_hash_and_number(rpc_compat_memory: ethread.MemoryBackend) -> None:
    found = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        for index, uncle in enumerate(block.uncles):
            by_hash = methods.get_uncle_by_block_hash_and_index(rpc_compat_memory, block.hash, index)
            by_number = methods.get_uncle_by_block_number_and_index(rpc_compat_memory, number, index)
            assert by_hash == by_number
            assert by_hash is not None and by_hash.header == uncle
            assert keccak(encode_header(uncle)) == uncle.hash
            # a bodiless block's size, as pyrlp encodes [header, [], []]
            assert by_hash.size == len(rlp.encode([header_fields(uncle), [], []]))
            assert uncle.number < number
            found += 1
        assert methods.get_uncle_by_block_hash_and_index(rpc_compat_memory, block.hash, len(block.uncles)) is None
    assert found == 19


def test_uncle_json_is_a_bodiless_block(rpc_compat_memory: ethread.MemoryBackend) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_getUncleByBlockNumberAndIndex","params":["0x3","0x0"]}'
    answer = json.loads(ethread.handle(rpc_compat_memory, body))  # type: ignore[arg-type]
    uncle = answer["result"]
    block = methods.get_block_by_number(rpc_compat_memory, 3)
    assert block is not None
    assert uncle["hash"] == "0x" + block.uncles[0].hash.hex()
    assert uncle["transactions"] == [] and uncle["uncles"] == []
    assert "totalDifficulty" not in uncle  # geth no longer answers it, and neither do we
