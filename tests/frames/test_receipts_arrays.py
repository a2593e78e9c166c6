"""The receipts table read with numpy over batches of blocks
(:mod:`ethread.frames.receipts_arrays`) is the plain bulk path's table, on every store (full
receipts in LMDB and Era1, slim ones in ere, whose blooms are made from the logs), with contract
creations, blob gas and its price, and receipts from before Byzantium (a state root, no
status); a damaged batch fails as the plain path fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ethread.rlpcodec.items import decode_nested, encode_nested
from tests.support import frames_walks as walks

pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("source", ["lmdb", "era1", "ere"])
def test_the_receipts_of_every_store_equal_the_plain_path(
        compat: dict[str, Any], source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    records, config = walks.held(compat[source])
    assert records[-1].slim == (source == "ere")
    table = walks.same_as_plain("receipts", records, config)
    assert table.column("contract_address").null_count < table.num_rows  # creations
    assert max(table.column("log_count").to_pylist()) > 1
    if source != "era1":  # (Era1 holds the chain before the merge: no blobs)
        assert table.column("blob_gas_price").null_count < table.num_rows
    walks.same_in_small_batches("receipts", records, config, table, monkeypatch, 4)


def test_dense_history_receipts_equal_the_plain_path(tmp_path: Path) -> None:
    table = walks.dense_same_as_plain("receipts", tmp_path)
    assert table.num_rows == 360


def test_receipts_with_state_roots_read_as_the_plain_path_reads_them(
        compat: dict[str, Any]) -> None:
    """Before Byzantium a receipt holds the state root after its transaction instead of a
    status: the root column is set and status is null."""
    records, config = walks.held(compat["lmdb"])
    changed = []
    for raw in records:
        receipts = decode_nested(raw.receipts_rlp or b"")
        assert isinstance(receipts, list)
        for entry in receipts:
            if isinstance(entry, list):  # a legacy receipt: its status becomes a root
                entry[0] = bytes(range(32))
        changed.append(raw._replace(receipts_rlp=encode_nested(receipts)))
    table = walks.same_as_plain("receipts", changed, config)
    roots = table.column("root")
    assert 0 < roots.null_count < table.num_rows
    assert table.column("status").null_count == table.num_rows - roots.null_count


def test_a_damaged_batch_fails_as_the_plain_path_fails(compat: dict[str, Any]) -> None:
    records, config = walks.held(compat["lmdb"])
    index = next(i for i, raw in enumerate(records) if len(raw.senders))
    damaged = [*records]
    damaged[index] = records[index]._replace(
        receipts_rlp=(records[index].receipts_rlp or b"")[:-1])
    message = walks.fails_alike("receipts", damaged, config)
    assert message.startswith(f"block {records[index].number}:")
