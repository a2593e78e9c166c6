"""Answers kept in the store beside each block, derived when it is written, so that reading
a block no process has decoded yet is one lookup.

One answer is kept: eth_getBlockReceipts' JSON (:func:`~ethread.codec.serialize.receipts_answer`,
default style); a transaction's receipt is its element. The importer writes it in the block's
batch (:func:`keep_answers`), ``ethread verify --db`` checks it (:data:`DERIVED`) and
``ethread upgrade --db`` adds it to an older store (:func:`add_answers`). Its name
(:data:`RECEIPTS_ANSWER`) fingerprints the receipt and log declarations, the fork table's blob
parameters and :data:`RECEIPTS_FORMAT`, so bytes of another format are never read. Only
:class:`~ethread.backend.AnswerRecords` backends keep answers.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import typing
from collections.abc import Callable, Sequence

import orjson

from ..backend import AnswerRecords, Backend, WritableBackend
from ..forks.table import FORKS
from ..models import Block, Hash32, Log, Receipt
from ..progress import Progress
from .answers import AnswerStyle
from .serialize import JSON, receipts_answer

RECEIPTS_FORMAT = 1
"""Raised by hand when the receipts' JSON changes in a way their declarations do not show."""


def _declarations_fingerprint(*classes: type) -> str:
    """Eight hex digits naming the JSON declarations of ``classes`` and the forks' blob parameters."""
    parts: list[str] = [str(RECEIPTS_FORMAT)]
    parts.extend(f"{fork.name}:{fork.blob!r}" for fork in FORKS)
    for cls in classes:
        hints = typing.get_type_hints(cls)
        parts.append(cls.__name__)
        for f in dataclasses.fields(cls):
            if "json" in f.metadata:
                parts.append(f"{f.name}:{f.metadata['json']}:{f.metadata['kind']}:"
                             f"{f.metadata['omit_none']}:{hints.get(f.name)}")
        parts.extend(repr(entry) for entry in getattr(cls, "computed", ()))
    return hashlib.blake2b("|".join(parts).encode(), digest_size=4).hexdigest()


RECEIPTS_ANSWER = b"receipts:" + _declarations_fingerprint(Receipt, Log).encode()
"""The name eth_getBlockReceipts' answer is kept under."""


DERIVED: dict[bytes, Callable[[Sequence[Receipt]], bytes]] = {RECEIPTS_ANSWER: receipts_answer}
"""Every answer kept beside a block, by name: how it is derived from the block's receipts."""


@functools.cache
def keeps_answers(kind: type) -> bool:
    """Whether backends of class ``kind`` keep answers (cached: a protocol check is slow)."""
    return issubclass(kind, AnswerRecords)


@functools.cache
def receipts_as_stored(style: AnswerStyle) -> bool:
    """Whether ``style`` writes receipts and their logs as the kept answer does."""
    return not style.withheld_keys(Receipt) and not style.withheld_keys(Log)


def keep_answers(backend: WritableBackend, block: Block, receipts: Sequence[Receipt]) -> None:
    """Keep the block's answers beside it, in the importer's batch (if ``backend`` keeps any)."""
    if keeps_answers(type(backend)):
        _put_derived(typing.cast(AnswerRecords, backend), block.hash, receipts)


def _put_derived(backend: AnswerRecords, block_hash: Hash32, receipts: Sequence[Receipt]
                 ) -> None:
    """Every answer of :data:`DERIVED`, derived from the block's receipts, kept beside it."""
    for name, derive in DERIVED.items():
        backend.put_answer_record(name, block_hash, derive(receipts))


def stored_receipts(backend: Backend, block_hash: Hash32, style: AnswerStyle
                    ) -> orjson.Fragment | None:
    """eth_getBlockReceipts' answer for the block as kept beside it, or None."""
    if not keeps_answers(type(backend)) or not receipts_as_stored(style):
        return None
    kept = typing.cast(AnswerRecords, backend).answer_record(RECEIPTS_ANSWER, block_hash)
    return None if kept is None else orjson.Fragment(kept)


def stored_receipt(backend: Backend, tx_hash: Hash32, style: AnswerStyle) -> JSON | None:
    """eth_getTransactionReceipt's answer, decoded from the one kept beside its block, or None."""
    if not keeps_answers(type(backend)) or not receipts_as_stored(style):
        return None
    location = backend.transaction_location(tx_hash)
    if location is None:
        return None
    block_hash, index = location
    kept = typing.cast(AnswerRecords, backend).answer_record(RECEIPTS_ANSWER, block_hash)
    if kept is None:
        return None
    receipts = orjson.loads(kept)
    return receipts[index] if 0 <= index < len(receipts) else None


def lacks_answers(backend: Backend) -> bool:
    """Whether a store that keeps answers lacks them at its first or its last block."""
    if not keeps_answers(type(backend)):
        return False
    head = backend.pointer("latest")
    for number in (0, head) if head is not None else ():
        block_hash = backend.canonical_hash(number)
        if block_hash is not None and typing.cast(AnswerRecords, backend).answer_record(
                RECEIPTS_ANSWER, block_hash) is None:
            return True
    return False


class _Upgradable(WritableBackend, AnswerRecords, typing.Protocol):
    """A store that can be given the answers an older ethread did not keep."""


UPGRADE_BATCH = 1024
"""Blocks whose answers are written in one batch by :func:`add_answers`."""


def drop_old_answers(backend: _Upgradable) -> int:
    """Delete the answers kept under names this ethread does not write; how many."""
    return backend.drop_answer_records(frozenset(DERIVED))


def add_answers(backend: _Upgradable, progress: Progress | None = None) -> int:
    """Keep the answers of every held block that lacks them, in batches; how many blocks got them."""
    head = backend.pointer("latest")
    if head is None:
        return 0
    added = 0
    for start in range(0, head + 1, UPGRADE_BATCH):
        with backend.import_batch():
            for number in range(start, min(start + UPGRADE_BATCH, head + 1)):
                block_hash = backend.canonical_hash(number)
                if block_hash is None or backend.answer_record(RECEIPTS_ANSWER,
                                                               block_hash) is not None:
                    continue
                receipts = backend.receipts(block_hash)
                if receipts is None:
                    continue
                _put_derived(backend, block_hash, receipts)
                added += 1
        if progress is not None:
            progress(min(start + UPGRADE_BATCH, head + 1), head + 1)
    return added
