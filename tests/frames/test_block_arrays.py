"""frames/block_arrays.py: the array walk of a batch of blocks' records, checked item by item
against pyrlp reading the same records: header fields and hashes, where each transaction and
each receipt field starts (consensus receipts from an LMDB store, ``ere``'s slim receipts
from an ``ere`` archive) in the rpc-compat chain, which holds every transaction type; the
shapes the walk refuses (:class:`Irregular`); batching; and a batch's walks made once."""

from __future__ import annotations

from typing import Any

import pytest
import rlp
from eth_hash.auto import keccak
from rlp.codec import consume_item

from ethread.backends.era import EraBackend
from ethread.backends.history import RawBlock
from ethread.backends.memory import MemoryBackend
from ethread.era1.ere_export import export_ere
from ethread.frames import block_arrays
from ethread.frames.block_arrays import Batch, batches, block_heads, receipts, transactions
from ethread.frames.rlp_arrays import Irregular
from tests.support.storage_backends import lmdb_from


@pytest.fixture(scope="module")
def stores(rpc_compat_memory: MemoryBackend, tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, list[RawBlock]]:
    """Every block of the rpc-compat chain as an LMDB store and an ere archive hold it."""
    base = tmp_path_factory.mktemp("block-arrays")
    lmdb = lmdb_from(rpc_compat_memory, base / "lmdb")
    export_ere(rpc_compat_memory, base / "ere", network="devnet")
    ere = EraBackend(base / "ere", config=rpc_compat_memory.chain_config())
    try:
        return {"lmdb": list(lmdb.raw_blocks(0, 46)), "ere": list(ere.raw_blocks(0, 46))}
    finally:
        lmdb.close()
        ere.close()


def _uint(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


@pytest.mark.parametrize("store", ["lmdb", "ere"])
def test_block_heads_are_the_headers_fields(stores: dict[str, list[RawBlock]], store: str) -> None:
    raws = stores[store]
    heads = block_heads(raws)
    assert len(heads.numbers) == len(raws) == 46
    for i, raw in enumerate(raws):
        header = rlp.decode(raw.header_rlp)
        assert int(heads.numbers[i]) == _uint(header[8]) == raw.number == i
        assert int(heads.times[i]) == _uint(header[11])
        assert bytes(heads.hashes[i]) == keccak(raw.header_rlp)
        assert int(heads.base_fees[i]) == (_uint(header[15]) if len(header) > 15 else 0)
        assert heads.excess_blob_gas[i] == (_uint(header[18]) if len(header) > 18 else None)
    assert any(e is not None for e in heads.excess_blob_gas)
    assert str(heads.numbers.dtype) == "uint64" and str(heads.times.dtype) == "int64"


@pytest.mark.parametrize("store", ["lmdb", "ere"])
def test_each_transaction_is_found_where_pyrlp_finds_it(stores: dict[str, list[RawBlock]],
                                                        store: str) -> None:
    raws = stores[store]
    txs = transactions(raws)
    expected: list[tuple[int, int, bytes]] = []  # (block, index, the item's RLP)
    for block, raw in enumerate(raws):
        for index, tx in enumerate(rlp.decode(raw.body_rlp)[0]):
            expected.append((block, index, rlp.encode(tx)))
    assert len(expected) > 10
    assert [int(c) for c in txs.items.counts] == [len(rlp.decode(r.body_rlp)[0]) for r in raws]
    blob = txs.bodies.blob
    for n, (block, index, item) in enumerate(expected):
        at = int(txs.items.position[n])
        assert (int(txs.items.parent[n]), int(txs.items.ordinal[n])) == (block, index)
        assert blob[at:at + len(item)] == item
        assert int(txs.bodies.offsets[block]) <= at < int(txs.bodies.offsets[block + 1])
    senders = b"".join(r.senders for r in raws)
    assert txs.senders.shape == (len(expected), 20) and txs.senders.tobytes() == senders


@pytest.mark.parametrize("store", ["lmdb", "ere"])
def test_each_receipt_field_is_found_where_pyrlp_finds_it(stores: dict[str, list[RawBlock]],
                                                          store: str) -> None:
    raws = stores[store]
    found = receipts(raws, transactions(raws))
    assert found.slim is (store == "ere")
    blob = found.stored.blob
    n = 0
    for raw in raws:
        assert raw.receipts_rlp is not None
        for receipt in rlp.decode(raw.receipts_rlp):
            if isinstance(receipt, bytes):  # a typed consensus receipt: type byte, then its list
                receipt = rlp.decode(receipt[1:])
            assert len(receipt) == 4
            for k in range(4):
                item, _, _ = consume_item(blob, int(found.fields[k][n]))
                assert item == receipt[k]
            n += 1
    assert n == len(found.items.position) > 10


def _damaged(raws: list[RawBlock], at: int, **fields: Any) -> list[RawBlock]:
    return [raw._replace(**fields) if i == at else raw for i, raw in enumerate(raws)]


def _header_with(raw: RawBlock, position: int, value: Any) -> bytes:
    header: list[Any] = rlp.decode(raw.header_rlp)
    header[position] = value
    return rlp.encode(header)


@pytest.mark.parametrize(("damage", "message"), [
    (lambda raw: b"\xf9\xff", "a header that does not decode"),
    (lambda raw: rlp.encode([b"\x01"] * 14), "a header of another shape"),
    (lambda raw: rlp.encode(b"\x01"), "a header of another shape"),
    (lambda raw: _header_with(raw, 12, [b"x"]), "a header with a list among its fields"),
    (lambda raw: _header_with(raw, 8, b"\x01" * 9), "a header number past 64 bits"),
    (lambda raw: _header_with(raw, 11, b"\x01" * 8), "a header number past 64 bits"),
    (lambda raw: _header_with(raw, 15, b"\x01" * 8), "a header number past 64 bits"),
])
def test_headers_the_walk_refuses(stores: dict[str, list[RawBlock]], damage: Any, message: str) -> None:
    raws = stores["lmdb"]
    with pytest.raises(Irregular, match=f"^{message}$"):
        block_heads(_damaged(raws, 40, header_rlp=damage(raws[40])))


def test_a_header_with_64_bit_numbers_is_taken(stores: dict[str, list[RawBlock]]) -> None:
    raw = stores["lmdb"][40]
    header = _header_with(raw, 8, b"\xff" * 8)
    heads = block_heads([raw._replace(header_rlp=header)])
    assert int(heads.numbers[0]) == 2**64 - 1 and bytes(heads.hashes[0]) == keccak(header)


def test_bodies_the_walk_refuses(stores: dict[str, list[RawBlock]]) -> None:
    raws = stores["lmdb"]
    body = rlp.decode(raws[40].body_rlp)
    with pytest.raises(Irregular, match=r"^a body that is not \[transactions, uncles\] or with withdrawals$"):
        transactions(_damaged(raws, 40, body_rlp=rlp.encode([*body, [], []])))
    with pytest.raises(Irregular, match=r"^transactions stored without their senders$"):
        transactions(_damaged(raws, 40, senders=raws[40].senders + b"\x00" * 20))
    with_txs = next(i for i, raw in enumerate(raws) if raw.senders)
    with pytest.raises(Irregular, match=r"^transactions stored without their senders$"):
        transactions(_damaged(raws, with_txs, senders=b""))


def test_receipts_the_walk_refuses(stores: dict[str, list[RawBlock]]) -> None:
    raws = stores["lmdb"]
    txs = transactions(raws)
    with_txs = next(i for i, raw in enumerate(raws) if raw.senders)
    for damaged in (_damaged(raws, 3, receipts_rlp=None), _damaged(raws, 3, slim=True)):
        with pytest.raises(Irregular, match=r"^a block without receipts, or receipts of two encodings$"):
            receipts(damaged, txs)
    more = rlp.encode([*rlp.decode(raws[with_txs].receipts_rlp or b""), [b"", b"", b"", []]])
    with pytest.raises(Irregular, match=r"^as many receipts as transactions$"):
        receipts(_damaged(raws, with_txs, receipts_rlp=more), txs)
    count = len(raws[with_txs].senders) // 20
    legacy: list[Any] = [[b"", b"", b"", []]] * (count - 1)
    typed_empty = rlp.encode([b"\x02", *legacy])
    with pytest.raises(Irregular, match=r"^a typed receipt without its list$"):
        receipts(_damaged(raws, with_txs, receipts_rlp=typed_empty), txs)
    two_lists = rlp.encode([b"\x02" + rlp.encode([b""]) + rlp.encode([b""]), *legacy])
    with pytest.raises(Irregular, match=r"^a typed receipt that is not one list$"):
        receipts(_damaged(raws, with_txs, receipts_rlp=two_lists), txs)


# batching


def _raw(number: int, size: int) -> RawBlock:
    return RawBlock(number, b"", b"\x00" * size, None, b"")


def test_batches_split_by_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(block_arrays, "BATCH_BLOCKS", 3)
    got = [[raw.number for raw in batch] for batch in batches(_raw(n, 1) for n in range(7))]
    assert got == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batches([])) == []


def test_batches_split_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(block_arrays, "BATCH_BYTES", 100)
    sizes = [60, 30, 10, 99, 1, 150, 5]
    got = [[raw.number for raw in batch] for batch in batches(_raw(n, s) for n, s in enumerate(sizes))]
    assert got == [[0, 1, 2], [3, 4], [5], [6]]  # a batch closes once it reaches 100 bytes


def test_a_batch_makes_each_walk_once_and_keeps_no_failure(stores: dict[str, list[RawBlock]]) -> None:
    raws = stores["lmdb"][:5]
    batch = Batch(raws)
    assert batch.made("blocks") is None
    assert batch.blocks is batch.blocks is batch.made("blocks")
    assert batch.transactions is batch.transactions
    assert batch.receipts is batch.receipts
    calls: list[int] = []

    def failing() -> Any:
        calls.append(1)
        raise Irregular("no")

    for _ in range(2):
        with pytest.raises(Irregular):
            batch.once("bad", failing)
    assert calls == [1, 1] and batch.made("bad") is None


