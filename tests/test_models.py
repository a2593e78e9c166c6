"""Models made by :func:`ethread.models.trusted_maker` (what the store decoders use) are the
same objects the dataclass constructor makes: equal, with the same hash, repr and JSON, and
as immutable; and a store's block and receipt models equal the memory backend's for every
kind of transaction of the conformance chain. A legacy transaction's chain id is derived
from its v."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import orjson
import pytest

import ethread
from ethread import import_chain, methods
from ethread.backends.memory import MemoryBackend
from ethread.codec.serialize import block_json, to_json
from ethread.models import Block, LegacyTransaction, trusted_maker
from ethread.rlpcodec.blocks import block_from_parts, body_rlp
from ethread.rlpcodec.headers import encode_header, header_of_record
from ethread.rlpcodec.receipts import encode_receipts, receipts_from_consensus
from tests.support.paths import conformance_dir
from tests.support.storage_backends import each_block


@pytest.fixture(scope="module")
def memory() -> MemoryBackend:
    compat = conformance_dir() / "rpc-compat"
    backend = MemoryBackend()
    import_chain(backend, compat / "genesis.json", compat / "chain.rlp", verify_seals=False)
    return backend


def _remade(model: Any) -> Any:
    """``model`` made again by its class's trusted maker, nested models included."""
    values = []
    for f in dataclasses.fields(model):
        value = getattr(model, f.name)
        if dataclasses.is_dataclass(value):
            value = _remade(value)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            value = tuple(_remade(v) for v in value)
        values.append(value)
    return trusted_maker(type(model))(*values)


def test_trusted_models_equal_constructed_ones(memory: MemoryBackend) -> None:
    head = memory.pointer("latest")
    assert head is not None and head > 10
    kinds = set()
    for _, block, receipts in each_block(memory):
        for original in (block, *receipts):
            copy = _remade(original)
            assert copy is not original
            assert copy == original and hash(copy) == hash(original)
            assert repr(copy) == repr(original)
        assert orjson.dumps(block_json(_remade(block), True)) == orjson.dumps(block_json(block, True))
        assert orjson.dumps(to_json(tuple(_remade(r) for r in receipts))) == orjson.dumps(
            to_json(receipts))
        kinds.update(type(t.transaction).__name__ for t in block.transactions)
    assert len(kinds) >= 3, kinds  # legacy, typed and more: each trusted path is compared


def test_trusted_models_stay_frozen(memory: MemoryBackend) -> None:
    block_hash = memory.canonical_hash(1)
    assert block_hash is not None
    block = memory.block_by_hash(block_hash)
    assert block is not None
    copy = trusted_maker(Block)(block.header, block.transactions, block.uncles,
                                block.withdrawals, block.size)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.size = 1  # type: ignore[misc]


def test_store_records_decode_to_the_models_import_made(memory: MemoryBackend,
                                                        tmp_path: Path) -> None:
    """The record decoders, straight: every block's header, body and receipts as a store keeps
    them decode to what the memory backend holds (its hash taken from the key, as a store
    does, or computed)."""

    config = memory.chain_config()
    for block_hash, block, receipts in each_block(memory):
        header_rlp = encode_header(block.header)
        assert header_of_record(header_rlp, block_hash) == block.header
        assert header_of_record(header_rlp) == block.header
        decoded = block_from_parts(header_rlp, body_rlp(block),
                                   [t.sender for t in block.transactions])
        assert decoded == block
        assert receipts_from_consensus(
            decoded, encode_receipts(receipts), config) == receipts


def test_legacy_chain_id_is_derived_from_v(rpc_compat_memory: ethread.MemoryBackend) -> None:
    protected = unprotected = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        for itx in block.transactions:
            tx = itx.transaction
            if isinstance(tx, LegacyTransaction):
                if tx.v in (27, 28):
                    assert tx.chain_id is None
                    unprotected += 1
                else:
                    assert tx.chain_id == 3503995874084926
                    protected += 1
    assert unprotected > 0
