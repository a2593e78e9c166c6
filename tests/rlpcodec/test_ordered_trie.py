"""The tries keyed by position (``ethread.rlpcodec.ordered_trie``) against py-trie's
``HexaryTrie`` filled item by item: the same roots."""

from __future__ import annotations

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from ethread.rlpcodec.ordered_trie import BLANK_ROOT, hex_prefix, ordered_trie_root


def _py_trie_root(items: list[bytes]) -> bytes:
    reference = HexaryTrie({})
    for position, item in enumerate(items):
        reference[rlp.encode(position)] = item
    return bytes(reference.root_hash)


@settings(max_examples=50, deadline=None)
@given(items=st.lists(st.binary(min_size=1, max_size=80), max_size=200))
def test_ordered_root_is_py_tries(items: list[bytes]) -> None:
    assert ordered_trie_root(items) == _py_trie_root(items)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 16, 17, 127, 128, 129, 300])
@pytest.mark.parametrize("size", [1, 20, 110])
def test_ordered_root_at_the_edges(count: int, size: int) -> None:
    """Roots of as many items as a branch, a one-byte key, a two-byte key hold, with items
    embedded in their parents (short) and hashed (long)."""
    items = [bytes([position % 251 + 1]) * size for position in range(count)]
    assert ordered_trie_root(items) == _py_trie_root(items)


def test_an_empty_trie_has_the_blank_root() -> None:
    assert ordered_trie_root([]) == BLANK_ROOT == bytes(HexaryTrie({}).root_hash)


@pytest.mark.parametrize(("path", "leaf", "encoded"), [
    ("", False, b"\x00"), ("", True, b"\x20"), ("1", False, b"\x11"), ("f", True, b"\x3f"),
    ("12", False, b"\x00\x12"), ("abc", True, b"\x3a\xbc"),
])
def test_hex_prefix_flags_leaf_and_odd_length(path: str, leaf: bool, encoded: bytes) -> None:
    assert hex_prefix(path, leaf) == encoded
