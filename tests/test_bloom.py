"""ethread.bloom against eth_bloom (the implementation py-evm's receipts use), over random logs."""

from __future__ import annotations

from eth_bloom.bloom import BloomFilter
from hypothesis import given
from hypothesis import strategies as st

from ethread.bloom import item_bloom, logs_bloom

LOG = st.tuples(st.binary(min_size=20, max_size=20),
                st.lists(st.binary(min_size=32, max_size=32), max_size=4), st.binary(max_size=8))


@given(logs=st.lists(LOG, max_size=5))
def test_logs_bloom_is_eth_blooms(logs: list[tuple[bytes, list[bytes], bytes]]) -> None:
    expected = BloomFilter()
    for address, topics, _ in logs:
        expected.add(address)
        for topic in topics:
            expected.add(topic)
    assert logs_bloom(logs) == int(expected)


def test_an_item_sets_three_bits_at_most() -> None:
    bits = item_bloom(b"\x01" * 20)
    assert 1 <= bin(bits).count("1") <= 3
    assert bits < 1 << 2048
    assert logs_bloom([]) == 0
