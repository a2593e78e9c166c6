"""frames/abi.py: events read from a contract ABI (their topic0 checked against the well-known
ERC-20 and ERC-721 ones), logs built here with eth-abi's encoder decoded back to their
arguments, logs that do not fit their event kept with ``decoded`` False, and the extra
columns: one per argument, renamed where it would clash, of the kind its type calls for."""

from __future__ import annotations

import json
from typing import Any

import eth_abi
import pytest
from eth_hash.auto import keccak

from ethread.frames import abi, columns

TRANSFER_TOPIC = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
APPROVAL_TOPIC = bytes.fromhex("8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925")
"""keccak of ``Transfer(address,address,uint256)`` and ``Approval(address,address,uint256)``:
the topic0 every ERC-20 (and ERC-721) log carries."""

ERC20 = [
    {"type": "function", "name": "transfer", "inputs": [{"name": "to", "type": "address"},
                                                        {"name": "value", "type": "uint256"}]},
    {"type": "event", "name": "Transfer", "anonymous": False, "inputs": [
        {"name": "from", "type": "address", "indexed": True},
        {"name": "to", "type": "address", "indexed": True},
        {"name": "value", "type": "uint256", "indexed": False}]},
    {"type": "event", "name": "Approval", "inputs": [
        {"name": "owner", "type": "address", "indexed": True},
        {"name": "spender", "type": "address", "indexed": True},
        {"name": "value", "type": "uint256", "indexed": False}]},
    {"type": "event", "name": "Hidden", "anonymous": True, "inputs": []},
]

ALICE, BOB = "0x" + "a1" * 20, "0x" + "b0" * 20


def _topic(abi_type: str, value: Any) -> bytes:
    return eth_abi.encode([abi_type], [value])


@pytest.mark.parametrize(("item", "written"), [
    ({"type": "uint256"}, "uint256"),
    ({"type": "address[]"}, "address[]"),
    ({"type": "tuple", "components": [{"type": "uint8"}, {"type": "bytes"}]}, "(uint8,bytes)"),
    ({"type": "tuple[2][]", "components": [{"type": "bool"}]}, "(bool)[2][]"),
    ({"type": "tuple", "components": [{"type": "tuple", "components": [{"type": "string"}]},
                                      {"type": "int8"}]}, "((string),int8)"),
])
def test_canonical_type_expands_tuples(item: dict[str, Any], written: str) -> None:
    assert abi.canonical_type(item) == written


@pytest.mark.parametrize("given", [ERC20, json.dumps(ERC20), json.dumps(ERC20).encode()])
def test_an_abi_gives_its_named_events_with_their_well_known_topics(given: Any) -> None:
    events = abi.parse_abi(given)
    assert [(e.name, e.signature, e.topic0) for e in events] == [
        ("Transfer", "Transfer(address,address,uint256)", TRANSFER_TOPIC),
        ("Approval", "Approval(address,address,uint256)", APPROVAL_TOPIC)]
    assert events[0].inputs == (("from", "address", True), ("to", "address", True),
                                ("value", "uint256", False))


def test_a_single_event_entry_and_unnamed_arguments() -> None:
    (event,) = abi.parse_abi({"type": "event", "name": "Ping", "inputs": [
        {"type": "uint8", "indexed": True}, {"name": "", "type": "string"}]})
    assert event.inputs == (("arg0", "uint8", True), ("arg1", "string", False))
    assert event.topic0 == keccak(b"Ping(uint8,string)")


@pytest.mark.parametrize("given", [[], [ERC20[0]], [ERC20[3]]])
def test_an_abi_without_a_named_event_is_refused(given: Any) -> None:
    with pytest.raises(ValueError, match=r"^the ABI given holds no non-anonymous event$"):
        abi.parse_abi(given)


def test_an_erc20_transfer_decodes_to_its_arguments() -> None:
    transfer = abi.parse_abi(ERC20)[0]
    topics = [TRANSFER_TOPIC, _topic("address", ALICE), _topic("address", BOB)]
    assert transfer.decode(topics, eth_abi.encode(["uint256"], [10**30])) == {
        "from": ALICE, "to": BOB, "value": 10**30}


@pytest.mark.parametrize(("topics", "data"), [
    # an ERC-721 Transfer: the same topic0, the token id indexed as a third topic, no data
    ([TRANSFER_TOPIC, _topic("address", ALICE), _topic("address", BOB), _topic("uint256", 7)], b""),
    ([TRANSFER_TOPIC, _topic("address", ALICE)], _topic("uint256", 1)),  # a topic short
    ([TRANSFER_TOPIC, _topic("address", ALICE), _topic("address", BOB)], b"\x01" * 5),  # data short
])
def test_a_log_that_does_not_fit_its_event_is_none(topics: list[bytes], data: bytes) -> None:
    assert abi.parse_abi(ERC20)[0].decode(topics, data) is None


def test_an_event_without_data_arguments_refuses_data() -> None:
    (event,) = abi.parse_abi({"type": "event", "name": "Flag", "inputs": [
        {"name": "who", "type": "address", "indexed": True}]})
    topics = [event.topic0, _topic("address", ALICE)]
    assert event.decode(topics, b"") == {"who": ALICE}
    assert event.decode(topics, b"\x00" * 32) is None


def test_dynamic_indexed_arguments_keep_the_topic_hash_and_arrays_their_repr() -> None:
    (event,) = abi.parse_abi({"type": "event", "name": "Named", "inputs": [
        {"name": "name", "type": "string", "indexed": True},
        {"name": "ids", "type": "uint16[]"},
        {"name": "note", "type": "string"},
        {"name": "ok", "type": "bool"}]})
    name_hash = keccak(b"alice")
    data = eth_abi.encode(["uint16[]", "string", "bool"], [[1, 2, 3], "hello", True])
    assert event.decode([event.topic0, name_hash], data) == {
        "name": name_hash, "ids": repr((1, 2, 3)), "note": "hello", "ok": True}


def test_decoded_columns_one_per_argument_and_every_log_kept() -> None:
    events = abi.parse_abi(ERC20)
    value = eth_abi.encode(["uint256"], [5])
    logs: list[tuple[bytes | None, list[bytes], bytes]] = [
        (TRANSFER_TOPIC, [TRANSFER_TOPIC, _topic("address", ALICE), _topic("address", BOB)], value),
        (APPROVAL_TOPIC, [APPROVAL_TOPIC, _topic("address", BOB), _topic("address", ALICE)], value),
        (keccak(b"Other()"), [keccak(b"Other()")], b""),  # an event the ABI does not know
        (None, [], b"anonymous"),  # a log without topics
        (TRANSFER_TOPIC, [TRANSFER_TOPIC], b""),  # known, but does not fit
    ]
    out = abi.decoded_columns(events, {"address", "data"}, logs)
    assert list(out) == ["event", "decoded", "from", "to", "value", "owner", "spender"]
    values = {name: column[1] for name, column in out.items()}
    assert values == {
        "event": ["Transfer", "Approval", None, None, "Transfer"],
        "decoded": [True, True, False, False, False],
        "from": [ALICE, None, None, None, None],
        "to": [BOB, None, None, None, None],
        "value": [5, 5, None, None, None],
        "owner": [None, BOB, None, None, None],
        "spender": [None, ALICE, None, None, None]}
    kinds = {name: column[0] for name, column in out.items()}
    assert kinds["event"] is columns.string and kinds["decoded"] is columns.boolean
    assert kinds["from"] is columns.string and kinds["value"] is columns.wide


def test_column_names_that_clash_are_renamed() -> None:
    events = abi.parse_abi([
        {"type": "event", "name": "A", "inputs": [{"name": "amount", "type": "uint8"},
                                                  {"name": "data", "type": "bytes"}]},
        {"type": "event", "name": "B", "inputs": [{"name": "amount", "type": "int128"}]},
    ])
    out = abi.decoded_columns(events, {"data"}, [
        (events[0].topic0, [events[0].topic0], eth_abi.encode(["uint8", "bytes"], [3, b"\x01\x02"])),
        (events[1].topic0, [events[1].topic0], eth_abi.encode(["int128"], [-4])),
    ])
    assert {name: column[1] for name, column in out.items()} == {
        "event": ["A", "B"], "decoded": [True, True], "A.amount": [3, None],
        "arg_data": [b"\x01\x02", None], "B.amount": [None, -4]}
    assert out["A.amount"][0] is columns.uint64 and out["B.amount"][0] is columns.wide
    assert out["arg_data"][0] is columns.binary


@pytest.mark.parametrize(("abi_type", "indexed", "kind"), [
    ("uint8", False, "uint64"), ("uint64", True, "uint64"), ("uint72", False, "wide"),
    ("int64", False, "int64"), ("int256", True, "wide"), ("bool", False, "boolean"),
    ("address", True, "string"), ("bytes32", True, "binary"), ("bytes", False, "binary"),
    ("bytes", True, "hex_string"), ("string", True, "hex_string"), ("string", False, "string"),
    ("uint8[]", True, "hex_string"), ("uint8[]", False, "string"), ("(uint8,bool)", False, "string"),
])
def test_each_argument_type_has_its_column_kind(abi_type: str, indexed: bool, kind: str) -> None:
    (event,) = abi.parse_abi({"type": "event", "name": "E", "inputs": [
        {"name": "x", "type": abi_type, "indexed": indexed}]} if not abi_type.startswith("(") else {
        "type": "event", "name": "E", "inputs": [{"name": "x", "type": "tuple", "indexed": indexed,
                                                  "components": [{"type": "uint8"}, {"type": "bool"}]}]})
    out = abi.decoded_columns([event], set(), [])
    assert out["x"][0] is getattr(columns, kind)
