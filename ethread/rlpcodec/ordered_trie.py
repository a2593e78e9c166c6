"""The root of a Merkle-Patricia trie keyed by position (``rlp(0)``, ``rlp(1)``, ...): the
transactions, receipts and withdrawals roots a header commits to.

Built bottom-up in one recursion over the sorted keys, each node encoded once and none kept;
paths are hex-digit strings. Nodes are the Yellow Paper's (appendix D): one encoded in under
32 bytes is embedded in its parent, the root always hashed. ``tests/rlpcodec/
test_ordered_trie.py`` holds it to py-trie's roots.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..keccak import keccak256
from .items import encode_list_payload

__all__ = ["BLANK_ROOT", "hex_prefix", "ordered_trie_root"]

BLANK_ROOT = keccak256(b"\x80")
"""keccak(rlp(b"")): the root of a trie with nothing in it."""

_INDEX = {digit: index for index, digit in enumerate("0123456789abcdef")}


def hex_prefix(path: str, leaf: bool) -> bytes:
    """The hex-prefix encoding of a node's path (hex digits): leaf or extension, odd or even."""
    if len(path) % 2:
        return bytes.fromhex(("3" if leaf else "1") + path)
    return bytes.fromhex(("20" if leaf else "00") + path)


def rlp_string(value: bytes) -> bytes:
    """The RLP of the byte string ``value``."""
    length = len(value)
    if length == 1 and value[0] < 0x80:
        return value
    if length < 56:
        return bytes((0x80 + length,)) + value
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes((0xB7 + len(size),)) + size + value


def ordered_trie_root(items: Iterable[bytes]) -> bytes:
    """The root of the trie holding the ``i``-th of ``items`` (as the trie stores it) under ``rlp(i)``."""
    pairs = sorted((rlp_string(position.to_bytes((position.bit_length() + 7) // 8, "big")).hex(),
                    item) for position, item in enumerate(items))
    if not pairs:
        return BLANK_ROOT
    return keccak256(_node(pairs, 0, len(pairs), 0))


def _node(pairs: list[tuple[str, bytes]], low: int, high: int, depth: int) -> bytes:
    """The encoding of the node holding the sorted ``pairs[low:high]`` (hex paths and values),
    whose paths share their first ``depth`` digits."""
    first = pairs[low][0]
    if high - low == 1:
        return encode_list_payload(rlp_string(hex_prefix(first[depth:], True)) + rlp_string(pairs[low][1]))
    last = pairs[high - 1][0]
    shared = depth
    limit = min(len(first), len(last))
    while shared < limit and first[shared] == last[shared]:
        shared += 1
    if shared > depth:  # (sorted: what the first and the last share, all share)
        child = _node(pairs, low, high, shared)
        return encode_list_payload(rlp_string(hex_prefix(first[depth:shared], False)) + _embedded(child))
    children = [b"\x80"] * 16
    value = b""
    at = low
    if len(first) == depth:  # (a path ending here sorts first: the branch's value)
        value = pairs[low][1]
        at += 1
    while at < high:
        digit = pairs[at][0][depth]
        end = at + 1
        while end < high and pairs[end][0][depth] == digit:
            end += 1
        children[_INDEX[digit]] = _embedded(_node(pairs, at, end, depth + 1))
        at = end
    return encode_list_payload(b"".join(children) + rlp_string(value))


def _embedded(encoded: bytes) -> bytes:
    """How a parent holds a child node: itself under 32 bytes, else its hash."""
    return encoded if len(encoded) < 32 else b"\xa0" + keccak256(encoded)
