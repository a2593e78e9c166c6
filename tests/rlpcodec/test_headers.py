"""rlpcodec/headers.py: a header's RLP both ways, for every shape from 15 fields (before
London) to 21 (Prague), checked against py-evm's header classes (their RLP and their hash)
and against the real headers of the conformance chains read with pyrlp; the strict and the
trusted reader's refusals; and the facts receipts read from a header record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rlp
from eth.rlp.headers import BlockHeader
from eth.vm.forks.cancun.blocks import CancunBlockHeader
from eth.vm.forks.london.blocks import LondonBlockHeader
from eth.vm.forks.prague.blocks import PragueBlockHeader
from eth.vm.forks.shanghai.blocks import ShanghaiBlockHeader
from eth_hash.auto import keccak
from hypothesis import given, settings
from hypothesis import strategies as st
from rlp.codec import consume_item

from ethread.models import Header
from ethread.rlpcodec.headers import (
    decode_header,
    encode_header,
    header_facts,
    header_fields,
    header_from_fields,
    header_of_record,
)
from ethread.rlpcodec.items import DecodeError
from tests.support.paths import conformance_dir

PYEVM_BY_COUNT = {15: BlockHeader, 16: LondonBlockHeader, 17: ShanghaiBlockHeader,
                  20: CancunBlockHeader, 21: PragueBlockHeader}
"""py-evm's header class for each field count a fork has (none has 18 or 19 fields)."""
OPTIONAL = ("base_fee_per_gas", "withdrawals_root", "blob_gas_used", "excess_blob_gas",
            "parent_beacon_block_root", "requests_hash")

uint256 = st.integers(min_value=0, max_value=2**256 - 1)
uint64 = st.integers(min_value=0, max_value=2**64 - 1)


def hashes() -> st.SearchStrategy[bytes]:
    return st.binary(min_size=32, max_size=32)


@st.composite
def headers(draw: st.DrawFn) -> Header:
    """A header of a random shape with random fields (its hash left for the decoder)."""
    count = draw(st.sampled_from(sorted(PYEVM_BY_COUNT)))
    optional: dict[str, Any] = dict.fromkeys(OPTIONAL)
    values = [draw(uint64), draw(hashes()), draw(uint64), draw(uint64), draw(hashes()), draw(hashes())]
    for name, value in zip(OPTIONAL[:count - 15], values, strict=False):
        optional[name] = value
    return Header(
        parent_hash=draw(hashes()), uncles_hash=draw(hashes()),
        coinbase=draw(st.binary(min_size=20, max_size=20)), state_root=draw(hashes()),
        transactions_root=draw(hashes()), receipts_root=draw(hashes()),
        logs_bloom=draw(st.binary(min_size=256, max_size=256)), difficulty=draw(uint256),
        number=draw(uint64), gas_limit=draw(uint64), gas_used=draw(uint64), timestamp=draw(uint64),
        extra_data=draw(st.binary(max_size=32)), mix_hash=draw(hashes()),
        nonce=draw(st.binary(min_size=8, max_size=8)), **optional)


def pyevm_header(header: Header) -> Any:
    """The same header as py-evm's class for its shape."""
    count = 15 + sum(getattr(header, name) is not None for name in OPTIONAL)
    fields: dict[str, Any] = {
        "parent_hash": header.parent_hash, "uncles_hash": header.uncles_hash,
        "coinbase": header.coinbase, "state_root": header.state_root,
        "transaction_root": header.transactions_root, "receipt_root": header.receipts_root,
        "bloom": int.from_bytes(header.logs_bloom, "big"), "difficulty": header.difficulty,
        "block_number": header.number, "gas_limit": header.gas_limit, "gas_used": header.gas_used,
        "timestamp": header.timestamp, "extra_data": header.extra_data,
        "mix_hash": header.mix_hash, "nonce": header.nonce,
    }
    fields.update({name: getattr(header, name) for name in OPTIONAL[:count - 15]})
    return PYEVM_BY_COUNT[count](**fields)


@settings(max_examples=60, deadline=None)
@given(headers())
def test_a_header_encodes_as_pyevm_encodes_it_and_decodes_back(header: Header) -> None:
    reference = pyevm_header(header)
    encoded = encode_header(header)
    assert encoded == rlp.encode(reference)
    decoded = decode_header(encoded)
    assert decoded.hash == reference.hash
    assert decoded == Header(**{**_fields_of(header), "hash": reference.hash})
    assert header_of_record(encoded) == decoded
    assert header_facts(encoded) == (header.number, header.timestamp, header.base_fee_per_gas,
                                     header.excess_blob_gas)


def _fields_of(header: Header) -> dict[str, Any]:
    return {name: getattr(header, name) for name in Header.__dataclass_fields__}


def _chain_headers(path: Path) -> Iterator[tuple[list[bytes], bytes]]:
    """Each block's header fields and header RLP in a chain file, read by pyrlp alone."""
    data = path.read_bytes()
    at = 0
    while at < len(data):
        block, _, at = consume_item(data, at)
        yield block[0], rlp.encode(block[0])


@pytest.mark.parametrize("chain", ["rpc-compat", "osaka"])
def test_every_header_of_a_conformance_chain_reads_as_pyrlp_reads_it(chain: str) -> None:
    shapes = set()
    for fields, raw in _chain_headers(conformance_dir() / chain / "chain.rlp"):
        header = decode_header(raw)
        assert header.hash == keccak(raw)
        assert header.parent_hash == fields[0] and header.coinbase == fields[2]
        assert header.number == rlp.sedes.big_endian_int.deserialize(fields[8])
        assert header.extra_data == fields[12] and header.nonce == fields[14]
        assert header_fields(header) == fields
        assert encode_header(header) == raw
        assert header_from_fields(fields) == header  # (hashed from the fields encoded again)
        assert header_of_record(raw, header.hash) == header
        base_fee = int.from_bytes(fields[15], "big") if len(fields) > 15 else None
        excess = int.from_bytes(fields[18], "big") if len(fields) > 18 else None
        assert header_facts(raw) == (header.number, header.timestamp, base_fee, excess)
        shapes.add(len(fields))
    assert shapes <= set(PYEVM_BY_COUNT)


def test_the_chains_hold_a_header_of_every_shape() -> None:
    shapes = {len(fields) for chain in ("rpc-compat", "osaka")
              for fields, _ in _chain_headers(conformance_dir() / chain / "chain.rlp")}
    assert shapes == set(PYEVM_BY_COUNT)  # the chains run from Frontier through Prague


def _sample_fields(count: int = 21) -> list[bytes]:
    sizes = [32, 32, 20, 32, 32, 32, 256, 1, 1, 1, 1, 1, 0, 32, 8, 1, 32, 1, 1, 32, 32]
    return [b"\x01" * size for size in sizes[:count]]


@pytest.mark.parametrize("count", [14, 22])
def test_a_header_of_the_wrong_field_count_is_refused(count: int) -> None:
    fields = [*_sample_fields(21), b"\x01"]
    raw = rlp.encode(fields[:count])
    for call in (decode_header, header_of_record, header_facts):
        with pytest.raises(DecodeError, match=f"^a header has 15 to 21 fields, got {count}$"):
            call(raw)


@pytest.mark.parametrize(("position", "value", "message"), [
    (0, b"\x01" * 31, "expected 32 bytes, got 31"),  # parent hash
    (2, b"\x01" * 21, "expected 20 bytes, got 21"),  # coinbase
    (6, b"\x01" * 255, "expected 256 bytes, got 255"),  # bloom
    (14, b"\x01" * 9, "expected 8 bytes, got 9"),  # nonce
    (8, b"\x00\x01", "integer with leading zero bytes"),  # number
    (15, b"\x00", "integer with leading zero bytes"),  # base fee
    (12, [b"\x01"], "expected an RLP string, got a list"),  # extra data
    (9, [], "expected an RLP string for an integer, got a list"),  # gas limit
])
def test_the_strict_reader_checks_each_field(position: int, value: Any, message: str) -> None:
    fields: list[Any] = _sample_fields()
    assert decode_header(rlp.encode(fields)).number == 1
    fields[position] = value
    with pytest.raises(DecodeError, match=f"^{message}$"):
        decode_header(rlp.encode(fields))


def test_the_trusted_reader_refuses_a_list_where_a_string_belongs() -> None:
    fields: list[Any] = _sample_fields()
    fields[12] = [b"\x01"]
    raw = rlp.encode(fields)
    with pytest.raises(DecodeError, match=r"^a record's field that must be a string is a list$"):
        header_of_record(raw)
    with pytest.raises(DecodeError, match=r"^a header's fields are strings$"):
        header_facts(raw)


@pytest.mark.parametrize("raw", [b"", b"\xc0", b"\x80", b"\xf9\x02"])
def test_bytes_that_are_not_a_header_are_refused(raw: bytes) -> None:
    """From outside: DecodeError. A store's damaged record: ValueError (DecodeError's base),
    which the stores report as damage."""
    with pytest.raises(DecodeError):
        decode_header(raw)
    for call in (header_facts, header_of_record):
        with pytest.raises(ValueError):  # (the reason varies with the damage)
            call(raw)


def test_a_record_with_bytes_after_the_header_is_refused() -> None:
    raw = rlp.encode(_sample_fields()) + b"\x00"
    with pytest.raises(DecodeError, match=r"^a header must fill its record$"):
        header_facts(raw)
    with pytest.raises(DecodeError, match=r"^header RLP: "):  # pyrlp's reason follows
        decode_header(raw)


def test_a_record_read_on_trust_takes_the_hash_it_was_stored_under() -> None:
    raw = rlp.encode(_sample_fields(16))
    key = b"\x42" * 32
    assert header_of_record(raw, key).hash == key
    assert header_of_record(raw).hash == keccak(raw)


@pytest.mark.parametrize("value", [0, 1, 0x7F, 0x80, 0xFF, 0x100, 2**64 - 1, 2**200])
def test_header_facts_reads_numbers_of_every_length(value: int) -> None:
    """A number below 0x80 is its own byte; longer ones follow a length prefix (one byte up to
    55 bytes); both sit at a field whose position header_facts finds."""
    fields: list[Any] = _sample_fields()
    for position in (8, 11, 15, 18):
        fields[position] = rlp.sedes.big_endian_int.serialize(value)
    assert header_facts(rlp.encode(fields)) == (value, value, value, value)
