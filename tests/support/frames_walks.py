"""What the tests of the frames' array walks share: a table read by its walk, by the bulk path
with the walk and item by item, all the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchlib.synthetic_history import dense_history

from ethread.backends.era import EraBackend
from ethread.backends.history import RawBlock
from ethread.backends.lmdb import LMDBBackend
from ethread.frames import block_arrays
from ethread.frames.block_arrays import Batch
from ethread.frames.bulk import WALKED, tables_of_records
from ethread.rlpcodec.items import DecodeError


def read(name: str, records: list[RawBlock], config: Any, arrays: bool) -> Any:
    """Table ``name`` of ``records`` from the bulk path, with its array walk or item by item."""
    return tables_of_records(records, [name], config, arrays=arrays)[name]


def held(backend: Any, receipts: bool = True) -> tuple[list[RawBlock], Any]:
    """Every block ``backend`` holds, as records (with their receipts, unless ``receipts`` is
    false), and its chain config."""
    return (list(backend.raw_blocks(0, backend.pointer("latest") + 1, receipts=receipts)),
            backend.chain_config())


def same_in_small_batches(name: str, records: list[RawBlock], config: Any, table: Any,
                          monkeypatch: pytest.MonkeyPatch, blocks: int) -> None:
    """Table ``name`` of ``records`` read with the walk over batches of ``blocks`` blocks (many
    batches, concatenated in order) is ``table``."""
    monkeypatch.setattr(block_arrays, "BATCH_BLOCKS", blocks)
    assert read(name, records, config, True).equals(table)


def same_as_plain(name: str, records: list[RawBlock], config: Any, walked: bool = True) -> Any:
    """Table ``name`` of ``records`` read with the walk and item by item, the same (schema and
    rows); ``walked``: the walk read the batch itself, not handing it to the item-by-item path
    (which it does for shapes it does not take)."""
    table = read(name, records, config, True)
    plain = read(name, records, config, False)
    assert table.schema == plain.schema
    assert table.equals(plain)
    if walked and plain.num_rows:
        alone = WALKED[name](Batch(records), config)  # the walk of one batch, alone
        assert alone is not None and alone.equals(plain), f"the {name} walk left its batch"
    return table


def fails_alike(name: str, damaged: list[RawBlock], config: Any) -> str:
    """Table ``name`` of the ``damaged`` records fails the same way with the walk as item by
    item: the same DecodeError, word for word; its message."""
    with pytest.raises(DecodeError) as plain:
        read(name, damaged, config, False)
    with pytest.raises(DecodeError) as walked:
        read(name, damaged, config, True)
    assert str(walked.value) == str(plain.value)
    return str(plain.value)


def dense_same_as_plain(name: str, folder: Path) -> Any:
    """Table ``name`` of a small dense history (every transaction type, logs of every width)
    made in ``folder``, the same read with the walk and item by item from LMDB, Era1 and ere;
    the table."""
    stores = dense_history(folder, 6, transactions=60, recover=True)
    receipts = name != "transactions"
    with LMDBBackend(stores.lmdb, create=False) as lmdb:
        config = lmdb.chain_config()
        table = same_as_plain(name, list(lmdb.raw_blocks(0, 7, receipts=receipts)), config)
    for archive in (stores.era1, stores.ere):
        with EraBackend(archive, config=config) as era:
            records = list(era.raw_blocks(0, 7, receipts=receipts))
            assert same_as_plain(name, records, config).equals(table)
    return table
