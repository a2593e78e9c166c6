"""A store's block records read by the fast reader and the trusted rules give the same Block
as pyrlp's items read by the strict rules (a chain file's way), for dense blocks of every
transaction type, and the same as the models the records were written from; and a block's
outline read from its records (no transaction decoded) is what the decoded block shows."""

from __future__ import annotations

import pytest
import rlp
from benchlib.synthetic_history import DenseMaker, dense_parent

from ethread.rlpcodec.blocks import (
    block_from_parts,
    body_facts,
    decode_block,
    outline_from_parts,
    outline_of_block,
)
from ethread.rlpcodec.headers import decode_header, header_facts, header_of_record
from ethread.rlpcodec.items import DecodeError
from ethread.rlpcodec.receipts import receipts_of_records


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_stored_block_reads_the_same_both_ways(seed: int) -> None:
    maker = DenseMaker(1337, 120, seed=seed)
    made = maker.make(dense_parent(b"test parent"), 1)
    kinds = {t.transaction.type for t in made.block.transactions}
    assert kinds == {0, 1, 2, 3, 4} or seed != 1, kinds  # the first block has every type
    senders = [t.sender for t in made.block.transactions]
    fast = block_from_parts(made.header_rlp, made.body_rlp, senders)
    raw = rlp.encode([rlp.decode(made.header_rlp), *rlp.decode(made.body_rlp)])
    strict = decode_block(raw, rlp.decode(raw), senders)
    assert fast == made.block
    assert strict.header == fast.header == decode_header(made.header_rlp)
    assert strict.transactions == fast.transactions
    assert strict.withdrawals == fast.withdrawals
    assert header_of_record(made.header_rlp, made.block.hash) == fast.header
    receipts = receipts_of_records(made.block.hash, header_facts(made.header_rlp),
                                   body_facts(made.body_rlp, senders, 10**9),
                                   made.receipts_rlp, None)
    assert receipts == made.receipts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_outline_read_from_records_is_what_the_block_shows(seed: int) -> None:
    made = DenseMaker(1337, 120, seed=seed).make(dense_parent(b"test parent"), 1)
    senders = [t.sender for t in made.block.transactions]
    block = block_from_parts(made.header_rlp, made.body_rlp, senders)
    outline = outline_from_parts(made.header_rlp, made.body_rlp)
    assert outline == outline_of_block(block)
    assert outline.transaction_hashes == tuple(t.hash for t in made.block.transactions)
    assert len(outline.transaction_hashes) == 120 and outline.size == made.block.size


def test_an_outline_hashes_uncles_and_keeps_withdrawals() -> None:
    maker = DenseMaker(1337, 5, seed=4)
    made = maker.make(dense_parent(b"test parent"), 1)
    uncle = maker.make(dense_parent(b"another parent"), 1)
    transactions, *rest = rlp.decode(made.body_rlp)
    withdrawals = rest[1:] or [[[b"\x01", b"\x02", b"\x03" * 20, b"\x04"]]]
    body = rlp.encode([transactions, [rlp.decode(uncle.header_rlp)], *withdrawals])
    senders = [t.sender for t in made.block.transactions]
    block = block_from_parts(made.header_rlp, body, senders)
    outline = outline_from_parts(made.header_rlp, body)
    assert outline == outline_of_block(block)
    assert outline.uncle_hashes == (uncle.block.hash,)
    assert outline.withdrawals is not None and len(outline.withdrawals) >= 1


@pytest.mark.parametrize("cut", [1, 40, -1])
def test_a_damaged_body_has_no_outline(cut: int) -> None:
    made = DenseMaker(1337, 3, seed=5).make(dense_parent(b"test parent"), 1)
    with pytest.raises((DecodeError, ValueError, IndexError)):
        outline_from_parts(made.header_rlp, made.body_rlp[:cut])
