"""Check a key-value store (LevelDB or LMDB) end to end: the pass behind ``ethread verify --db``.

Every record is first read once with the engine's checksums verified. Then, block by block
from genesis to the head: the canonical hash, header, parent link; the transactions root,
uncles hash and withdrawals root from the body; the receipts root; each transaction's index
entry; the log record and log index; every answer kept beside the block (``derived``) against
the one derived now. Last, the head's state root is held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import rlp
from eth.constants import BLANK_ROOT_HASH

from ..era1.verify import block_problem
from ..errors import StoreError
from ..models import Receipt
from ..progress import Progress
from ..rlpcodec.items import DecodeError
from .keyvalue import KeyValueBackend, _num
from .logindex import decode_block_logs, log_keys, logs_of_receipts


class VerifyFailed(StoreError):
    """The first inconsistency found, naming the block (or the record) and what is wrong."""


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What ``ethread verify --db`` checked: counts of what it read back."""

    records: int
    blocks: int
    transactions: int
    logs: int
    head: int | None
    without_answers: int = 0
    """Blocks lacking an answer the store keeps beside its blocks (written by an older
    ethread): answered from their records, more slowly, until ``ethread upgrade --db``."""


Derivation = Callable[[Sequence[Receipt]], bytes]
"""How an answer kept beside a block is derived from its receipts."""


def verify_store(backend: KeyValueBackend, progress: Progress | None = None,
                 derived: Mapping[bytes, Derivation] | None = None) -> VerifyReport:
    """Raise :class:`VerifyFailed` (or the store's own error) at the first inconsistency;
    ``derived``: the answers kept beside blocks, by name, each checked where held."""
    store = backend.store
    records = sum(1 for _ in store.items())
    head = backend.pointer("latest")
    if head is None:
        return VerifyReport(records, 0, 0, 0, None)
    transactions = logs = without_answers = 0
    parent: bytes | None = None
    for number in range(head + 1):
        problem, counts = _verify_block(backend, number, parent)
        if problem is None and derived:
            problem, missing = _verify_answers(backend, counts[0], derived)
            without_answers += missing
        if problem is not None:
            raise VerifyFailed(f"block {number}: {problem}")
        parent, tx_count, log_count = counts
        transactions += tx_count
        logs += log_count
        if progress is not None and number % 1024 == 1023:
            progress(number + 1, head + 1)
    for name in ("safe", "finalized"):
        at = backend.pointer(name)  # type: ignore[arg-type]
        if at is not None and not 0 <= at <= head:
            raise VerifyFailed(f"the {name} pointer ({at}) is past the head ({head})")
    last = backend.header_by_hash(parent or b"")
    if last is not None and last.state_root != BLANK_ROOT_HASH \
            and store.get(b"E" + last.state_root) is None:
        raise VerifyFailed(f"block {head}: the state root of the head is not held")
    return VerifyReport(records, head + 1, transactions, logs, head, without_answers)


def _verify_block(backend: KeyValueBackend, number: int, parent: bytes | None,
                  ) -> tuple[str | None, tuple[bytes, int, int]]:
    store = backend.store
    none = (b"", 0, 0)
    block_hash = store.get(b"N" + _num(number))
    if block_hash is None:
        return "no canonical hash", none
    header = backend.header_by_hash(block_hash)
    if header is None:
        return "no header for its canonical hash", none
    if header.hash != block_hash:
        return "the header does not hash to the canonical hash", none
    stored = store.get(b"B" + block_hash)
    raw_receipts = store.get(b"R" + block_hash)
    if stored is None or raw_receipts is None:
        return "its body or its receipts are missing", none
    count = int.from_bytes(stored[:4], "big")
    try:
        body = rlp.decode(stored[4 + 20 * count:])
        receipt_items = rlp.decode(raw_receipts)
    except (rlp.DecodingError, DecodeError) as exc:
        return f"a record does not decode: {exc}", none
    problem = block_problem(number, header, body, receipt_items, parent)
    if problem is not None:
        return problem, none
    if len(body[0]) != count:
        return f"the body holds {len(body[0])} transactions, the record says {count}", none
    block = backend.block_by_hash(block_hash)
    receipts = backend.receipts(block_hash)
    if block is None or receipts is None:
        return "the block or its receipts do not read back", none
    for tx in block.transactions:
        if backend.transaction_location(tx.hash) != (block_hash, tx.index):
            return f"the index entry of transaction {tx.index} does not point at it", none
    expected = list(logs_of_receipts(receipts))
    raw_logs = store.get(b"L" + _num(number))
    if expected and raw_logs is None:
        return "its logs have no log record", none
    if raw_logs is not None and decode_block_logs(number, raw_logs) != expected:
        return "its log record differs from its receipts' logs", none
    addresses, topics = log_keys(receipts)
    suffix = _num(number)
    for address in addresses:
        if store.get(b"A" + address + suffix) is None:
            return "an address of its logs is missing from the log index", none
    for position, topic in topics:
        if position < 256 and store.get(b"P" + bytes([position]) + topic + suffix) is None:
            return "a topic of its logs is missing from the log index", none
    return None, (block_hash, len(block.transactions), len(expected))


def _verify_answers(backend: KeyValueBackend, block_hash: bytes,
                    derived: Mapping[bytes, Derivation]) -> tuple[str | None, int]:
    """What is wrong with the answers kept beside the block (None: each matches a fresh
    derivation), and whether it lacks any (1 or 0)."""
    receipts = backend.receipts(block_hash)
    if receipts is None:
        return "its receipts do not read back", 0
    missing = 0
    for name, derive in derived.items():
        kept = backend.answer_record(name, block_hash)
        if kept is None:
            missing = 1
        elif kept != derive(receipts):
            return (f"the answer kept under {name.decode(errors='replace')!r} differs from "
                    "the one its receipts give"), 0
    return None, missing
