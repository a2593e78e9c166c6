"""A read-only, history-only backend over a folder of Era1 and ``ere`` archive files.

Blocks are read from the memory-mapped files through their block indexes; hash lookups,
transaction locations, senders and the log index come from a SQLite sidecar
(:mod:`ethread.backends.era_index`). Archives hold no state: :meth:`EraBackend.evm_database`
raises :class:`~ethread.errors.StateUnavailable`.

Opening checks each file's name against its accumulator root (Era1) or last block's hash
(``ere``), reading only file tails. A folder may mix the two kinds, one file per epoch; an
``ere`` file of the ``noreceipts`` profile is set aside when a complete file holds its epoch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NoReturn

from ..backend import Pointer
from ..era1.accumulator import EPOCH_SIZE
from ..era1.archive import (
    ArchiveFile,
    archive_network_and_epoch,
    archive_paths,
    check_name,
    lacks_receipts,
    open_archive,
)
from ..era1.ere import EreFile
from ..errors import MissingBlocks, StateUnavailable, StoreError
from ..forks import ChainConfig, network_config
from ..home import era_index_path
from ..models import Address, Hash32
from ..progress import Progress
from . import summary
from .era_index import BuildReport, HistoryIndex
from .history import BlockRecord, CachedHistory, RawBlock

INDEX_NAME = "ethread-index.sqlite"


class _EraRecords:
    """History records from the files and from the sidecar index."""

    def __init__(self, backend: EraBackend) -> None:
        self._backend = backend
        self._index = backend._index
        self._file = backend._file

    def describe(self) -> str:
        return f"the Era1 archive {self._backend.folder}"

    def hash_at(self, number: int) -> Hash32 | None:
        if self._file(number) is None:
            return None
        return self._index.hash_at(number)

    def _held(self, block_hash: Hash32) -> tuple[ArchiveFile, int] | None:
        number = self._index.number_of(block_hash)
        era = self._file(number) if number is not None else None
        if era is None or number is None:
            return None
        return era, number

    def header_record(self, block_hash: Hash32) -> bytes | None:
        held = self._held(block_hash)
        return held[0].header_rlp(held[1]) if held is not None else None

    def _block_record(self, era: ArchiveFile, number: int) -> BlockRecord:
        return BlockRecord(era.header_rlp(number), era.body_rlp(number),
                           self._index.senders(number) or [])

    def block_record(self, block_hash: Hash32) -> BlockRecord | None:
        held = self._held(block_hash)
        return self._block_record(*held) if held is not None else None

    def block_and_receipts_records(self, block_hash: Hash32
                                   ) -> tuple[BlockRecord, bytes | None] | None:
        held = self._held(block_hash)
        if held is None:
            return None
        era, number = held
        return self._block_record(era, number), era.receipts_rlp(number)

    def receipts_record(self, block_hash: Hash32, number: int) -> bytes | None:
        era = self._file(number)
        return era.receipts_rlp(number) if era is not None else None

    def transaction_at(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        found = self._index.transaction(tx_hash)
        if found is None or self._file(found[0]) is None:  # indexed, but its file is gone
            return None
        block_hash = self._index.hash_at(found[0])
        return (block_hash, found[1]) if block_hash is not None else None

    def logs_record(self, number: int) -> bytes | None:
        return self._index.block_logs(number)

    def blocks_with_address(self, address: Address, lo: int, hi: int) -> Iterable[int]:
        return self._index.blocks_with_address(address, lo, hi)

    def blocks_with_topic(self, position: int, topic: Hash32, lo: int, hi: int) -> Iterable[int]:
        return self._index.blocks_with_topic(position, topic, lo, hi)

    def blocks_with_logs(self, lo: int, hi: int) -> Iterable[int]:
        return self._index.blocks_with_logs(lo, hi)


def default_index_path(folder: Path) -> Path:
    """Where the sidecar index of ``folder`` lives unless ``index_path`` says: in ethread's data
    folder (:func:`ethread.home.era_index_path`), not the often read-only archive folder; an
    index already beside the files (``ethread-index.sqlite``, from an older ethread) is used."""
    beside = folder / INDEX_NAME
    if beside.is_file():
        return beside
    return era_index_path(folder)


class EraBackend(CachedHistory):
    """Serves the blocks, transactions, receipts and logs of the Era1 and ``ere`` files in
    ``folder``.

    ``config`` defaults to that of the network the file names name, when known. Files new or
    changed since the index last held them are indexed first, by ``index_workers`` processes (see
    :meth:`HistoryIndex.build <ethread.backends.era_index.HistoryIndex.build>`); what that
    did is :attr:`index_report`.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        config: ChainConfig | None = None,
        index_path: str | Path | None = None,
        progress: Progress | None = None,
        cache_blocks: int = 4096,
        index_workers: int | None = None,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise StoreError(f"no Era1 folder at {self.folder}")
        self._files: dict[int, ArchiveFile] = {}
        self.set_aside: list[Path] = []
        """Files not served: an ``ere`` file of the ``noreceipts`` profile for an epoch that a
        complete file (Era1, or ``ere`` with receipts) of the folder also holds."""
        networks: set[str] = set()
        by_epoch: dict[int, list[Path]] = {}
        for path in archive_paths(self.folder):
            network, epoch = archive_network_and_epoch(path)
            by_epoch.setdefault(epoch, []).append(path)
            networks.add(network)
        for epoch, paths in sorted(by_epoch.items()):
            if len(paths) > 1:
                complete = [p for p in paths if not lacks_receipts(p)]
                if len(complete) != 1:
                    raise StoreError(f"{paths[1]}: a second file for epoch {epoch} (beside "
                                     f"{paths[0].name})")
                self.set_aside.extend(p for p in paths if p not in complete)
                paths = complete
            era: ArchiveFile = open_archive(paths[0])
            check_name(era)
            self._files[epoch] = era
        if not self._files:
            raise StoreError(f"no Era1 files (nor ere files) in {self.folder}")
        if len(networks) > 1:
            raise StoreError(f"{self.folder} mixes Era1 files of several networks: "
                             f"{', '.join(sorted(networks))}")
        self.network = networks.pop()
        self._config = config if config is not None else network_config(self.network)
        self._index = HistoryIndex(Path(index_path) if index_path else
                                   default_index_path(self.folder))
        self.index_report: BuildReport = self._index.build(self.files(), workers=index_workers,
                                                           progress=progress)
        """What opening did to the index: files indexed (and why, when indexed again)."""
        self._earliest = min(era.start for era in self._files.values())
        self._latest = max(era.end for era in self._files.values()) - 1
        super().__init__(_EraRecords(self), cache_blocks)

    @property
    def index_path(self) -> Path:
        """Where the SQLite sidecar index of the folder lives (see :func:`default_index_path`)."""
        return self._index.path

    def _location(self) -> dict[str, str]:
        kinds = [era.kind for era in self._files.values()]
        held = ", ".join(f"{kinds.count(k)} {'Era1' if k == 'era1' else k} files"
                         for k in ("era1", "ere") if k in kinds)
        if self.set_aside:
            held += f"; set aside, a complete file holds their epochs: " \
                f"{', '.join(p.name for p in self.set_aside)}"
        return {"folder": f"{self.folder} ({held})",
                "index": str(self.index_path)}

    def __repr__(self) -> str:
        return summary.backend_repr(self, "EraBackend", self._location())

    def _repr_html_(self) -> str:
        return summary.backend_html(self, "EraBackend", self._location())

    def close(self) -> None:
        """Close the archive files and the sidecar index."""
        for era in self._files.values():
            era.close()
        self._index.close()

    def __enter__(self) -> EraBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- archive access ------------------------------------------------------------------------

    def files(self) -> list[ArchiveFile]:
        """The open archive files (Era1 and ere), in block order."""
        return [self._files[epoch] for epoch in sorted(self._files)]

    def _file(self, number: int) -> ArchiveFile | None:
        era = self._files.get(number // EPOCH_SIZE)
        if era is None or not era.start <= number < era.end:
            return None
        return era

    def raw_blocks(self, start: int, stop: int, *, receipts: bool = True) -> Iterator[RawBlock]:
        """The records of blocks ``range(start, stop)`` (see :meth:`CachedHistory.raw_blocks`)."""
        missing = self.missing_ranges(start, stop)
        if missing:
            raise MissingBlocks(missing, f"the archive {self.folder}")
        for era in self.files():
            lo, hi = max(start, era.start), min(stop, era.end)
            if lo >= hi:
                continue
            senders = self._index.senders_between(lo, hi - 1)
            slim = isinstance(era, EreFile)  # slim receipts as stored: no bloom made for nothing
            read_receipts = era.slim_receipts_rlp if isinstance(era, EreFile) else era.receipts_rlp
            for number in range(lo, hi):
                yield RawBlock(number, era.header_rlp(number), era.body_rlp(number),
                               read_receipts(number) if receipts else None,
                               senders.get(number, b""), slim=slim)

    def file_ranges(self, start: int, stop: int) -> list[tuple[int, int]]:
        """``range(start, stop)`` cut at the files' edges: one ``(lo, hi)`` per file it meets."""
        return [(max(start, era.start), min(stop, era.end)) for era in self.files()
                if max(start, era.start) < min(stop, era.end)]

    def missing_ranges(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Inclusive ``(first, last)`` spans of ``range(start, stop)`` that no file holds."""
        missing: list[tuple[int, int]] = []
        number = start
        for era in self.files():
            if era.end <= number:
                continue
            if number >= stop:
                break
            if era.start > number:
                missing.append((number, min(era.start, stop) - 1))
            number = max(number, era.end)
        if number < stop:
            missing.append((number, stop - 1))
        return missing

    def total_difficulty(self, number: int) -> int | None:
        """Total difficulty through block ``number`` (what Era1 export needs)."""
        era = self._file(number)
        return era.total_difficulty(number) if era is not None else None

    def pointer(self, name: Pointer) -> int | None:
        """The earliest block held for ``earliest``, else the last (archived history is final)."""
        return self._earliest if name == "earliest" else self._latest

    def chain_config(self) -> ChainConfig | None:
        """The fork schedule given or found when the backend was opened, or None."""
        return self._config

    def evm_database(self) -> NoReturn:
        """Always raises :class:`~ethread.errors.StateUnavailable`: archives hold no state."""
        raise StateUnavailable(
            "the Era1 archive holds history only: no state to execute or prove against")

    def generation(self) -> int:
        """Always 1: archives do not change while open, so cached answers stay valid."""
        return 1
