"""What Era1 and ``ere`` files have in common, for readers that take either: :func:`open_archive`
opens a file by its extension, and :class:`ArchiveFile` is the set of calls both answer (a
component one kind lacks answers None).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from ..errors import StoreError
from ..models import Hash32
from .accumulator import EPOCH_SIZE
from .ere import EreFile, EreName
from .file import Era1File, Era1Name

SUFFIXES = (".era1", ".ere")


class ArchiveFile(Protocol):
    """One open archive file of consecutive blocks."""

    @property
    def kind(self) -> Literal["era1", "ere"]:
        """Which kind of file it is: ``"era1"`` or ``"ere"``."""

    @property
    def path(self) -> Path:
        """Where the file is."""

    @property
    def start(self) -> int:
        """The number of its first block."""

    @property
    def count(self) -> int:
        """How many blocks it holds."""

    @property
    def size(self) -> int:
        """Its length in bytes."""

    @property
    def end(self) -> int:
        """One past the last block number held."""

    def close(self) -> None:
        """Unmap the file."""

    def offset(self, number: int) -> int:
        """Where block ``number``'s records start (for error messages)."""

    def accumulator(self) -> Hash32 | None:
        """The accumulator root over its pre-merge blocks, or None when it has none."""

    def header_rlp(self, number: int) -> bytes:
        """The RLP header of block ``number``, decompressed."""

    def body_rlp(self, number: int) -> bytes:
        """The RLP block body of block ``number``, decompressed."""

    def receipts_rlp(self, number: int) -> bytes | None:
        """The RLP receipts of block ``number`` in consensus form, or None without receipts."""

    def total_difficulty(self, number: int) -> int | None:
        """The chain's total difficulty through block ``number``, or None when not held."""

    def raw_tuple(self, number: int) -> tuple[bytes, bytes, bytes | None, int | None]:
        """(header RLP, body RLP, receipts RLP or None, total difficulty or None) of one block."""


def is_archive(path: Path) -> bool:
    """Whether ``path`` names an Era1 or ``ere`` file (by its extension)."""
    return path.suffix in SUFFIXES


def archive_paths(folder: Path) -> list[Path]:
    """The Era1 and ``ere`` files of ``folder``, sorted by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and is_archive(p))


def lacks_receipts(path: Path) -> bool:
    """Whether the file's name says it holds no receipts (the ``ere`` ``noreceipts`` profile)."""
    name = EreName.parse(path.name) if path.suffix == ".ere" else None
    return name is not None and "noreceipts" in name.profiles


def open_archive(path: str | Path) -> Era1File | EreFile:
    """Open an Era1 or ``ere`` file, by its extension."""
    path = Path(path)
    return EreFile(path) if path.suffix == ".ere" else Era1File(path)


def archive_network_and_epoch(path: Path) -> tuple[str, int]:
    """The network and epoch a file's name gives; StoreError when it is not a standard name."""
    name: Era1Name | EreName | None
    if path.suffix == ".ere":
        name = EreName.parse(path.name)
        form = "<network>-<epoch>-<last block hash prefix>(-<profile>)*.ere"
    else:
        name = Era1Name.parse(path.name)
        form = "<network>-<epoch>-<root prefix>.era1"
    if name is None:
        raise StoreError(f"{path}: not an archive file name ({form})")
    return name.network, name.epoch


def check_name(archive: ArchiveFile) -> None:
    """Refuse a file that is not the one its name says: its first block must start the name's
    epoch, and the name's hex must match the accumulator root (Era1) or the last block's hash
    (``ere``). Reads only the file's tail and, for ``ere``, its last header."""
    path = archive.path
    _, epoch = archive_network_and_epoch(path)
    if archive.start != epoch * EPOCH_SIZE:
        raise StoreError(f"{path}: holds blocks from {archive.start}, but its name says "
                         f"epoch {epoch} (block {epoch * EPOCH_SIZE})")
    if isinstance(archive, EreFile):
        ere_name = EreName.parse(path.name)
        assert ere_name is not None
        last = archive.last_hash()
        if last[:4].hex() != ere_name.last_hash_prefix:
            raise StoreError(f"{path}: its last block's hash is 0x{last.hex()}, not the name's "
                             f"{ere_name.last_hash_prefix}")
        return
    era1_name = Era1Name.parse(path.name)
    root = archive.accumulator()
    assert era1_name is not None and root is not None
    if root[:4].hex() != era1_name.root_prefix:
        raise StoreError(f"{path}: accumulator root 0x{root.hex()} does "
                         f"not match the name's {era1_name.root_prefix}")
