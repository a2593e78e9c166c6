"""A dev chain's state in anvil's state-file shape (its ``SerializableState``): what
``anvil_dumpState`` and ``--dump-state`` write and ``anvil_loadState`` and ``--load-state`` read,
both ways between anvil and a dev chain. A loaded state's accounts are written in one block of
their own; its blocks and transactions are not imported. A dump carries the head's header.

A state trie keys accounts and slots by hash, so the chain remembers (:class:`Preimages`) every
account and slot its blocks, edits and genesis touched, to list them.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import InvalidParams
from ..models import Address, Header

MAX_STATE_BYTES = 512 * 1024 * 1024
"""The largest state (decompressed) :func:`parse_state` reads."""


@dataclass
class Preimages:
    """Addresses, and each address's storage slots, that the chain has touched."""

    slots: dict[Address, set[int]] = field(default_factory=dict)

    def add(self, address: Address, slots: Iterable[int] = ()) -> None:
        """Note ``address`` as touched, and ``slots`` of its storage with it."""
        self.slots.setdefault(address, set()).update(slots)

    def record_witness(self, witness: Any) -> None:
        """Every account and slot py-evm reports a block touched (its ``MetaWitness``)."""
        for address in witness.accounts_queried:
            self.add(bytes(address), witness.get_slots_queried(address))

    def record_system_writes(self, number: int, timestamp: int) -> None:
        """The slots py-evm writes outside any message (EIP-4788 beacon roots, EIP-2935 block hashes)."""
        from eth.vm.forks.cancun.constants import BEACON_ROOTS_ADDRESS, HISTORY_BUFFER_LENGTH
        from eth.vm.forks.prague.constants import HISTORY_SERVE_WINDOW, HISTORY_STORAGE_ADDRESS

        beacon_slot = timestamp % HISTORY_BUFFER_LENGTH
        self.add(bytes(BEACON_ROOTS_ADDRESS), (beacon_slot, beacon_slot + HISTORY_BUFFER_LENGTH))
        if number > 0:
            self.add(bytes(HISTORY_STORAGE_ADDRESS), ((number - 1) % HISTORY_SERVE_WINDOW,))

    def record_alloc(self, alloc: Mapping[str, Mapping[str, Any]]) -> None:
        """A genesis alloc (geth's form: hex addresses, ``storage`` of hex slots)."""
        for address, account in alloc.items():
            storage = account.get("storage") or {}
            self.add(_address(address), (int(slot, 16) for slot in storage))


@dataclass(frozen=True, slots=True)
class DumpedAccount:
    """One account of a state file."""

    address: Address
    nonce: int
    balance: int
    code: bytes
    storage: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class LoadedState:
    """A state file as read: its accounts, and its block's timestamp and number (or None)."""

    accounts: tuple[DumpedAccount, ...]
    timestamp: int | None
    best_block_number: int | None


def _word(value: int) -> str:
    return "0x" + value.to_bytes(32, "big").hex()


def state_document(head: Header, *, blob_gas_price: int,
                   accounts: Iterable[DumpedAccount]) -> dict[str, Any]:
    """The JSON document of the state after block ``head``, in anvil's names and number forms."""
    from ..codec.serialize import to_json

    header = to_json(head)
    header.pop("hash", None)
    return {
        "block": {
            "number": hex(head.number),
            "beneficiary": "0x" + head.coinbase.hex(),
            "timestamp": hex(head.timestamp),
            "gas_limit": head.gas_limit,
            "basefee": head.base_fee_per_gas or 0,
            "difficulty": hex(head.difficulty),
            "prevrandao": "0x" + head.mix_hash.hex(),
            "blob_excess_gas_and_price": {"excess_blob_gas": head.excess_blob_gas or 0,
                                          "blob_gasprice": blob_gas_price},
        },
        "accounts": {
            "0x" + account.address.hex(): {
                "nonce": account.nonce,
                "balance": hex(account.balance),
                "code": "0x" + account.code.hex(),
                "storage": {_word(slot): _word(value) for slot, value in account.storage},
            }
            for account in sorted(accounts, key=lambda a: a.address)
        },
        "best_block_number": head.number,
        "blocks": [{"header": header, "transactions": [], "ommers": []}],
        "transactions": [],
        "historical_states": None,
    }


def encode_state(document: Mapping[str, Any], *, compress: bool) -> bytes:
    """The document as JSON bytes; gzipped for anvil_dumpState (``compress``)."""
    raw = orjson.dumps(document)
    return gzip.compress(raw, mtime=0) if compress else raw


def parse_state(data: bytes | str | Mapping[str, Any]) -> LoadedState:
    """A state file (gzipped or plain JSON, or parsed) checked and read (else :class:`InvalidParams`)."""
    if isinstance(data, str):
        data = data.encode()
    document = _decode(bytes(data)) if isinstance(data, bytes | bytearray) else data
    if not isinstance(document, Mapping):
        raise InvalidParams("state: expected a JSON object with accounts")
    accounts = document.get("accounts")
    if not isinstance(accounts, Mapping):
        raise InvalidParams("state: no accounts object")
    loaded = tuple(_account(address, fields) for address, fields in accounts.items())
    block = document.get("block")
    timestamp = None
    if isinstance(block, Mapping) and block.get("timestamp") is not None:
        timestamp = _number(block["timestamp"], "block.timestamp")
    best = document.get("best_block_number")
    return LoadedState(loaded, timestamp,
                       None if best is None else _number(best, "best_block_number"))


def _decode(raw: bytes) -> Any:
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
                raw = unzipped.read(MAX_STATE_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise InvalidParams(f"state: not valid gzip ({exc})") from None
        if len(raw) > MAX_STATE_BYTES:
            raise InvalidParams(f"state: larger than {MAX_STATE_BYTES} bytes")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidParams(f"state: not valid JSON ({exc})") from None


def _address(text: Any) -> Address:
    if not isinstance(text, str) or text[:2] not in ("0x", "0X") or len(text) != 42:
        raise InvalidParams(f"state: {text!r} is not an address")
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        raise InvalidParams(f"state: {text!r} is not an address") from None


def _number(value: Any, what: str, bits: int = 256) -> int:
    """anvil writes some numbers as JSON numbers and some as hex strings (and reads both)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value, 16) if value[:2] in ("0x", "0X") else int(value)
        except ValueError:
            raise InvalidParams(f"state: {what}: {value!r} is not a number") from None
    else:
        raise InvalidParams(f"state: {what}: {value!r} is not a number")
    if not 0 <= number < 1 << bits:
        raise InvalidParams(f"state: {what}: out of range")
    return number


def _bytes(value: Any, what: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise InvalidParams(f"state: {what}: expected 0x-prefixed hex")
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        raise InvalidParams(f"state: {what}: invalid hex") from None


def _account(address: Any, fields: Any) -> DumpedAccount:
    where = f"accounts[{address}]"
    if not isinstance(fields, Mapping):
        raise InvalidParams(f"state: {where}: expected an object")
    storage = fields.get("storage") or {}
    if not isinstance(storage, Mapping):
        raise InvalidParams(f"state: {where}.storage: expected an object")
    return DumpedAccount(
        address=_address(address),
        nonce=_number(fields.get("nonce", 0), f"{where}.nonce", 64),
        balance=_number(fields.get("balance", 0), f"{where}.balance"),
        code=_bytes(fields.get("code"), f"{where}.code"),
        storage=tuple((_number(slot, f"{where}.storage key"),
                       _number(value, f"{where}.storage[{slot}]"))
                      for slot, value in storage.items()),
    )


__all__ = ["DumpedAccount", "LoadedState", "Preimages", "encode_state", "parse_state",
           "state_document"]
