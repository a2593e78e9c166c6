"""Check an Era1 file end to end, the way a client that did not write it would (``ethread
verify``): header links, the roots each block's transactions and receipts rebuild, total
difficulties, and the accumulator against the stored one and the file name's prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import rlp
from eth_utils import keccak

from ..models import Header
from ..progress import Progress
from ..rlpcodec.headers import decode_header
from ..rlpcodec.items import DecodeError
from ..rlpcodec.ordered_trie import ordered_trie_root
from .accumulator import accumulator_root
from .e2store import FormatError
from .file import Era1File, Era1Name

if TYPE_CHECKING:
    from .archive import ArchiveFile


def trie_root(items: list[object]) -> bytes:
    """The root of the trie of decoded ``items`` by position (transactions, receipts,
    withdrawals): a list item is stored as its RLP, a string (a typed envelope) as it is."""
    return ordered_trie_root([rlp.encode(item) if isinstance(item, list) else item  # type: ignore[misc]
                              for item in items])


def block_problem(number: int, header: Header, body: Any, receipts: Any,
                  parent: bytes | None) -> str | None:
    """What is wrong with the decoded block ``number`` of an archive file (None: nothing): its
    number, its link to ``parent``, the roots its body and receipts must rebuild."""
    if not isinstance(body, list) or len(body) not in (2, 3):
        return "the body is not [transactions, uncles] or [transactions, uncles, withdrawals]"
    if header.number != number:
        return f"the header says block {header.number}"
    if parent is not None and header.parent_hash != parent:
        return "its parent hash is not the previous block's hash"
    if trie_root(body[0]) != header.transactions_root:
        return "transactions do not match the header's transactions root"
    if keccak(rlp.encode(body[1])) != header.uncles_hash:
        return "uncles do not match the header's uncles hash"
    if (header.withdrawals_root is not None) != (len(body) == 3):
        return "withdrawals are present where the header has no root, or missing"
    if len(body) == 3 and trie_root(body[2]) != header.withdrawals_root:
        return "withdrawals do not match the header's withdrawals root"
    if receipts is not None and trie_root(receipts) != header.receipts_root:
        return "receipts do not match the header's receipts root"
    return None


def checked_blocks(archive: ArchiveFile, progress: Progress | None,
                   more: Callable[[int, Header, int | None, int | None], str | None]
                   ) -> Iterator[tuple[Header, int | None]]:
    """Each block of ``archive`` with its total difficulty, decoded and checked by
    :func:`block_problem`, then by ``more(number, header, total difficulty, the previous
    block's)``; :class:`FormatError` at the first problem (None: nothing wrong)."""
    where, parent, previous_td = str(archive.path), None, None
    for number in range(archive.start, archive.end):
        header_rlp, body_rlp, receipts_rlp, td = archive.raw_tuple(number)
        try:
            header = decode_header(header_rlp)
            body = rlp.decode(body_rlp)
            receipts = None if receipts_rlp is None else rlp.decode(receipts_rlp)
        except (DecodeError, rlp.DecodingError) as exc:
            raise FormatError(where, archive.offset(number), f"block {number}: {exc}") from None
        problem = (block_problem(number, header, body, receipts, parent)
                   or more(number, header, td, previous_td))
        if problem is not None:
            raise FormatError(where, archive.offset(number), f"block {number}: {problem}")
        yield header, td
        parent, previous_td = header.hash, td
        if progress is not None and (number - archive.start) % 1024 == 1023:
            progress(number - archive.start + 1, archive.count)


def _adds_up(number: int, header: Header, td: int | None, previous: int | None) -> str | None:
    if previous is not None and td != previous + header.difficulty:
        return "total difficulty is not the previous one plus the block's difficulty"
    return None


def verify_file(era: Era1File, progress: Progress | None = None) -> None:
    """Raise :class:`FormatError` at the first inconsistency of ``era``."""
    where = str(era.path)
    records = []
    for header, td in checked_blocks(era, progress, _adds_up):
        assert td is not None  # (an Era1 file holds every block's)
        records.append((header.hash, td))
    root = accumulator_root(records)
    if root != era.accumulator():
        raise FormatError(where, era.size, "the accumulator recomputed from the blocks differs "
                          "from the stored one")
    name = Era1Name.parse(era.path.name)
    check_named(where, None if name is None else name.root_prefix, root, "accumulator")


def check_named(where: str, named: str | None, found: bytes, what: str) -> None:
    """:class:`FormatError` unless the hex the file name gives (None: a name of another form)
    starts ``found``."""
    if named is not None and named != found[:4].hex():
        raise FormatError(where, 0, f"the file name says {what} {named}, the blocks give "
                          f"{found[:4].hex()}")
