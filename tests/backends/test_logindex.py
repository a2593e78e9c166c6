"""The log records a persistent store keeps per block decode to their logs (the fast decoder
they use, :mod:`ethread.rlpcodec.items`, is checked against pyrlp in tests/rlpcodec/test_items.py), and a damaged
record is a ValueError (a store then answers that it holds a damaged record), never a wrong
answer."""

from __future__ import annotations

import pytest
import rlp

from ethread.backends.logindex import decode_block_logs, encode_log_record


def test_a_block_record_decodes_to_its_logs() -> None:
    block_hash, tx_hash = b"\x11" * 32, b"\x22" * 32
    logs = [(b"\x01" * 20, [b"\x03" * 32, b"\x04" * 32], b""), (b"\x02" * 20, [], b"\x05" * 100)]
    raw = encode_log_record(block_hash, 1_700_000_000, [(0, tx_hash, logs[:1]),
                                                        (7, b"\x33" * 32, logs)])
    decoded = decode_block_logs(42, raw)
    assert [(log.address, log.topics, log.data, log.transaction_index, log.log_index)
            for log in decoded] == [
        (b"\x01" * 20, (b"\x03" * 32, b"\x04" * 32), b"", 0, 0),
        (b"\x01" * 20, (b"\x03" * 32, b"\x04" * 32), b"", 7, 1),
        (b"\x02" * 20, (), b"\x05" * 100, 7, 2)]
    assert {(log.block_number, log.block_hash, log.block_timestamp) for log in decoded} == {
        (42, block_hash, 1_700_000_000)}
    assert decoded[0].transaction_hash == tx_hash and decoded[2].transaction_hash == b"\x33" * 32


@pytest.mark.parametrize("damage", ["truncated", "trailing", "empty", "long length", "shape"])
def test_a_damaged_record_is_a_value_error(damage: str) -> None:
    raw = encode_log_record(b"\x11" * 32, 5, [(0, b"\x22" * 32, [(b"\x01" * 20, [], b"x")])])
    bad = {
        "truncated": raw[:-3],
        "trailing": raw + b"\x00",
        "empty": b"",
        "long length": b"\xf9\xff\xff" + raw[3:],
        "shape": rlp.encode([b"\x11" * 32, b"\x05", [b"not a list"]]),
    }[damage]
    with pytest.raises(ValueError):
        decode_block_logs(1, bad)
