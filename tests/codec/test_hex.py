"""codec/hex.py: quantities, data, hashes, addresses and storage keys read strictly, with the
error texts of geth's ``common/hexutil`` (ErrEmptyString, ErrMissingPrefix, ErrEmptyNumber,
ErrLeadingZero, ErrSyntax, ErrOddLength, ErrUint64Range, ErrBig256Range) and of Go's JSON
decoder; and ``go_quote`` as Go's ``strconv.Quote`` writes a string.

The oracles are Python's own ``int(..., 16)``, ``hex()`` and ``bytes.hex()``, and the texts
are geth's constants."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ethread.codec import hex as codec_hex
from ethread.errors import InvalidParams

UNMARSHAL = "json: cannot unmarshal {} into Go value of type {}"


def _refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(InvalidParams) as caught:
        call(*args, **kwargs)
    assert caught.value.code == -32602
    return caught.value.message


# parse_quantity: geth's DecodeUint64 / DecodeBig

@given(st.integers(min_value=0, max_value=2**256 - 1))
def test_a_quantity_reads_back_what_python_writes(number: int) -> None:
    assert codec_hex.parse_quantity(hex(number)) == number
    assert codec_hex.parse_quantity("0X" + format(number, "X")) == number


@pytest.mark.parametrize("bits", [8, 64, 256])
def test_a_quantity_is_bounded_by_its_bit_width(bits: int) -> None:
    assert codec_hex.parse_quantity(hex(2**bits - 1), bits=bits) == 2**bits - 1
    assert _refusal(codec_hex.parse_quantity, hex(2**bits), bits=bits) == f"hex number > {bits} bits"


@pytest.mark.parametrize(("value", "message"), [
    ("", "empty hex string"),  # ErrEmptyString
    ("0x", 'hex string "0x"'),  # ErrEmptyNumber
    ("0X", 'hex string "0x"'),
    ("12", "hex string without 0x prefix"),
    ("x12", "hex string without 0x prefix"),
    ("latest", "hex string without 0x prefix"),
    ("0x00", "hex number with leading zero digits"),
    ("0x01", "hex number with leading zero digits"),
    ("0xg", "invalid hex string"),
    ("0x1 ", "invalid hex string"),
    ("0x-1", "invalid hex string"),
])
def test_a_malformed_quantity_gets_geths_reason(value: str, message: str) -> None:
    assert _refusal(codec_hex.parse_quantity, value) == message


def test_zero_is_the_one_quantity_with_a_zero_digit() -> None:
    assert codec_hex.parse_quantity("0x0") == 0


@pytest.mark.parametrize("value", [None, 1, 1.5, True, [], {}])
def test_a_quantity_that_is_not_a_string_names_the_field(value: Any) -> None:
    assert _refusal(codec_hex.parse_quantity, value, "nonce") == "nonce: expected a hex string"


# parse_data and its fixed-length forms

@given(st.binary(max_size=80))
def test_data_reads_back_what_python_writes(raw: bytes) -> None:
    assert codec_hex.parse_data("0x" + raw.hex()) == raw
    assert codec_hex.parse_data("0x" + raw.hex().upper()) == raw


@pytest.mark.parametrize(("value", "message"), [
    ("", "hex string without 0x prefix"),
    ("abcd", "hex string without 0x prefix"),
    ("0xabc", "hex string of odd length"),
    ("0xzz", "invalid hex string"),
    ("0xab cd", "hex string of odd length"),
    ("0xab  cd", "invalid hex string"),  # bytes.fromhex would skip the spaces
])
def test_malformed_data_gets_geths_reason(value: str, message: str) -> None:
    assert _refusal(codec_hex.parse_data, value) == message


def test_data_of_a_fixed_length_names_the_length_it_wanted() -> None:
    assert codec_hex.parse_data("0x0102", length=2) == b"\x01\x02"
    assert (_refusal(codec_hex.parse_data, "0x010203", "thing", length=2)
            == "hex string has length 6, want 4 for thing")


@given(st.binary(min_size=32, max_size=32), st.binary(min_size=20, max_size=20))
def test_hashes_and_addresses_are_32_and_20_bytes(hash_: bytes, address: bytes) -> None:
    assert codec_hex.parse_hash("0x" + hash_.hex()) == hash_
    assert codec_hex.parse_address("0x" + address.hex()) == address


@pytest.mark.parametrize(("call", "value", "message"), [
    (codec_hex.parse_hash, "0x" + "ab" * 31, "hex string has length 62, want 64 for common.Hash"),
    (codec_hex.parse_address, "0x" + "ab" * 21, "hex string has length 42, want 40 for common.Address"),
    (codec_hex.parse_address, "0x", "hex string has length 0, want 40 for common.Address"),
])
def test_a_hash_or_address_of_the_wrong_length_is_refused(call: Any, value: str, message: str) -> None:
    assert _refusal(call, value) == message


# parse_storage_key (strict) and decode_storage_key (geth's lenient reading)

@pytest.mark.parametrize(("value", "raw"), [
    ("0x", b""),
    ("0x1", b"\x01"),
    ("0x001", b"\x00\x01"),
    ("0x" + "f" * 64, b"\xff" * 32),
])
def test_a_storage_key_may_have_an_odd_digit_count(value: str, raw: bytes) -> None:
    assert codec_hex.parse_storage_key(value) == raw
    assert codec_hex.decode_storage_key(value) == raw


@pytest.mark.parametrize(("value", "message"), [
    ("1", "hex string without 0x prefix"),
    (5, "hex string without 0x prefix"),
    ("0x" + "0" * 65, "hex string too long, want at most 32 bytes"),
    ("0xzz", "invalid hex string"),
])
def test_a_strict_storage_key_refusal(value: Any, message: str) -> None:
    assert _refusal(codec_hex.parse_storage_key, value) == message


def test_the_lenient_storage_key_needs_no_prefix_and_quotes_the_key_it_refuses() -> None:
    assert codec_hex.decode_storage_key("abc") == b"\x0a\xbc"
    assert codec_hex.decode_storage_key("0X" + "1" * 64) == b"\x11" * 32
    too_long = "0x" + "1" * 65
    assert (_refusal(codec_hex.decode_storage_key, too_long)
            == f'storage key too long (want at most 32 bytes): "{too_long}"')
    assert _refusal(codec_hex.decode_storage_key, "0xq") == 'invalid hex in storage key: "0xq"'


# go_quote: Go's strconv.Quote (the rules of strconv.appendEscapedRune)

@pytest.mark.parametrize(("text", "quoted"), [
    ("", '""'),
    ("abc", '"abc"'),
    ('say "hi"', r'"say \"hi\""'),
    ("back\\slash", r'"back\\slash"'),
    ("\a\b\f\n\r\t\v", r'"\a\b\f\n\r\t\v"'),
    ("\x00\x1f\x7f", r'"\x00\x1f\x7f"'),
    ("\x80\xad", r'"\u0080\u00ad"'),  # not printable, above the ASCII controls: \u
    ("\u00a0", r'"\u00a0"'),
    ("é世", '"é世"'),  # printable runes stay as they are
    ("\u2028", r'"\u2028"'),
    ("\U000e0001", r'"\U000e0001"'),
])
def test_go_quote_writes_what_gos_strconv_quote_writes(text: str, quoted: str) -> None:
    assert codec_hex.go_quote(text) == quoted


# the top-level parameters: Go's JSON decoder wraps hexutil's reason

@pytest.mark.parametrize(("value", "message"), [
    (5, UNMARSHAL.format("non-string", "common.Hash")),
    (None, UNMARSHAL.format("non-string", "common.Hash")),
    ("", "hex string has length 0, want 64 for common.Hash"),
    ("ab" * 32, UNMARSHAL.format("hex string without 0x prefix", "common.Hash")),
    ("0x" + "a" * 63, UNMARSHAL.format("hex string of odd length", "common.Hash")),
    ("0x" + "ab" * 31, "hex string has length 62, want 64 for common.Hash"),
    ("0x" + "zz" * 32, UNMARSHAL.format("invalid hex string", "common.Hash")),
])
def test_a_hash_parameter_refusal(value: Any, message: str) -> None:
    assert _refusal(codec_hex.parse_hash_param, value) == message


def test_hash_and_address_parameters_read_their_bytes() -> None:
    assert codec_hex.parse_hash_param("0x" + "Ab" * 32) == b"\xab" * 32
    assert codec_hex.parse_address_param("0x" + "cd" * 20) == b"\xcd" * 20
    assert (_refusal(codec_hex.parse_address_param, "0x" + "cd" * 32)
            == "hex string has length 64, want 40 for common.Address")


@given(st.binary(max_size=64))
def test_a_bytes_parameter_reads_any_even_length(raw: bytes) -> None:
    assert codec_hex.parse_bytes_param("0x" + raw.hex()) == raw


@pytest.mark.parametrize(("value", "message"), [
    (7, UNMARSHAL.format("non-string", "hexutil.Bytes")),
    ("ab", UNMARSHAL.format("hex string without 0x prefix", "hexutil.Bytes")),
    ("0xabc", UNMARSHAL.format("hex string of odd length", "hexutil.Bytes")),
    ("0xgg", UNMARSHAL.format("invalid hex string", "hexutil.Bytes")),
])
def test_a_bytes_parameter_refusal(value: Any, message: str) -> None:
    assert _refusal(codec_hex.parse_bytes_param, value) == message


def test_an_empty_string_is_empty_bytes_and_the_type_name_is_the_callers() -> None:
    assert codec_hex.parse_bytes_param("") == b""
    assert (_refusal(codec_hex.parse_bytes_param, 1, "hexutil.Big")
            == UNMARSHAL.format("non-string", "hexutil.Big"))


@pytest.mark.parametrize(("value", "json_type"), [
    (1, "number"), (1.5, "number"), (True, "bool"), (None, "null"), ([], "array"), ({}, "object"),
])
def test_a_string_parameter_refuses_every_other_json_type(value: Any, json_type: str) -> None:
    assert codec_hex.parse_string_param("text") == "text"
    assert _refusal(codec_hex.parse_string_param, value) == UNMARSHAL.format(json_type, "string")
