"""A read-only, history-only backend over a folder of Era1 archive files.

Blocks are read straight from the memory-mapped files through their block indexes; what the
files cannot answer by number (hash lookups, transaction locations, senders, the log index)
comes from a SQLite sidecar built once per file (:mod:`ethread.backends.era_index`). Era1 holds no
state, so :meth:`EraBackend.evm_database` raises :class:`~ethread.errors.StateUnavailable`
and eth_call / eth_getProof answer an error.

Opening checks each file's name against its stored accumulator root (reading only the tail
of each file); the first open of a file also recomputes that root from all its headers while
building the sidecar.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from .. import canonical
from ..backend import LogQuery, Pointer
from ..encoding import DecodeError, decode_header
from ..era1.accumulator import EPOCH_SIZE
from ..era1.file import Era1File, Era1Name
from ..errors import StateUnavailable, StoreError
from ..forks import ChainConfig, network_config
from ..models import Block, Hash32, Header, Log, Receipt
from .cache import LRU
from .era_index import HistoryIndex, Progress
from .logindex import candidate_blocks, collect_logs, decode_block_logs, logs_of_receipts

T = TypeVar("T")

INDEX_NAME = "ethread-index.sqlite"


def default_index_path(folder: Path) -> Path:
    """Beside the files when the folder is writable, else in the user's cache directory
    (archives are often on read-only media)."""
    if os.access(folder, os.W_OK):
        return folder / INDEX_NAME
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return cache / "ethread" / "era1" / f"{digest}.sqlite"


class EraBackend:
    """Serves the blocks, transactions, receipts and logs of the Era1 files in ``folder``.

    ``config`` gives the chain config; without it the config of the network named in the
    file names is used when known (mainnet, sepolia). ``index_path`` overrides where the
    sidecar index lives.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        config: ChainConfig | None = None,
        index_path: str | Path | None = None,
        progress: Progress | None = None,
        cache_blocks: int = 4096,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise StoreError(f"no Era1 folder at {self.folder}")
        self._files: dict[int, Era1File] = {}
        networks: set[str] = set()
        for path in sorted(self.folder.glob("*.era1")):
            name = Era1Name.parse(path.name)
            if name is None:
                raise StoreError(f"{path}: not an Era1 file name "
                                 "(<network>-<epoch>-<root prefix>.era1)")
            era = Era1File(path)
            self._check_name(era, name)
            if name.epoch in self._files:
                raise StoreError(f"{path}: a second file for epoch {name.epoch}")
            self._files[name.epoch] = era
            networks.add(name.network)
        if not self._files:
            raise StoreError(f"no Era1 files in {self.folder}")
        if len(networks) > 1:
            raise StoreError(f"{self.folder} mixes Era1 files of several networks: "
                             f"{', '.join(sorted(networks))}")
        self.network = networks.pop()
        self._config = config if config is not None else network_config(self.network)
        self._index = HistoryIndex(Path(index_path) if index_path else
                                   default_index_path(self.folder))
        for era in self._files.values():
            self._index.ensure(era, progress)
        self._earliest = min(era.start for era in self._files.values())
        self._latest = max(era.end for era in self._files.values()) - 1
        self._headers: LRU[Hash32, Header] = LRU(cache_blocks * 4)
        self._blocks: LRU[Hash32, Block] = LRU(cache_blocks)
        self._receipts: LRU[Hash32, tuple[Receipt, ...]] = LRU(cache_blocks)

    @staticmethod
    def _check_name(era: Era1File, name: Era1Name) -> None:
        if era.start != name.epoch * EPOCH_SIZE:
            raise StoreError(f"{era.path}: holds blocks from {era.start}, but its name says "
                             f"epoch {name.epoch} (block {name.epoch * EPOCH_SIZE})")
        if era.accumulator()[:4].hex() != name.root_prefix:
            raise StoreError(f"{era.path}: accumulator root 0x{era.accumulator().hex()} does "
                             f"not match the name's {name.root_prefix}")

    def close(self) -> None:
        for era in self._files.values():
            era.close()
        self._index.close()

    def __enter__(self) -> EraBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- archive access ------------------------------------------------------------------------

    def files(self) -> list[Era1File]:
        return [self._files[epoch] for epoch in sorted(self._files)]

    def _file(self, number: int) -> Era1File | None:
        era = self._files.get(number // EPOCH_SIZE)
        if era is None or not era.start <= number < era.end:
            return None
        return era

    def total_difficulty(self, number: int) -> int | None:
        """Total difficulty through block ``number`` (what Era1 export needs)."""
        era = self._file(number)
        return era.total_difficulty(number) if era is not None else None

    def _decode(self, era: Era1File, number: int, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except (DecodeError, ValueError, IndexError) as exc:
            raise StoreError(f"{era.path}: block {number} does not decode: {exc}") from None

    # -- reading -------------------------------------------------------------------------------

    def canonical_hash(self, number: int) -> Hash32 | None:
        if self._file(number) is None:
            return None
        return self._index.hash_at(number)

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        header = self._headers.get(block_hash)
        if header is not None:
            return header
        number = self._index.number_of(block_hash)
        era = self._file(number) if number is not None else None
        if era is None or number is None:
            return None
        header = self._decode(era, number, decode_header, era.header_rlp(number))
        self._headers.put(block_hash, header)
        return header

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        block = self._blocks.get(block_hash)
        if block is not None:
            return block
        number = self._index.number_of(block_hash)
        era = self._file(number) if number is not None else None
        if era is None or number is None:
            return None
        senders = self._index.senders(number) or []
        block = self._decode(era, number, canonical.block_from_parts, era.header_rlp(number),
                             era.body_rlp(number), senders)
        self._blocks.put(block_hash, block)
        return block

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        found = self._index.transaction(tx_hash)
        if found is None or self._file(found[0]) is None:  # indexed, but its file is gone
            return None
        block_hash = self._index.hash_at(found[0])
        return (block_hash, found[1]) if block_hash is not None else None

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        cached = self._receipts.get(block_hash)
        if cached is not None:
            return cached
        block = self.block_by_hash(block_hash)
        if block is None:
            return None
        era = self._file(block.number)
        assert era is not None
        receipts = self._decode(era, block.number, canonical.receipts_from_consensus, block,
                                era.receipts_rlp(block.number), self._config)
        self._receipts.put(block_hash, receipts)
        return receipts

    def pointer(self, name: Pointer) -> int | None:
        # Archived history is final: safe and finalized are the last block held.
        return self._earliest if name == "earliest" else self._latest

    def chain_config(self) -> ChainConfig | None:
        return self._config

    def evm_database(self) -> NoReturn:
        raise StateUnavailable(
            f"the Era1 archive {self.folder} holds history only: no state to execute or prove "
            "against"
        )

    def generation(self) -> int:
        return 1  # archives never change while served

    def logs(self, query: LogQuery) -> list[Log]:
        index = self._index
        candidates = candidate_blocks(
            query,
            lambda address: lambda lo, hi: index.blocks_with_address(address, lo, hi),
            lambda position, topic: lambda lo, hi: index.blocks_with_topic(position, topic,
                                                                         lo, hi),
            index.blocks_with_logs,
        )
        return collect_logs(query, candidates, self._logs_at)

    def _logs_at(self, number: int) -> Iterable[Log]:
        record = self._index.block_logs(number)
        if record is not None:
            return decode_block_logs(number, record)
        return logs_of_receipts(self._receipts_at(number))

    def _receipts_at(self, number: int) -> Sequence[Receipt]:
        block_hash = self.canonical_hash(number)
        receipts = self.receipts(block_hash) if block_hash is not None else None
        if receipts is None:
            raise StoreError(f"the Era1 index of {self.folder} lists logs at block {number}, "
                             "which no file holds")
        return receipts
