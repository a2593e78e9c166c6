"""The ``ere`` archive format (Era execution files): e2store files of pre- and post-merge history.

Layout, by sections rather than by block::

    version | header* | body* | slim receipts* | proof* | total difficulty* | other* |
    accumulator? | dynamic block index

- headers and bodies are snappy-framed RLP, as in Era1;
- *slim* receipts are snappy-framed ``rlp([[type, status-or-root, cumulative gas, logs], ...])``
  (no bloom); proofs (optional) are snappy-framed ``rlp([proof type, ssz bytes])``;
- total difficulty (little-endian uint256) and the accumulator root (over pre-merge blocks)
  only for epochs that start before the merge, the final total difficulty repeated after it;
- the dynamic block index holds the first block number, one signed offset (relative to the
  index record) per component and block, then the component and block counts; which slot
  holds which component is read from the record types the first block's offsets point at.

File names are ``<network>-<epoch>-<first 4 bytes of the last block's hash>(-<profile>)*.ere``,
profiles sorted: ``noproofs``, ``noreceipts``. :class:`EreFile` answers the same calls as
:class:`~ethread.era1.file.Era1File` (receipts turned back into consensus encoding).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..bloom import logs_bloom as bloom_of_logs
from ..keccak import keccak256 as keccak
from ..models import Hash32
from ..rlpcodec.items import Nested, decode_list, encode_list_of_encoded, encode_nested
from . import e2store
from .accumulator import EPOCH_SIZE, accumulator_root
from .e2store import FormatError, MappedFile, encode_record, read_record, write_file
from .snappy import compress

SLIM_RECEIPTS = e2store.SLIM_RECEIPTS
PROOF = e2store.PROOF
DYNAMIC_INDEX = e2store.DYNAMIC_INDEX

COMPONENTS = ("header", "body", "receipts", "total_difficulty", "proof")
_KINDS = {
    e2store.COMPRESSED_HEADER: "header",
    e2store.COMPRESSED_BODY: "body",
    SLIM_RECEIPTS: "receipts",
    e2store.TOTAL_DIFFICULTY: "total_difficulty",
    PROOF: "proof",
}
_TYPE_OF = {kind: record_type for record_type, kind in _KINDS.items()}

PROOF_TYPES = {
    0: "BlockProofHistoricalHashesAccumulator",
    1: "BlockProofHistoricalRoots",
    2: "BlockProofHistoricalSummariesCapella",
    3: "BlockProofHistoricalSummariesDeneb",
}

_U64 = struct.Struct("<Q")
_NAME = re.compile(r"^(?P<network>[A-Za-z0-9_.-]+?)-(?P<epoch>\d{5,})-(?P<hash>[0-9a-f]{8})"
                   r"(?P<profiles>(?:-[a-z]+)*)\.ere$")


@dataclass(frozen=True, slots=True)
class EreName:
    """The parts of an ``ere`` file name."""

    network: str
    epoch: int
    last_hash_prefix: str
    """Hex of the first four bytes of the hash of the file's last block."""
    profiles: tuple[str, ...] = ()

    @classmethod
    def parse(cls, name: str) -> EreName | None:
        """The parts of an ``ere`` file name, or None if ``name`` is not one."""
        match = _NAME.match(name)
        if match is None:
            return None
        profiles = tuple(p for p in match["profiles"].split("-") if p)
        return cls(match["network"], int(match["epoch"]), match["hash"], profiles)

    def __str__(self) -> str:
        suffix = "".join(f"-{p}" for p in self.profiles)
        return f"{self.network}-{self.epoch:05d}-{self.last_hash_prefix}{suffix}.ere"


def ere_filename(network: str, epoch: int, last_hash: Hash32, *, proofs: bool = False,
                 receipts: bool = True) -> str:
    """The standard name of an epoch's ``ere`` file, with the profiles its contents call for."""
    profiles = tuple(p for p, absent in (("noproofs", not proofs), ("noreceipts", not receipts))
                     if absent)
    return str(EreName(network, epoch, last_hash[:4].hex(), profiles))


# -- slim receipts -------------------------------------------------------------------------------


def logs_bloom(logs: Sequence[Nested]) -> bytes:
    """The header-field bloom of consensus logs (``[address, [topics], data]``)."""
    return bloom_of_logs(logs).to_bytes(256, "big")  # type: ignore[arg-type]


def slim_to_consensus(slim: bytes) -> bytes:
    """``rlp([receipt, ...])`` in consensus form (as Era1 and the receipts trie hold them) from
    slim receipts: the bloom recomputed from the logs, typed receipts as envelopes."""
    items = decode_list(slim)
    out = []
    for item in items:
        if not isinstance(item, list) or len(item) != 4 or not isinstance(item[3], list):
            raise ValueError("a slim receipt is [type, status, cumulative gas, logs]")
        kind = item[0]
        if not isinstance(kind, bytes) or len(kind) > 1:
            raise ValueError("a slim receipt's type is one byte")
        fields = [item[1], item[2], logs_bloom(item[3]), item[3]]
        encoded = encode_nested(fields)
        out.append(encoded if not kind else encode_nested(kind + encoded))
    return encode_list_of_encoded(out)


def consensus_to_slim(consensus: bytes) -> bytes:
    """Slim receipts (what ``ere`` stores) from consensus receipts RLP."""
    slim = []
    for item in decode_list(consensus):
        if isinstance(item, bytes):
            if not item:
                raise ValueError("an empty typed receipt")
            kind, fields = item[0], decode_list(item[1:])
        else:
            kind, fields = 0, item
        if len(fields) != 4:
            raise ValueError("a receipt has 4 fields")
        slim.append([kind, fields[0], fields[1], fields[3]])
    return encode_nested(slim)


# -- reading -------------------------------------------------------------------------------------


class EreFile(MappedFile):
    """One open ``ere`` file, memory-mapped and read through its dynamic block index.

    Damage raises :class:`~ethread.era1.e2store.FormatError` naming the file and offset; a
    component the file lacks answers None."""

    kind: Literal["ere"] = "ere"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, e2store.HEADER_SIZE * 2 + 40, "an ere file")
        size, buf = self.size, self._map
        self.count = _U64.unpack_from(buf, size - 8)[0]
        self.components: int = _U64.unpack_from(buf, size - 16)[0]
        if not 1 <= self.count <= EPOCH_SIZE or not 2 <= self.components <= 5:
            raise FormatError(self._where, size - 16, "truncated or corrupted: the block index "
                              f"reads {self.count} blocks of {self.components} components")
        index_length = 8 + 8 * self.count * self.components + 16
        index_at = size - e2store.HEADER_SIZE - index_length
        index = read_record(buf, index_at, self._where, DYNAMIC_INDEX)
        if index.length != index_length:
            raise FormatError(self._where, index_at, "corrupted: block index length does not "
                              "match its counts")
        self.start = _U64.unpack_from(buf, index.data_offset)[0]
        relative = struct.unpack_from(f"<{self.count * self.components}q", buf,
                                      index.data_offset + 8)
        self._slots: dict[str, list[int]] = {}
        for slot in range(self.components):
            offsets = [index_at + r for r in relative[slot::self.components]]
            first = read_record(buf, offsets[0], self._where)
            kind = _KINDS.get(first.type)
            if kind is None:
                raise FormatError(self._where, offsets[0], f"corrupted: index slot {slot} points "
                                  f"at a record of unknown type 0x{first.type.hex()}")
            if kind in self._slots:
                raise FormatError(self._where, offsets[0], f"corrupted: two index slots hold "
                                  f"the {kind} component")
            self._slots[kind] = offsets
        for required in ("header", "body"):
            if required not in self._slots:
                raise FormatError(self._where, index_at, f"corrupted: the index has no "
                                  f"{required} component")
        self._accumulator_at: int | None = None
        at = index_at - e2store.HEADER_SIZE - 32
        if at > 0:
            kind, length, _ = e2store.HEADER.unpack_from(buf, at)
            if kind == e2store.ACCUMULATOR and length == 32:
                self._accumulator_at = at

    # -- what the file holds ----------------------------------------------------------------

    @property
    def has_receipts(self) -> bool:
        """Whether the file holds receipts (not the ``noreceipts`` profile)."""
        return "receipts" in self._slots

    @property
    def has_total_difficulty(self) -> bool:
        """Whether the file holds total difficulties (epochs that start before the merge)."""
        return "total_difficulty" in self._slots

    @property
    def has_proofs(self) -> bool:
        """Whether the file holds a proof per header."""
        return "proof" in self._slots

    def held_components(self) -> tuple[str, ...]:
        """The components each block has in this file, in :data:`COMPONENTS` order."""
        return tuple(c for c in COMPONENTS if c in self._slots)

    def accumulator(self) -> Hash32 | None:
        """The accumulator root over the file's pre-merge blocks, or None."""
        if self._accumulator_at is None:
            return None
        at = self._accumulator_at + e2store.HEADER_SIZE
        return self._map[at:at + 32]

    def offset(self, number: int) -> int:
        """Where block ``number``'s header record starts (for error messages)."""
        return self._slots["header"][self._position(number)]

    def _position(self, number: int) -> int:
        if not self.start <= number < self.end:
            raise KeyError(number)
        return number - self.start

    def _record(self, kind: str, number: int) -> e2store.Record | None:
        offsets = self._slots.get(kind)
        if offsets is None:
            return None
        return read_record(self._map, offsets[self._position(number)], self._where,
                           _TYPE_OF[kind])

    # -- per block ---------------------------------------------------------------------------

    def _inflated(self, kind: str, number: int) -> bytes | None:
        record = self._record(kind, number)
        return None if record is None else self._inflate(record)

    def header_rlp(self, number: int) -> bytes:
        """The RLP header of block ``number``, decompressed."""
        return self._inflated("header", number) or b""  # (every file holds headers)

    def body_rlp(self, number: int) -> bytes:
        """The RLP block body of block ``number``, decompressed."""
        return self._inflated("body", number) or b""  # (and bodies)

    def slim_receipts_rlp(self, number: int) -> bytes | None:
        """Block ``number``'s receipts as the file stores them (slim), or None without receipts."""
        return self._inflated("receipts", number)

    def receipts_rlp(self, number: int) -> bytes | None:
        """Block ``number``'s receipts in consensus form (blooms recomputed), or None."""
        slim = self.slim_receipts_rlp(number)
        if slim is None:
            return None
        try:
            return slim_to_consensus(slim)
        except ValueError as exc:
            record = self._record("receipts", number)
            assert record is not None
            raise FormatError(self._where, record.offset,
                              f"block {number}: slim receipts: {exc}") from None

    def total_difficulty(self, number: int) -> int | None:
        """The chain's total difficulty through block ``number``, or None when not held."""
        record = self._record("total_difficulty", number)
        if record is None:
            return None
        if record.length != 32:
            raise FormatError(self._where, record.offset, "corrupted: total difficulty is not "
                              "32 bytes")
        return int.from_bytes(self._map[record.data_offset:record.end], "little")

    def proof(self, number: int) -> tuple[int, bytes] | None:
        """(proof type, SSZ bytes) of block ``number``'s header proof, or None without proofs."""
        record = self._record("proof", number)
        if record is None:
            return None
        try:
            fields = decode_list(self._inflate(record))
            kind, data = fields
            if not isinstance(kind, bytes) or not isinstance(data, bytes):
                raise ValueError("not [type, bytes]")
        except ValueError as exc:
            raise FormatError(self._where, record.offset,
                              f"block {number}: proof is not rlp([type, ssz]): {exc}") from None
        return int.from_bytes(kind, "big"), data

    def raw_tuple(self, number: int) -> tuple[bytes, bytes, bytes | None, int | None]:
        """(header RLP, body RLP, consensus receipts RLP or None, total difficulty or None)."""
        return (self.header_rlp(number), self.body_rlp(number), self.receipts_rlp(number),
                self.total_difficulty(number))

    def last_hash(self) -> Hash32:
        """The hash of the file's last block (what its name abbreviates)."""
        return bytes(keccak(self.header_rlp(self.end - 1)))


# -- writing -------------------------------------------------------------------------------------


class EreWriter:
    """Collects consecutive blocks of one epoch, then writes an ``ere`` file.

    An epoch starting before the merge keeps a total difficulty per block and an accumulator
    (see the module docstring); receipts are all given or all absent (``noreceipts``). No
    proofs are written (``noproofs``): they need the beacon chain's historical roots."""

    def __init__(self, start: int) -> None:
        self.start = start
        self._headers: list[bytes] = []
        self._bodies: list[bytes] = []
        self._receipts: list[bytes] = []
        self._tds: list[int] = []
        self._pre_merge: list[tuple[Hash32, int]] = []
        self._final_td: int | None = None
        self._last: Hash32 | None = None
        self._with_receipts: bool | None = None

    @property
    def count(self) -> int:
        """Blocks added so far."""
        return len(self._headers)

    def add(self, block_hash: Hash32, header_rlp: bytes, body_rlp: bytes,
            receipts_rlp: bytes | None, difficulty: int, total_difficulty: int | None) -> None:
        """Append one block: ``receipts_rlp`` in consensus form (or None for a file without
        receipts); ``total_difficulty`` through this block for a proof-of-work block, None
        after the merge."""
        if self.count >= EPOCH_SIZE:
            raise ValueError(f"an ere file holds at most {EPOCH_SIZE} blocks")
        if self._with_receipts is None:
            self._with_receipts = receipts_rlp is not None
        elif self._with_receipts != (receipts_rlp is not None):
            raise ValueError("receipts must be given for every block of a file or for none")
        if (difficulty > 0) != (total_difficulty is not None):
            raise ValueError("a total difficulty goes with a proof-of-work block, and only there")
        if difficulty > 0:
            if self._final_td is not None or (self.count and not self._tds):
                raise ValueError(f"a proof-of-work block after the merge (block "
                                 f"{self.start + self.count})")
            assert total_difficulty is not None
            self._tds.append(total_difficulty)
            self._pre_merge.append((block_hash, total_difficulty))
        elif self._tds:
            if self._final_td is None:
                self._final_td = self._tds[-1]
            self._tds.append(self._final_td)
        self._headers.append(compress(header_rlp))
        self._bodies.append(compress(body_rlp))
        if receipts_rlp is not None:
            self._receipts.append(compress(consensus_to_slim(receipts_rlp)))
        self._last = block_hash

    @property
    def last_hash(self) -> Hash32 | None:
        """The hash of the last block added."""
        return self._last

    def finish(self) -> bytes:
        """The file's bytes."""
        if not self._headers:
            raise ValueError("an ere file holds at least one block")
        parts = [encode_record(e2store.VERSION, b"")]
        position = e2store.HEADER_SIZE
        sections: list[list[int]] = []
        for kind, items in ((e2store.COMPRESSED_HEADER, self._headers),
                            (e2store.COMPRESSED_BODY, self._bodies),
                            (SLIM_RECEIPTS, self._receipts),
                            (e2store.TOTAL_DIFFICULTY,
                             [td.to_bytes(32, "little") for td in self._tds])):
            if not items:
                continue
            offsets = []
            for data in items:
                offsets.append(position)
                record = encode_record(kind, data)
                parts.append(record)
                position += len(record)
            sections.append(offsets)
        if self._tds:
            record = encode_record(e2store.ACCUMULATOR, accumulator_root(self._pre_merge))
            parts.append(record)
            position += len(record)
        index_at = position
        index = [_U64.pack(self.start)]
        for block in range(self.count):
            index.extend(struct.pack("<q", offsets[block] - index_at) for offsets in sections)
        index.append(_U64.pack(len(sections)))
        index.append(_U64.pack(self.count))
        parts.append(encode_record(DYNAMIC_INDEX, b"".join(index)))
        return b"".join(parts)

    def write(self, folder: str | Path, network: str) -> Path:
        """Write the file into ``folder`` under its standard name, atomically."""
        data = self.finish()
        assert self._last is not None
        return write_file(folder, ere_filename(network, self.start // EPOCH_SIZE, self._last,
                                               receipts=bool(self._with_receipts)), data)
