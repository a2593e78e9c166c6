"""One decoder per transaction type: the same function reads a chain file's transactions
(fields from pyrlp, every field checked) and a store's (fields from the fast item reader, only
the shape checked), and both give back the transaction encoded, for every type, any values."""

from __future__ import annotations

from typing import Any

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from ethread.models import (
    AccessListEntry,
    AccessListTransaction,
    Authorization,
    BlobTransaction,
    DynamicFeeTransaction,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from ethread.rlpcodec.fields import STRICT, TRUSTED
from ethread.rlpcodec.items import DecodeError, decode_nested
from ethread.rlpcodec.transactions import (
    access_list,
    decode_transaction,
    encode_transaction,
    transaction_hash,
    transaction_item,
    transaction_of_record,
)

uint = st.one_of(st.integers(0, 300), st.integers(0, 2**256 - 1))
small = st.integers(0, 2**64 - 1)
address = st.binary(min_size=20, max_size=20)
word = st.binary(min_size=32, max_size=32)
data = st.binary(max_size=80)
recipient = st.one_of(st.none(), address)
entries = st.lists(st.builds(AccessListEntry, address=address,
                             storage_keys=st.lists(word, max_size=3).map(tuple)),
                   max_size=3).map(tuple)
authorizations = st.lists(st.builds(Authorization, chain_id=small, address=address,
                                    nonce=small, y_parity=st.integers(0, 1), r=uint, s=uint),
                          max_size=2).map(tuple)
fee_market: dict[str, Any] = dict(chain_id=small, nonce=small, max_priority_fee_per_gas=uint,
                                  max_fee_per_gas=uint, gas=small, value=uint, data=data,
                                  access_list=entries, y_parity=st.integers(0, 1), r=uint,
                                  s=uint)
transactions = st.one_of(
    st.builds(LegacyTransaction, nonce=small, gas_price=uint, gas=small, to=recipient,
              value=uint, data=data, v=uint, r=uint, s=uint),
    st.builds(AccessListTransaction, chain_id=small, nonce=small, gas_price=uint, gas=small,
              to=recipient, value=uint, data=data, access_list=entries,
              y_parity=st.integers(0, 1), r=uint, s=uint),
    st.builds(DynamicFeeTransaction, to=recipient, **fee_market),
    st.builds(BlobTransaction, to=address, max_fee_per_blob_gas=uint,
              blob_versioned_hashes=st.lists(word, max_size=3).map(tuple), **fee_market),
    st.builds(SetCodeTransaction, to=address, authorization_list=authorizations, **fee_market),
)


@settings(max_examples=300, deadline=None)
@given(transactions)
def test_each_type_decodes_the_same_from_pyrlp_and_from_the_fast_reader(tx: Transaction) -> None:
    item = transaction_item(tx)
    # A chain file's way: pyrlp decodes the body, the strict rules read the fields.
    from_outside, tx_hash = decode_transaction(rlp.decode(rlp.encode(item)))
    # A store's way: the fast reader decodes the body, the trusted rules read the fields.
    from_store = transaction_of_record(decode_nested(rlp.encode([item]))[0], TRUSTED)  # type: ignore[index]
    assert from_outside == from_store == tx
    assert type(from_outside) is type(from_store) is type(tx)
    assert tx_hash == transaction_hash(tx)
    assert encode_transaction(from_store) == encode_transaction(tx)


@settings(max_examples=200, deadline=None)
@given(entries)
def test_the_one_access_list_reader_reads_both_ways_alike(given_entries: tuple[AccessListEntry, ...]
                                                          ) -> None:
    raw = rlp.encode([[e.address, list(e.storage_keys)] for e in given_entries])
    assert access_list(rlp.decode(raw), STRICT) == given_entries
    assert access_list(decode_nested(raw), TRUSTED) == given_entries


@pytest.mark.parametrize(("fields", "message"), [
    ([b"", b"", b"", b"\x01" * 19, b"", b"", b"", b"", b""], "recipient must be 20 bytes or empty"),
    ([b"\x00\x01", b"", b"", b"", b"", b"", b"", b"", b""], "integer with leading zero bytes"),
    ([b""] * 8, "legacy transaction has 9 fields, got 8"),
    ([b"", [], b"", b"", b"", b"", b"", b"", b""], "expected an RLP string for an integer"),
])
def test_outside_bytes_are_refused_as_before(fields: list[Any], message: str) -> None:
    """What eth_sendRawTransaction and import answer with (``rlp: <message>``) is unchanged."""
    with pytest.raises(DecodeError, match=message):
        decode_transaction(fields)


@pytest.mark.parametrize(("payload", "message"), [
    ([[b"\x01" * 20]], "access list entry must be [address, keys]"),
    ([[b"\x01" * 19, []]], "expected 20 bytes, got 19"),
    ([[b"\x01" * 20, [b"\x02" * 31]]], "expected 32 bytes, got 31"),
    (b"", "expected an RLP list"),
])
def test_a_bad_access_list_from_outside_is_refused(payload: Any, message: str) -> None:
    with pytest.raises(DecodeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        access_list(payload, STRICT)


@pytest.mark.parametrize("damaged", [
    [b"", b"", b"", b"", b"", [], b"", b"", b""],                   # a list where data belongs
    [b""] * 8,                                                      # a field short
    [b""] * 7 + [[b"\x01" * 20]] + [b""] * 3,                       # a type-1 entry of one item
])
def test_a_damaged_record_is_refused_never_misread(damaged: list[Any]) -> None:
    """The trusted rules check the shape, so a damaged store record raises (the store then
    reports it) instead of answering a wrong transaction."""
    envelope = damaged if len(damaged) != 11 else b"\x01" + rlp.encode(damaged)
    with pytest.raises(DecodeError):
        transaction_of_record(envelope, TRUSTED)
