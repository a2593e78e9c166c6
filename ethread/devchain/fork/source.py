"""The forked block's state, read from the remote node as needed and believed only once
checked: accounts and slots through ``eth_getProof`` against the state root, code against its
hash, headers against theirs. What is checked is kept (:mod:`.cache`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import orjson
import rlp
from eth_utils import keccak

from ...errors import ServerError
from ...models import Address, Hash32, Header, Kind
from ...proofs import ProofError, prove_value
from ...rlpcodec.headers import encode_header
from .cache import ForkCache, MemoryCache
from .remote import RemoteError, RemoteNode

EMPTY_CODE_HASH = keccak(b"")
BLANK_ROOT = keccak(rlp.encode(b""))


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """The remote block a dev chain continues from, and the node's URL (without path or query)."""

    chain_id: int
    header: Header
    url: str = ""

    @property
    def number(self) -> int:
        """The forked block's number."""
        return self.header.number

    @property
    def state_root(self) -> Hash32:
        """The forked block's state root, which every fetched value is checked against."""
        return self.header.state_root


@dataclass(frozen=True, slots=True)
class RemoteAccount:
    """An account as the forked block's state trie holds it."""

    nonce: int
    balance: int
    storage_root: Hash32
    code_hash: Hash32


def _hex_bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise RemoteError(f"the forked node's {what} is not hex")
    text = value[2:]
    try:
        return bytes.fromhex(text if len(text) % 2 == 0 else "0" + text)
    except ValueError:
        raise RemoteError(f"the forked node's {what} is not hex") from None


def _hex_int(value: Any, what: str) -> int:
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise RemoteError(f"the forked node's {what} is not a hex quantity")
    try:
        return int(value, 16)
    except ValueError:
        raise RemoteError(f"the forked node's {what} is not a hex quantity") from None


def header_from_json(block: Any) -> Header:
    """A header from a node's block object, checked against the hash the node gave."""
    if not isinstance(block, dict):
        raise RemoteError("the forked node does not hold the block asked for")
    values: dict[str, Any] = {}
    for item in fields(Header):
        key, kind = item.metadata.get("json"), item.metadata.get("kind")
        if key == "hash":
            continue
        raw = block.get(key)
        if raw is None:
            if item.metadata.get("omit_none"):
                values[item.name] = None
                continue
            raise RemoteError(f"the forked node's block has no {key}")
        what = str(key)
        values[item.name] = (_hex_int(raw, what) if kind is Kind.QUANTITY
                             else _hex_bytes(raw, what))
    header = Header(**values, hash=b"")
    computed = keccak(encode_header(header))
    claimed = _hex_bytes(block.get("hash"), "block hash")
    if computed != claimed:
        raise RemoteError(f"the forked node's block {header.number} does not hash to the hash "
                          f"it claims (0x{claimed.hex()}); its header has fields ethread does "
                          "not know")
    return Header(**values, hash=computed)


class ForkSource:
    """The state of one remote block, fetched lazily, checked, and kept."""

    def __init__(self, remote: RemoteNode, point: ForkPoint, cache: ForkCache | None = None,
                 ) -> None:
        self.remote = remote
        self.point = point
        self.cache: ForkCache = cache if cache is not None else MemoryCache()
        self._prefix = point.chain_id.to_bytes(8, "big") + point.number.to_bytes(8, "big")
        self._code_prefix = point.chain_id.to_bytes(8, "big")
        self._block = hex(point.number)
        self._lock = threading.Lock()
        self.fetched = 0
        """Remote calls made (for tests and the curious)."""

    @classmethod
    def connect(cls, remote: RemoteNode, block: int | None = None,
                cache: ForkCache | None = None) -> ForkSource:
        """The source of ``remote``'s block ``block`` (its latest when None); with the header
        cached, only eth_chainId is asked."""
        if block is None:
            chain_id_hex, head_hex = remote.batch([("eth_chainId", []), ("eth_blockNumber", [])])
            head = _hex_int(head_hex, "block number")
        else:
            chain_id_hex, head = remote.call("eth_chainId"), None
        chain_id = _hex_int(chain_id_hex, "chain id")
        number = head if block is None else block
        assert number is not None
        if number < 0:
            raise RemoteError(f"fork block {number}: a block number is not negative")
        kept = cache.get(_header_key(chain_id, number)) if cache is not None else None
        if kept is not None:
            header = header_from_json(orjson.loads(kept))
        else:
            found = remote.call("eth_getBlockByNumber", [hex(number), False])
            if found is None and head is None:
                head = _hex_int(remote.call("eth_blockNumber"), "block number")
            if head is not None and not 0 <= number <= head:
                raise RemoteError(f"fork block {number}: the forked node's latest block is {head}")
            header = header_from_json(found)
            if cache is not None:
                cache.put_many({_header_key(chain_id, number): orjson.dumps(found)})
        return cls(remote, ForkPoint(chain_id, header, remote.shown_url), cache)

    def ancestors(self, count: int = 256) -> list[Header]:
        """The ``count`` headers before the forked block (for BLOCKHASH), newest first, checked."""
        first = max(0, self.point.number - count)
        numbers = list(range(self.point.number - 1, first - 1, -1))
        chain_id = self.point.chain_id
        kept, missing = _kept(self.cache, {n: _header_key(chain_id, n) for n in numbers})
        fetched = self.remote.batch([("eth_getBlockByNumber", [hex(n), False]) for n in missing])
        if missing:
            self._count(len(missing))
            self.cache.put_many({_header_key(chain_id, n): orjson.dumps(b)
                                 for n, b in zip(missing, fetched, strict=True)})
        by_number = dict(zip(missing, fetched, strict=True))
        blocks = [orjson.loads(kept[n]) if n in kept else by_number[n] for n in numbers]
        headers = []
        child = self.point.header
        for block in blocks:
            header = header_from_json(block)
            if header.hash != child.parent_hash:
                raise RemoteError(f"the forked node's block {header.number} is not the parent "
                                  f"of its block {child.number}")
            headers.append(header)
            child = header
        return headers

    def account(self, address: Address) -> RemoteAccount | None:
        """The account at the forked block, or None when it does not exist there."""
        return self.accounts([address])[address]

    def accounts(self, addresses: Iterable[Address]) -> dict[Address, RemoteAccount | None]:
        """Several accounts, the missing ones fetched in batches (with their code)."""
        kept, missing = _kept(self.cache, {a: self._prefix + b"a" + a for a in addresses})
        found: dict[Address, RemoteAccount | None] = {a: _decode_account(v) for a, v in kept.items()}
        if missing:
            proofs = self.remote.batch([("eth_getProof", ["0x" + a.hex(), [], self._block])
                                        for a in missing])
            fresh: dict[bytes, bytes] = {}
            for address, proof in zip(missing, proofs, strict=True):
                encoded = _proven_account(address, proof, self.point.state_root, self.point.number)
                fresh[self._prefix + b"a" + address] = encoded
                found[address] = _decode_account(encoded)
            self._count(len(missing))
            self.cache.put_many(fresh)
        # Every account's code: code refused for not matching its hash is asked for again.
        self._fetch_code(list(found.items()))
        return found

    def proof(self, address: Address, keys: Sequence[bytes], number: int,
              state_root: Hash32) -> dict[str, Any]:
        """The node's eth_getProof answer at block ``number`` (at or before the fork), checked
        against ``state_root``, claims included; not kept."""
        answer: dict[str, Any] = self.remote.call(  # (checked to be one by _proven_account)
            "eth_getProof", ["0x" + address.hex(), ["0x" + key.hex() for key in keys], hex(number)])
        self._count(1)
        account = _decode_account(_proven_account(address, answer, state_root, number))
        storage_root = account.storage_root if account is not None else BLANK_ROOT
        for key, entry in zip(keys, _storage_entries(address, answer, len(keys)), strict=True):
            held = _proven_slot(address, storage_root, key.rjust(32, b"\0"), entry, f"0x{key.hex()}")
            if _hex_int(entry.get("value"), "storage value") != held:
                raise RemoteError(f"the forked node's answer for slot 0x{key.hex()} of "
                                  f"0x{address.hex()} claims a value its proof does not hold")
        return answer

    def code(self, code_hash: Hash32) -> bytes | None:
        """Code the source has fetched, by its hash."""
        if code_hash == EMPTY_CODE_HASH:
            return b""
        return self.cache.get(self._code_prefix + b"c" + code_hash)

    def _fetch_code(self, accounts: Sequence[tuple[Address, RemoteAccount | None]]) -> None:
        wanted = [(address, account.code_hash) for address, account in accounts
                  if account is not None and self.code(account.code_hash) is None]
        if not wanted:
            return
        codes = self.remote.batch([("eth_getCode", ["0x" + address.hex(), self._block])
                                   for address, _ in wanted])
        fresh = {}
        for (address, code_hash), text in zip(wanted, codes, strict=True):
            code = _hex_bytes(text, "code")
            if keccak(code) != code_hash:
                raise RemoteError(f"the forked node's code of 0x{address.hex()} does not match "
                                  "the code hash its account holds")
            fresh[self._code_prefix + b"c" + code_hash] = code
        self._count(len(wanted))
        self.cache.put_many(fresh)

    def storage(self, address: Address, slot: int) -> int:
        """The value of a storage slot of ``address`` at the forked block."""
        return self.storage_many(address, [slot])[slot]

    def storage_many(self, address: Address, slots: Iterable[int]) -> dict[int, int]:
        """Several slots of one account, the missing ones fetched in batches."""
        kept, missing = _kept(self.cache, {slot: self._slot_key(address, slot) for slot in slots})
        found = {slot: int.from_bytes(value, "big") for slot, value in kept.items()}
        if not missing:
            return found
        account = self.account(address)
        if account is None or account.storage_root == BLANK_ROOT:
            values = dict.fromkeys(missing, 0)
        else:
            values = self._proven_slots(address, account.storage_root, missing)
        self.cache.put_many({self._slot_key(address, slot): value.to_bytes(32, "big")
                             for slot, value in values.items()})
        found.update(values)
        return found

    def _proven_slots(self, address: Address, storage_root: Hash32,
                      slots: list[int]) -> dict[int, int]:
        per_call = 32
        groups = [slots[i:i + per_call] for i in range(0, len(slots), per_call)]
        answers = self.remote.batch([
            ("eth_getProof", ["0x" + address.hex(), ["0x" + s.to_bytes(32, "big").hex()
                                                     for s in group], self._block])
            for group in groups])
        self._count(len(groups))
        values: dict[int, int] = {}
        for group, answer in zip(groups, answers, strict=True):
            entries = _storage_entries(address, answer, len(group))
            for slot, entry in zip(group, entries, strict=True):
                values[slot] = _proven_slot(address, storage_root, slot.to_bytes(32, "big"), entry,
                                            hex(slot))
        return values

    def _slot_key(self, address: Address, slot: int) -> bytes:
        return self._prefix + b"s" + address + slot.to_bytes(32, "big")

    def _count(self, calls: int) -> None:
        with self._lock:
            self.fetched += calls


class ProofUnavailable(ServerError):
    """eth_getProof of a value a forked chain's local block holds unwritten (not under its state root)."""


_K = TypeVar("_K")


def _kept(cache: ForkCache, keys: Mapping[_K, bytes]) -> tuple[dict[_K, bytes], list[_K]]:
    """What ``cache`` holds under ``keys`` (by name), and the names it holds nothing under."""
    held = {name: cache.get(key) for name, key in keys.items()}
    return {n: v for n, v in held.items() if v is not None}, [n for n, v in held.items() if v is None]


def _header_key(chain_id: int, number: int) -> bytes:
    return chain_id.to_bytes(8, "big") + number.to_bytes(8, "big") + b"h"


def _proven_account(address: Address, answer: Any, state_root: Hash32, number: int) -> bytes:
    """The account record (empty: none) an eth_getProof answer proves, its claims checked too."""
    if not isinstance(answer, dict) or not isinstance(answer.get("accountProof"), list):
        raise RemoteError(f"the forked node's eth_getProof of 0x{address.hex()} is not a proof")
    nodes = [_hex_bytes(node, "proof node") for node in answer["accountProof"]]
    try:
        encoded = prove_value(state_root, keccak(address), nodes)
    except ProofError as exc:
        raise RemoteError(f"the forked node's proof of 0x{address.hex()} does not hold "
                          f"against block {number}'s state root: {exc}") from None
    check_claims(address, answer, _decode_account(encoded), number)
    return encoded


def _storage_entries(address: Address, answer: Any, count: int) -> list[Any]:
    entries = answer.get("storageProof") if isinstance(answer, dict) else None
    if not isinstance(entries, list) or len(entries) != count:
        raise RemoteError(f"the forked node's storage proof of 0x{address.hex()} does not "
                          "answer the slots asked for")
    return entries


def _proven_slot(address: Address, storage_root: Hash32, key: bytes, entry: Any, shown: str) -> int:
    """The value of slot ``key`` that one ``storageProof`` entry proves against ``storage_root``."""
    nodes = [_hex_bytes(node, "proof node") for node in entry.get("proof", [])]
    try:
        raw = prove_value(storage_root, keccak(key), nodes)
    except ProofError as exc:
        raise RemoteError(f"the forked node's proof of slot {shown} of 0x{address.hex()} does "
                          f"not hold: {exc}") from None
    return int.from_bytes(rlp.decode(raw), "big") if raw else 0


def check_claims(address: Address, answer: dict[str, Any], account: RemoteAccount | None,
                 number: int) -> None:
    """Refuse an eth_getProof answer whose claimed values are not what its own proof holds."""
    held = account or RemoteAccount(0, 0, BLANK_ROOT, EMPTY_CODE_HASH)
    claims = (("balance", held.balance, _hex_int), ("nonce", held.nonce, _hex_int),
              ("codeHash", held.code_hash, _hex_bytes), ("storageHash", held.storage_root, _hex_bytes))
    for key, value, parse in claims:
        claimed = answer.get(key)
        if claimed is None:
            continue
        if key in ("codeHash", "storageHash") and account is None:
            continue  # (geth writes zeros for an account that does not exist)
        if parse(claimed, key) != value:  # type: ignore[operator]
            raise RemoteError(f"the forked node's answer for account 0x{address.hex()} claims "
                              f"{key} {claimed}, but its proof against block {number}'s state "
                              f"root holds {value if isinstance(value, int) else '0x' + value.hex()}")


def _decode_account(encoded: bytes) -> RemoteAccount | None:
    if not encoded:
        return None
    nonce, balance, storage_root, code_hash = rlp.decode(encoded)
    return RemoteAccount(int.from_bytes(nonce, "big"), int.from_bytes(balance, "big"),
                         bytes(storage_root), bytes(code_hash))


__all__ = ["BLANK_ROOT", "EMPTY_CODE_HASH", "ForkPoint", "ForkSource", "ProofUnavailable",
           "RemoteAccount", "header_from_json"]
