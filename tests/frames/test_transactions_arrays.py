"""The transactions table read with numpy over batches of blocks
(:mod:`ethread.frames.transactions_arrays`) is the plain bulk path's table, on every store (every
transaction type: legacy before and after EIP-155, access lists, fee caps, blobs, set-code)
and on dense history; a batch the walk does not take is read the plain way (the same rows),
and a damaged one fails as the plain path fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ethread.backends.history import RawBlock
from ethread.rlpcodec.items import (
    count_items,
    decode_nested,
    encode_nested,
    item_spans,
    payload_span,
)
from tests.support import frames_walks as walks

pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("source", ["lmdb", "era1", "ere"])
def test_the_transactions_of_every_store_equal_the_plain_path(
        compat: dict[str, Any], source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    records, config = walks.held(compat[source], receipts=False)
    table = walks.same_as_plain("transactions", records, config)
    kinds = set(table.column("type").to_pylist())
    assert kinds >= ({0, 1, 2} if source == "era1" else {0, 1, 2, 3, 4}), kinds
    walks.same_in_small_batches("transactions", records, config, table, monkeypatch, 4)


def test_dense_history_transactions_equal_the_plain_path(tmp_path: Path) -> None:
    table = walks.dense_same_as_plain("transactions", tmp_path)
    assert table.num_rows == 360


def _with_legacy_transaction(records: list[RawBlock], change: Any) -> list[RawBlock]:
    """``records`` with the first legacy transaction changed by ``change`` (its fields, a list,
    edited in place)."""
    for index, raw in enumerate(records):
        body = decode_nested(raw.body_rlp)
        assert isinstance(body, list)
        for tx in body[0]:  # type: ignore[union-attr]
            if isinstance(tx, list):
                change(tx)
                changed = [*records]
                changed[index] = raw._replace(body_rlp=encode_nested(body))
                return changed
    raise AssertionError("no legacy transaction")


def test_a_batch_the_walk_does_not_take_is_read_the_plain_way(compat: dict[str, Any]) -> None:
    """A nonce of nine bytes (past uint64), a value past decimal128, a signature's r of 33
    bytes: the plain path reads them (a wide or hex column), and so the table is its own."""
    records, config = walks.held(compat["lmdb"], receipts=False)

    def long_nonce(tx: list[Any]) -> None:
        tx[0] = b"\x01" * 9

    def huge_value(tx: list[Any]) -> None:
        tx[4] = b"\xff" * 17

    def long_r(tx: list[Any]) -> None:
        tx[7] = b"\x01" * 33

    for change in (long_nonce, huge_value, long_r):
        changed = _with_legacy_transaction(records, change)
        table = walks.same_as_plain("transactions", changed, config, walked=False)
        assert table.num_rows == walks.read("transactions", records, config, False).num_rows


def test_a_damaged_batch_fails_as_the_plain_path_fails(compat: dict[str, Any]) -> None:
    """A damaged uncle header (which the transactions table does not read) fails the batch, as
    decoding the body whole does."""
    records, config = walks.held(compat["lmdb"], receipts=False)
    index, raw = next((index, raw) for index, raw in enumerate(records)
                      if count_items(raw.body_rlp, *payload_span(
                          raw.body_rlp, item_spans(raw.body_rlp, *payload_span(raw.body_rlp))[1][0])))
    parts = item_spans(raw.body_rlp, *payload_span(raw.body_rlp))
    first_uncle, _ = payload_span(raw.body_rlp, parts[1][0])
    body = bytearray(raw.body_rlp)
    assert body[first_uncle] >= 0xF8  # a header: a long list, its size's last byte changed
    size_end = first_uncle + body[first_uncle] - 0xF7
    body[size_end] += 1 if body[size_end] < 0xFF else -1
    damaged = [*records]
    damaged[index] = raw._replace(body_rlp=bytes(body))
    message = walks.fails_alike("transactions", damaged, config)
    assert message.startswith(f"block {raw.number}:")
