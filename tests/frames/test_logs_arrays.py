"""The logs table read with numpy over batches of blocks (:mod:`ethread.frames.logs_arrays`)
is the plain bulk path's table, alone or beside the other tables, on every store and on dense
history; a batch of another shape is read the plain way (the same rows), and a damaged one
fails as the plain path fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ethread.backends.history import RawBlock
from ethread.frames.bulk import tables_of_records
from ethread.frames.tables import TABLES
from ethread.rlpcodec.items import decode_nested, encode_nested
from tests.support import frames_walks as walks

pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("source", ["lmdb", "era1", "ere"])
def test_the_logs_of_every_store_equal_the_plain_path(compat: dict[str, Any], source: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    records, config = walks.held(compat[source])
    table = walks.same_as_plain("logs", records, config)
    assert table.num_rows > 0
    walks.same_in_small_batches("logs", records, config, table, monkeypatch, 3)
    # with the other tables: each batch's read the plain way beside its logs
    walked = tables_of_records(records, TABLES, config)
    plain = tables_of_records(records, TABLES, config, arrays=False)
    for name in TABLES:
        assert walked[name].equals(plain[name]), name
    assert walks.read("logs", [], config, True).equals(walks.read("logs", [], None, False))


def test_dense_history_logs_equal_the_plain_path(tmp_path: Path) -> None:
    table = walks.dense_same_as_plain("logs", tmp_path)
    assert table.num_rows > 100
    widths = {sum(table.column(f"topic{k}")[row].is_valid for k in range(4))
              for row in range(table.num_rows)}
    assert len(widths) > 1, widths  # logs of more than one number of topics


def _with_receipts(raw: RawBlock, change: Any) -> RawBlock:
    """``raw`` with its receipts decoded, changed by ``change`` (which edits the first log of
    the first legacy receipt that has one) and encoded again."""
    receipts = decode_nested(raw.receipts_rlp or b"")
    assert isinstance(receipts, list)
    for entry in receipts:
        if isinstance(entry, list) and entry[-1]:
            change(entry[-1][0])
            return raw._replace(receipts_rlp=encode_nested(receipts))
    raise AssertionError("no legacy receipt with logs")


def _logged_block(compat: dict[str, Any]) -> tuple[list[RawBlock], int, Any]:
    records, config = walks.held(compat["lmdb"])
    for index, raw in enumerate(records):
        receipts = decode_nested(raw.receipts_rlp or b"")
        assert isinstance(receipts, list)
        if any(isinstance(entry, list) and entry[-1] for entry in receipts):
            return records, index, config
    raise AssertionError("no block with a legacy receipt that logs")


def test_a_batch_of_another_shape_is_read_the_plain_way(compat: dict[str, Any]) -> None:
    """An address that is not 20 bytes, five topics: the walk leaves the batch to the plain
    path, and the rows are that path's."""
    records, index, config = _logged_block(compat)

    def short_address(log: list[Any]) -> None:
        log[0] = log[0][:19]

    def five_topics(log: list[Any]) -> None:
        log[1] = [bytes([n]) * 32 for n in range(5)]

    for change in (short_address, five_topics):
        changed = [*records]
        changed[index] = _with_receipts(records[index], change)
        table = walks.same_as_plain("logs", changed, config, walked=False)
        assert table.num_rows == walks.read("logs", records, config, False).num_rows


def test_a_damaged_batch_fails_as_the_plain_path_fails(compat: dict[str, Any]) -> None:
    records, index, config = _logged_block(compat)
    damaged = [*records]
    receipts = records[index].receipts_rlp or b""
    damaged[index] = records[index]._replace(receipts_rlp=receipts[:-1])
    message = walks.fails_alike("logs", damaged, config)
    assert message.startswith(f"block {records[index].number}:")
