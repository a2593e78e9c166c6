"""A block's receipts read from its stored records without the block and transaction models
(:func:`ethread.rlpcodec.headers.header_facts`, :func:`~ethread.rlpcodec.blocks.body_facts`,
:func:`~ethread.rlpcodec.receipts.receipts_of_records`, the path a store's
:meth:`~ethread.backends.history.CachedHistory.receipts` takes for a block it has not decoded)
make the same receipts as the full decode, byte for byte in JSON, on every kind of transaction
and receipt; and a damaged record is an error (a store's StoreUnreadable), never a traceback
or another answer."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ethread.backends.lmdb import LMDBBackend
from ethread.backends.memory import MemoryBackend
from ethread.codec.serialize import to_json
from ethread.errors import StoreUnreadable
from ethread.forks import ChainConfig
from ethread.models import BlobTransaction, Block, Receipt
from ethread.rlpcodec.blocks import block_from_parts, body_facts, body_rlp
from ethread.rlpcodec.headers import encode_header, header_facts, header_of_record
from ethread.rlpcodec.items import DecodeError, encode_list_of_encoded
from ethread.rlpcodec.receipts import encode_receipts, receipts_from_consensus, receipts_of_records
from tests.support.storage_backends import BUILDERS, each_block, lmdb_from

DAMAGE = (DecodeError, ValueError, IndexError, TypeError)
"""What a record decoder may raise on a damaged record (a store answers StoreUnreadable)."""

Records = tuple[bytes, bytes, bytes, list[bytes], bytes]
"""(block hash, header RLP, body RLP, senders, receipts RLP), as a store keeps a block."""


def records_of(block: Block, receipts: tuple[Receipt, ...]) -> Records:
    return (block.hash, encode_header(block.header), body_rlp(block),
            [t.sender for t in block.transactions], encode_receipts(receipts))


def lean(records: Records, config: ChainConfig | None) -> tuple[Receipt, ...]:
    """The receipts by the path that builds no block."""
    block_hash, header_rlp, body_rlp, senders, receipts_rlp = records
    header = header_facts(header_rlp)
    facts = body_facts(body_rlp, senders, header[2])
    return receipts_of_records(block_hash, header, facts, receipts_rlp, config)


def full(records: Records, config: ChainConfig | None) -> tuple[Receipt, ...]:
    """The receipts by the full decode: the block's models, then its receipts."""
    block_hash, header_rlp, body_rlp, senders, receipts_rlp = records
    block = block_from_parts(header_rlp, body_rlp, senders,
                             header_of_record(header_rlp, block_hash))
    return receipts_from_consensus(block, receipts_rlp, config)


def as_json(receipts: tuple[Receipt, ...]) -> bytes:
    return orjson.dumps(to_json(receipts))


def kinds_of(block: Block) -> Iterator[str]:
    if block.header.base_fee_per_gas is None:
        yield "no base fee"
    for itx in block.transactions:
        tx = itx.transaction
        yield f"type {tx.type}"
        if tx.to is None:
            yield "contract creation"
        if isinstance(tx, BlobTransaction):
            yield "blobs"


def test_every_kind_of_transaction_gives_the_full_decodes_receipts(
        rpc_compat_memory: MemoryBackend) -> None:
    config = rpc_compat_memory.chain_config()
    kinds: set[str] = set()
    for _, block, receipts in each_block(rpc_compat_memory):
        records = records_of(block, receipts)
        made = lean(records, config)
        assert made == receipts == full(records, config)
        assert as_json(made) == as_json(receipts)
        assert [type(r) for r in made] == [Receipt] * len(receipts)
        kinds.update(kinds_of(block))
    assert kinds >= {"type 0", "type 1", "type 2", "type 3", "type 4", "contract creation",
                     "blobs", "no base fee"}, kinds


def test_pre_byzantium_root_receipts_give_the_full_decodes_receipts(
        rpc_compat_memory: MemoryBackend) -> None:
    """Receipts that carry a state root instead of a status (before Byzantium), on blocks of
    every kind of transaction (the rpc-compat chain starts later, so its receipts are given
    roots here)."""
    config = rpc_compat_memory.chain_config()
    rooted = 0
    for _, block, receipts in each_block(rpc_compat_memory):
        with_roots = tuple(
            dataclasses.replace(r, status=None, root=bytes([index + 1]) * 32)
            for index, r in enumerate(receipts))
        records = records_of(block, with_roots)
        made = lean(records, config)
        assert made == full(records, config) == with_roots
        assert as_json(made) == as_json(with_roots)
        assert all(b'"root"' in orjson.dumps(to_json(r)) and r.status is None for r in made)
        rooted += len(made)
    assert rooted > 100


def test_typed_contract_creations_give_the_full_decodes_receipts(
        rpc_compat_memory: MemoryBackend) -> None:
    """Access-list and dynamic-fee transactions made contract creations (the chain's own
    creations are legacy): the contract address comes from the sender and the nonce."""
    import rlp

    config = rpc_compat_memory.chain_config()
    made = 0
    for _, block, receipts in each_block(rpc_compat_memory):
        records = records_of(block, receipts)
        body = rlp.decode(records[2])
        for index, itx in enumerate(block.transactions):
            kind = itx.transaction.type
            if kind not in (1, 2):
                continue
            fields = rlp.decode(body[0][index][1:])
            fields[1] = (index + 7).to_bytes(2, "big")  # a nonce unlike the chain id
            fields[4 if kind == 1 else 5] = b""
            txs = [*body[0][:index], bytes([kind]) + rlp.encode(fields), *body[0][index + 1:]]
            changed = list(records)
            changed[2] = rlp.encode([txs, *body[1:]])
            creation: Records = tuple(changed)  # type: ignore[assignment]
            got = lean(creation, config)
            assert got[index].contract_address is not None and got[index].to is None
            assert as_json(got) == as_json(full(creation, config))
            made += 1
    assert made >= 30


def test_receipts_without_a_fork_schedule_match(rpc_compat_memory: MemoryBackend) -> None:
    """An archive without a schedule (config None) gets the same receipts either way."""
    for _, block, receipts in each_block(rpc_compat_memory):
        records = records_of(block, receipts)
        assert as_json(lean(records, None)) == as_json(full(records, None))


@pytest.mark.parametrize("engine", sorted(BUILDERS))
def test_a_stores_first_read_of_receipts_matches_memory(
        engine: str, rpc_compat_memory: MemoryBackend, tmp_path: Path) -> None:
    """A store's receipts of a block it never read (the lean path), of a block whose header it
    read first, and of a block it decoded first (the full path) are the memory backend's."""
    store = BUILDERS[engine](rpc_compat_memory, tmp_path / "store")
    blocks = list(each_block(rpc_compat_memory))
    try:
        if engine == "era1":
            head = store.pointer("latest")
            assert head is not None and head > 5
            blocks = blocks[:head + 1]
        for order in ("receipts first", "header first", "block first"):
            store._receipts.clear()
            store._blocks.clear()
            store._headers.clear()
            for block_hash, _, receipts in blocks:
                if order == "block first":
                    assert store.block_by_hash(block_hash) is not None
                elif order == "header first":
                    assert store.header_by_hash(block_hash) is not None
                got = store.receipts(block_hash)
                assert got == receipts and as_json(got) == as_json(receipts)
                assert store.receipts(block_hash) is got  # kept
        assert store.receipts(b"\x42" * 32) is None
    finally:
        store.close()


# --------------------------------------------------------------------------------------------
# Damaged records


def _typed_index(block: Block, kind: int) -> int:
    return next(i for i, t in enumerate(block.transactions) if t.transaction.type == kind)


@pytest.fixture(scope="module")
def samples(rpc_compat_memory: MemoryBackend) -> dict[str, tuple[Block, Records]]:
    """Blocks holding a legacy, an access-list, a dynamic-fee, a blob and a set-code
    transaction, with their records."""
    found: dict[str, tuple[Block, Records]] = {}
    logged: set[str] = set()  # kinds whose sample's receipt has logs
    for _, block, receipts in each_block(rpc_compat_memory):
        for kind in {t.transaction.type for t in block.transactions}:
            has_logs = bool(receipts[_typed_index(block, kind)].logs)
            if str(kind) not in found or (has_logs and str(kind) not in logged):
                found[str(kind)] = (block, records_of(block, receipts))
                if has_logs:
                    logged.add(str(kind))
    assert set(found) == {"0", "1", "2", "3", "4"}, found.keys()
    return found


def _rlp_list(items: list[bytes]) -> bytes:
    return encode_list_of_encoded(items)


def _string(data: bytes) -> bytes:
    import rlp

    return bytes(rlp.encode(data))


def damaged_records(samples: dict[str, tuple[Block, Records]]
                    ) -> Iterator[tuple[str, Records]]:
    """(what is damaged, the records) for each damage a decoder must refuse."""
    import rlp

    for kind, (block, records) in samples.items():
        _, header_rlp, body_rlp, senders, receipts_rlp = records

        def put(index: int, value: Any, records: Records = records) -> Records:
            changed = list(records)
            changed[index] = value
            return tuple(changed)  # type: ignore[return-value]

        header = rlp.decode(header_rlp)
        body = rlp.decode(body_rlp)
        receipts = rlp.decode(receipts_rlp)
        at = _typed_index(block, int(kind))
        yield f"{kind}: empty header", put(1, b"")
        yield f"{kind}: header truncated", put(1, header_rlp[:-1])
        yield f"{kind}: header with a trailing byte", put(1, header_rlp + b"\x00")
        yield f"{kind}: header of 14 fields", put(1, rlp.encode(header[:14]))
        yield f"{kind}: header of 22 fields", put(1, rlp.encode([*header, b""] + [b""] * (21 - len(header))))
        yield f"{kind}: header field a list", put(1, rlp.encode([*header[:8], [b"\x01"], *header[9:]]))
        yield f"{kind}: header a string", put(1, rlp.encode(b"header"))
        yield f"{kind}: empty body", put(2, b"")
        yield f"{kind}: body truncated", put(2, body_rlp[:-1])
        yield f"{kind}: body with a trailing byte", put(2, body_rlp + b"\x00")
        yield f"{kind}: body of one part", put(2, rlp.encode(body[:1]))
        yield f"{kind}: body of four parts", put(2, rlp.encode([*body, [], []][:4]))
        yield f"{kind}: body's uncles a string", put(2, rlp.encode([body[0], b"uncles", *body[2:]]))
        yield f"{kind}: transactions a string", put(2, rlp.encode([b"txs", *body[1:]]))
        yield f"{kind}: a sender too many", put(3, [*senders, b"\x01" * 20])
        yield f"{kind}: a sender missing", put(3, senders[:-1])
        txs = list(body[0])
        tx = txs[at]
        if int(kind) == 0:
            damaged_txs = {
                "a field missing": tx[:-1],
                "a field too many": [*tx, b""],
                "the nonce a list": [[b"\x01"], *tx[1:]],
                "the recipient a list": [*tx[:3], [tx[3]], *tx[4:]],
                "the signature's s a list": [*tx[:8], [tx[8]]],
            }
        else:
            fields = rlp.decode(tx[1:])
            access = {1: 7, 2: 8, 3: 8, 4: 8}[int(kind)]
            damaged_txs = {
                "a field missing": tx[:1] + rlp.encode(fields[:-1]),
                "a field too many": tx[:1] + rlp.encode([*fields, b""]),
                "the nonce a list": tx[:1] + rlp.encode([fields[0], [b"\x01"], *fields[2:]]),
                "the signature's s a list": tx[:1] + rlp.encode([*fields[:-1], [fields[-1]]]),
                "the access list a string": tx[:1] + rlp.encode(
                    [*fields[:access], b"list", *fields[access + 1:]]),
                "an access list entry of one item": tx[:1] + rlp.encode(
                    [*fields[:access], [[b"\x01" * 20]], *fields[access + 1:]]),
                "an access list entry's keys a string": tx[:1] + rlp.encode(
                    [*fields[:access], [[b"\x01" * 20, b"keys"]], *fields[access + 1:]]),
                "the envelope its type byte alone": tx[:1],
                "the envelope one byte short": tx[:-1],
                "the envelope a byte too long": tx + b"\x00",
                "an envelope holding a string": tx[:1] + rlp.encode(b"fields"),
                "an unknown type": b"\x09" + tx[1:],
            }
        for name, value in damaged_txs.items():
            yield f"{kind}: tx {name}", put(2, rlp.encode([[*txs[:at], value, *txs[at + 1:]],
                                                          *body[1:]]))
        yield f"{kind}: an empty typed transaction", put(2, rlp.encode([[*txs[:at], b"", *txs[at + 1:]], *body[1:]]))
        receipt = receipts[at]
        inner = rlp.decode(receipt[1:]) if isinstance(receipt, bytes) else receipt

        def with_receipt(fields: Any, receipts: list[Any] = receipts, at: int = at) -> bytes:
            """The receipts with the one at ``at`` made of ``fields`` (typed as it was)."""
            encoded = rlp.encode(fields)
            was = receipts[at]
            one = was[:1] + encoded if isinstance(was, bytes) else rlp.decode(encoded)
            return bytes(rlp.encode([*receipts[:at], one, *receipts[at + 1:]]))

        yield f"{kind}: empty receipts", put(4, b"")
        yield f"{kind}: receipts truncated", put(4, receipts_rlp[:-1])
        yield f"{kind}: receipts with a trailing byte", put(4, receipts_rlp + b"\x00")
        yield f"{kind}: a receipt missing", put(4, rlp.encode(receipts[:-1]))
        yield f"{kind}: a receipt too many", put(4, rlp.encode([*receipts, receipts[-1]]))
        yield f"{kind}: a receipt of 3 fields", put(4, with_receipt(inner[:3]))
        yield f"{kind}: a receipt's gas a list", put(4, with_receipt([inner[0], [inner[1]], *inner[2:]]))
        yield f"{kind}: a receipt's bloom short", put(4, with_receipt([*inner[:2], inner[2][:-1], inner[3]]))
        yield f"{kind}: a receipt's logs a string", put(4, with_receipt([*inner[:3], b"logs"]))
        if inner[3]:
            log = inner[3][0]
            for name, bad in {
                "of 2 fields": log[:2],
                "address a list": [[log[0]], *log[1:]],
                "topics a string": [log[0], b"topics", log[2]],
                "topic of 31 bytes": [log[0], [log[1][0][:31], *log[1][1:]], log[2]],
                "topic a list": [log[0], [[log[1][0]]], log[2]],
                "data a list": [log[0], log[1], [log[2]]],
            }.items():
                yield (f"{kind}: a log {name}",
                       put(4, with_receipt([*inner[:3], [bad, *inner[3][1:]]])))
        if isinstance(receipt, bytes):
            for name, bad in {"empty": b"", "its type byte alone": receipt[:1]}.items():
                yield (f"{kind}: a typed receipt {name}",
                       put(4, rlp.encode([*receipts[:at], bad, *receipts[at + 1:]])))


def test_damaged_records_are_errors_on_both_paths(
        samples: dict[str, tuple[Block, Records]], rpc_compat_memory: MemoryBackend) -> None:
    """Each damage a decoder must see raises one of the errors a store turns into
    StoreUnreadable, on the lean path as on the full one."""
    config = rpc_compat_memory.chain_config()
    cases = 0
    for name, records in damaged_records(samples):
        for path in (lean, full):
            with pytest.raises(DAMAGE):
                path(records, config)
                pytest.fail(f"{path.__name__} read {name}")
        cases += 1
    print(f"{cases} damaged records refused by both paths")
    assert cases > 150


def test_random_damage_is_an_error_or_the_full_decodes_answer(
        samples: dict[str, tuple[Block, Records]], rpc_compat_memory: MemoryBackend) -> None:
    """Bytes flipped, dropped or added at random in the three records: the lean path raises,
    or answers what the full decode answers from the same bytes (a flip inside a value
    changes both alike). It is never a different answer, nor another exception."""
    config = rpc_compat_memory.chain_config()
    rng = random.Random(2024)
    outcomes = {"both refused": 0, "lean refused": 0, "same answer": 0}
    for _, records in samples.values():
        for _ in range(300):
            which = rng.choice((1, 2, 4))
            data = bytearray(records[which])
            spot = rng.randrange(len(data))
            change = rng.choice(("flip", "drop", "add"))
            if change == "flip":
                data[spot] ^= 1 << rng.randrange(8)
            elif change == "drop":
                del data[spot]
            else:
                data.insert(spot, rng.randrange(256))
            changed = list(records)
            changed[which] = bytes(data)
            damaged: Records = tuple(changed)  # type: ignore[assignment]
            try:
                got = lean(damaged, config)
            except DAMAGE:
                try:
                    full(damaged, config)
                except DAMAGE:
                    outcomes["both refused"] += 1
                else:
                    outcomes["lean refused"] += 1
                continue
            assert as_json(got) == as_json(full(damaged, config))
            outcomes["same answer"] += 1
    print(f"random damage: {outcomes}")
    assert outcomes["both refused"] > 500 and outcomes["same answer"] > 0, outcomes


@pytest.fixture
def lmdb_store(rpc_compat_memory: MemoryBackend, tmp_path: Path) -> Iterator[LMDBBackend]:
    store = lmdb_from(rpc_compat_memory, tmp_path / "store")
    yield store
    store.close()


@pytest.mark.parametrize("record", ["H", "B", "R"])
def test_a_damaged_stored_record_answers_store_unreadable(
        record: str, samples: dict[str, tuple[Block, Records]], lmdb_store: LMDBBackend,
        caplog: pytest.LogCaptureFixture) -> None:
    """A store whose header, body or receipts record of a block is damaged answers that
    block's receipts with StoreUnreadable, on its first read (the lean path) and after the
    block was decoded (the full path) alike; other blocks still answer."""
    block, _ = samples["2"]
    key = record.encode() + block.hash
    stored = lmdb_store.store.get(key)
    assert stored is not None
    lmdb_store.store.write({key: stored[:-3]})
    reads: list[Callable[[], object]] = [lambda: lmdb_store.receipts(block.hash)]
    if record == "R":
        reads.append(lambda: (lmdb_store.block_by_hash(block.hash),
                              lmdb_store.receipts(block.hash)))
    for read in reads:
        lmdb_store._receipts.clear()
        lmdb_store._blocks.clear()
        lmdb_store._headers.clear()
        with pytest.raises(StoreUnreadable) as raised:
            read()
        assert "damaged record" in raised.value.message
        assert str(lmdb_store.path) not in raised.value.message
    assert "damaged record" in caplog.text
    other = lmdb_store.canonical_hash(block.header.number - 1)
    assert other is not None and lmdb_store.receipts(other) is not None
