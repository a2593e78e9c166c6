"""The root of a Merkle-Patricia trie keyed by position (``rlp(0)``, ``rlp(1)``, ...).

Transactions, receipts and withdrawals roots are all such tries. Building one through
py-trie's ``HexaryTrie`` inserts item by item into a node database; here the whole key set is
known and sorted up front, so the trie is built bottom-up in one recursion over the sorted keys
(about ten times faster for a block of a few hundred transactions), which is what lets
``verify`` and the synthetic history benchmark handle blocks shaped like mainnet's.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_hash.auto import keccak

from ..rlpcodec.items import encode_list_of_encoded as _list
from ..rlpcodec.items import encode_nested as _string

BLANK_ROOT = bytes.fromhex("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421")
"""keccak(rlp(b"")): the root of a trie with nothing in it."""


def _position_key(position: int) -> bytes:
    """``rlp(position)`` as the trie's key."""
    if position == 0:
        return b"\x80"
    raw = position.to_bytes((position.bit_length() + 7) // 8, "big")
    return raw if len(raw) == 1 and raw[0] < 0x80 else bytes((0x80 + len(raw),)) + raw


def _nibbles(key: bytes) -> bytes:
    out = bytearray()
    for byte in key:
        out.append(byte >> 4)
        out.append(byte & 15)
    return bytes(out)


def _compact(path: bytes, leaf: bool) -> bytes:
    """Hex-prefix encoding of a nibble path (the flag nibble says leaf or extension, odd or
    even)."""
    flag = 2 if leaf else 0
    nibbles = bytes((flag + 1,)) + path if len(path) % 2 else bytes((flag, 0)) + path
    return bytes(nibbles[i] << 4 | nibbles[i + 1] for i in range(0, len(nibbles), 2))


def _reference(node: bytes) -> bytes:
    """How a parent holds a child node: inline under 32 bytes, else by its hash."""
    return node if len(node) < 32 else _string(keccak(node))


def _node(keys: Sequence[bytes], values: Sequence[bytes], lo: int, hi: int, depth: int) -> bytes:
    """The encoded node of the sorted ``keys[lo:hi]``, all sharing their first ``depth``
    nibbles."""
    first = keys[lo]
    if hi - lo == 1:
        return _list([_string(_compact(first[depth:], True)), _string(values[lo])])
    last = keys[hi - 1]
    shared = depth
    limit = min(len(first), len(last))
    while shared < limit and first[shared] == last[shared]:
        shared += 1
    if shared > depth:
        child = _node(keys, values, lo, hi, shared)
        return _list([_string(_compact(first[depth:shared], False)), _reference(child)])
    slots: list[bytes] = [b"\x80"] * 17
    at = lo
    if len(first) == depth:  # a key ending here holds the branch's own value
        slots[16] = _string(values[lo])
        at += 1
    while at < hi:
        nibble = keys[at][depth]
        end = at + 1
        while end < hi and keys[end][depth] == nibble:
            end += 1
        slots[nibble] = _reference(_node(keys, values, at, end, depth + 1))
        at = end
    return _list(slots)


def ordered_trie_root(values: Sequence[bytes]) -> bytes:
    """The root of the trie holding ``values[i]`` under ``rlp(i)`` (each value as the trie
    stores it: an encoded transaction, receipt or withdrawal)."""
    if not values:
        return BLANK_ROOT
    pairs = sorted((_nibbles(_position_key(i)), v) for i, v in enumerate(values))
    keys = [k for k, _ in pairs]
    ordered = [v for _, v in pairs]
    return bytes(keccak(_node(keys, ordered, 0, len(keys), 0)))
