"""eth_simulateV1's overlay trie (``ethread.methods.overlay_trie``) against py-trie: the same
roots after any writes and deletes (the ordered roots: tests/rlpcodec/test_ordered_trie.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from ethread.methods.overlay_trie import OverlayTrie

KEYS = st.one_of(  # (of one length, as a state trie's: py-trie refuses a key that prefixes another)
    st.binary(min_size=32, max_size=32),
    st.tuples(st.sampled_from([b"\x00", b"\x00\x01", b"\x12\x34\x56"]),
              st.binary(min_size=32, max_size=32)).map(lambda t: (t[0] + t[1])[:32]),
    st.lists(st.sampled_from([0, 1, 0x10, 0xFF]), min_size=32, max_size=32).map(bytes))


NON_EMPTY = st.one_of(st.binary(min_size=1, max_size=3), st.binary(min_size=30, max_size=70))
VALUES = st.one_of(st.just(b""), NON_EMPTY)


@settings(max_examples=300, deadline=None)
@given(before=st.lists(st.tuples(KEYS, VALUES), max_size=30),
       after=st.lists(st.tuples(KEYS, VALUES), max_size=30), peek=st.booleans())
def test_overlay_trie_is_py_trie(before: list[tuple[bytes, bytes]], after: list[tuple[bytes, bytes]],
                                 peek: bool) -> None:
    """Changes on top of a stored trie: the same roots and reads as py-trie's, and the nodes
    it writes are enough to read the new root from the database alone."""
    db: dict[bytes, bytes] = {}
    reference = HexaryTrie(db)
    for key, value in before:
        reference[key] = value
    overlay = OverlayTrie(dict(db), reference.root_hash)
    for key, value in after:
        reference[key] = value
        overlay[key] = value
        if peek:
            assert overlay.root_hash == reference.root_hash
    assert overlay.root_hash == reference.root_hash
    reopened = OverlayTrie(overlay._db, overlay.root_hash)
    for key, _ in before + after:
        assert overlay[key] == reference[key] == reopened[key]
        assert (key in overlay) == (key in reference)


@settings(max_examples=100, deadline=None)
@given(stored=st.lists(st.tuples(KEYS, NON_EMPTY), min_size=1, max_size=30),
       again=st.data())
def test_setting_what_a_trie_holds_changes_nothing(stored: list[tuple[bytes, bytes]],
                                                   again: st.DataObject) -> None:
    """Values written again as they are leave the stored root as it was: nothing is encoded,
    hashed or written anew (py-evm writes an account back unchanged, e.g. a fee recipient paid
    nothing)."""
    db: dict[bytes, bytes] = {}
    trie = OverlayTrie(db)
    for key, value in stored:
        trie[key] = value
    root = trie.root_hash
    written = dict(db)
    held = {key: value for key, value in stored}
    for key in again.draw(st.lists(st.sampled_from(sorted(held)), min_size=1)):
        trie[key] = held[key]
    assert trie._root == root
    assert trie.root_hash == root
    assert db == written
