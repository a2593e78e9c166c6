"""The fast RLP item reader (``ethread.rlpcodec.items``) against pyrlp, on the same records.

A store decodes a header, a body or a receipts record on every cache miss of a history read.
These rows decide whether the fast reader is kept: each reads the same dense blocks (mainnet's
mix of transaction types, from ``benchlib.synthetic_history.DenseMaker``) both ways and prints the
CPU time per record, side by side, with the ratio:

- items only: ``decode_nested`` against ``rlp.decode``, for header, body and receipts records;
- a stored block made into a ``Block`` model: the fast reader and the trusted rules (what a
  store does, ``block_from_parts``) against pyrlp's items read by the same trusted rules, and
  against pyrlp's items read by the strict rules (what a chain file gets, ``decode_block``).

Every way is checked to give the same models before anything is timed.

    python benchmarks/bench_rlp.py [--blocks 20] [--transactions 200]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import rlp
from benchlib import report
from benchlib.synthetic_history import DenseMaker, dense_parent
from eth_utils import keccak

from ethread.models import Address, Block
from ethread.rlpcodec.assemble import assemble_block
from ethread.rlpcodec.blocks import block_from_parts, decode_block, decode_withdrawal
from ethread.rlpcodec.fields import TRUSTED
from ethread.rlpcodec.headers import header_of_record
from ethread.rlpcodec.items import decode_nested
from ethread.rlpcodec.transactions import transaction_of_record


def dense_blocks(count: int, transactions: int) -> list[Any]:
    """``count`` chained dense blocks of ``transactions`` transactions each."""
    parent = dense_parent(b"bench_rlp parent")
    maker = DenseMaker(1337, transactions)
    blocks = []
    for number in range(1, count + 1):
        made = maker.make(parent, number)
        blocks.append(made)
        parent = made.block.header
    return blocks


def senders_of(made: Any) -> list[Address]:
    return [t.sender for t in made.block.transactions]


def block_by_pyrlp_trusted(made: Any) -> Block:
    """What :func:`block_from_parts` does, with pyrlp's items instead of the fast reader's."""
    header = header_of_record(made.header_rlp)
    body = rlp.decode(made.body_rlp)
    transactions = []
    for item in body[0]:
        tx = transaction_of_record(item, TRUSTED)
        transactions.append((tx, keccak(rlp.encode(item) if isinstance(item, list) else item)))
    return assemble_block(header, transactions, senders_of(made), (),
                          tuple(decode_withdrawal(w) for w in body[2]), made.block.size)


def block_by_pyrlp_strict(made: Any) -> Block:
    """A chain file's way: pyrlp items, every field checked (:func:`decode_block`)."""
    raw = rlp.encode([rlp.decode(made.header_rlp), *rlp.decode(made.body_rlp)])
    return decode_block(raw, rlp.decode(raw), senders_of(made))


def per_record(fn: Callable[[Any], object], records: Sequence[Any], repeat: int) -> float:
    """The microseconds of CPU a record takes, the least over ``repeat`` passes (CPU time and
    the least of several: on a shared machine, wall time mostly measures the neighbours)."""
    passes = []
    for _ in range(repeat):
        start = time.process_time()
        for record in records:
            fn(record)
        passes.append((time.process_time() - start) / len(records) * 1e6)
    return min(passes)


def row(label: str, fast: float, slow: float, slow_name: str = "pyrlp") -> None:
    print(f"{label:<44} fast {fast:9.1f} us   {slow_name} {slow:9.1f} us   x{slow / fast:4.1f}")


def run_benchmark(args: argparse.Namespace) -> None:
    blocks = dense_blocks(args.blocks, args.transactions)
    for made in blocks:  # the same answers every way, before anything is timed
        fast = block_from_parts(made.header_rlp, made.body_rlp, senders_of(made))
        assert fast == made.block, "fast reader: a different block"
        assert block_by_pyrlp_trusted(made) == fast, "pyrlp + trusted rules: a different block"
        strict = block_by_pyrlp_strict(made)
        assert strict.transactions == fast.transactions and strict.header == fast.header
        for record in (made.header_rlp, made.body_rlp, made.receipts_rlp):
            assert decode_nested(record) == rlp.decode(record)
    kinds = sorted({type(t.transaction).__name__ for m in blocks for t in m.block.transactions})
    print(f"{len(blocks)} blocks of {args.transactions} transactions ({', '.join(kinds)}); "
          f"CPU time per record, the least of {args.repeat} passes")
    for name, records in (("header", [m.header_rlp for m in blocks]),
                          ("body", [m.body_rlp for m in blocks]),
                          ("receipts", [m.receipts_rlp for m in blocks])):
        row(f"items of a {name} record", per_record(decode_nested, records, args.repeat),
            per_record(rlp.decode, records, args.repeat))
    fast_block = per_record(lambda m: block_from_parts(m.header_rlp, m.body_rlp, senders_of(m)),
                            blocks, args.repeat)
    row("stored block -> Block (trusted rules)", fast_block,
        per_record(block_by_pyrlp_trusted, blocks, args.repeat))
    row("stored block -> Block (pyrlp: strict rules)", fast_block,
        per_record(block_by_pyrlp_strict, blocks, args.repeat), "strict")


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--transactions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=9)
    report.run(parser, __file__, run_benchmark)


if __name__ == "__main__":
    main()
