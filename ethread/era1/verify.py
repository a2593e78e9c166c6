"""Check an Era1 file end to end, the way a client that did not write it would.

Every header must hash into the parent link of the next, every block's transactions and
receipts must rebuild the roots its header commits to, total difficulties must add up, and
the accumulator recomputed from all of that must equal both the stored one and the prefix in
the file name. Reading the file by index is cheap; this is the slow, thorough pass behind
``ethread verify``.
"""

from __future__ import annotations

import rlp
from eth_utils import keccak

from ..progress import Progress
from ..rlpcodec.headers import decode_header
from ..rlpcodec.items import DecodeError
from ..rlpcodec.ordered_trie import ordered_trie_root
from .accumulator import accumulator_root
from .e2store import FormatError
from .file import Era1File, Era1Name


def trie_root(items: list[object]) -> bytes:
    """The root of the trie of decoded ``items`` by position (transactions, receipts,
    withdrawals): a list item is stored as its RLP, a string (a typed envelope) as it is."""
    return ordered_trie_root([rlp.encode(item) if isinstance(item, list) else item  # type: ignore[misc]
                              for item in items])


def verify_file(era: Era1File, progress: Progress | None = None) -> None:
    """Raise :class:`FormatError` at the first inconsistency of ``era``."""
    where = str(era.path)
    records = []
    parent: bytes | None = None
    previous_td: int | None = None
    for number in range(era.start, era.end):
        header_rlp, body_rlp, receipts_rlp, td = era.raw_tuple(number)
        try:
            header = decode_header(header_rlp)
            body = rlp.decode(body_rlp)
            receipts = rlp.decode(receipts_rlp)
        except (DecodeError, rlp.DecodingError) as exc:
            raise FormatError(where, era.offset(number), f"block {number}: {exc}") from None
        problem = None
        if header.number != number:
            problem = f"the header says block {header.number}"
        elif parent is not None and header.parent_hash != parent:
            problem = "its parent hash is not the previous block's hash"
        elif previous_td is not None and td != previous_td + header.difficulty:
            problem = "total difficulty is not the previous one plus the block's difficulty"
        elif trie_root(body[0]) != header.transactions_root:
            problem = "transactions do not match the header's transactions root"
        elif trie_root(receipts) != header.receipts_root:
            problem = "receipts do not match the header's receipts root"
        elif keccak(rlp.encode(body[1])) != header.uncles_hash:
            problem = "uncles do not match the header's uncles hash"
        if problem is not None:
            raise FormatError(where, era.offset(number), f"block {number}: {problem}")
        parent, previous_td = header.hash, td
        records.append((header.hash, td))
        if progress is not None and (number - era.start) % 1024 == 1023:
            progress(number - era.start + 1, era.count)
    root = accumulator_root(records)
    if root != era.accumulator():
        raise FormatError(where, era.size, "the accumulator recomputed from the blocks differs "
                          "from the stored one")
    name = Era1Name.parse(era.path.name)
    if name is not None and name.root_prefix != root[:4].hex():
        raise FormatError(where, 0, f"the file name says accumulator {name.root_prefix}, the "
                          f"blocks give {root[:4].hex()}")
