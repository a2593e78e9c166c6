"""What the tests of the frames' array walks share: a table read by its walk, by the bulk path
with the walk and item by item, all the same."""

from __future__ import annotations

from typing import Any

from ethread.backends.history import RawBlock
from ethread.frames.block_arrays import Batch
from ethread.frames.bulk import tables_of_records
from ethread.frames.logs_arrays import logs_table
from ethread.frames.receipts_arrays import receipts_table
from ethread.frames.transactions_arrays import transactions_table

WALKS = {
    "logs": lambda records, config: logs_table(Batch(records)),
    "transactions": lambda records, config: transactions_table(Batch(records)),
    "receipts": lambda records, config: receipts_table(Batch(records), config),
}
"""Each walked table's walk of one batch."""


def read(name: str, records: list[RawBlock], config: Any, arrays: bool) -> Any:
    """Table ``name`` of ``records`` from the bulk path, with its array walk or item by item."""
    return tables_of_records(records, [name], config, arrays=arrays)[name]


def same_as_plain(name: str, records: list[RawBlock], config: Any, walked: bool = True) -> Any:
    """Table ``name`` of ``records`` read with the walk and item by item, the same (schema and
    rows); ``walked``: the walk read the batch itself, not handing it to the item-by-item path
    (which it does for shapes it does not take)."""
    table = read(name, records, config, True)
    plain = read(name, records, config, False)
    assert table.schema == plain.schema
    assert table.equals(plain)
    if walked and plain.num_rows:
        alone = WALKS[name](records, config)
        assert alone is not None and alone.equals(plain), f"the {name} walk left its batch"
    return table
