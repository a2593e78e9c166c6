"""Import a chain: genesis, then every block executed with py-evm and validated.

Each block's header is checked against its parent, its uncles against recent ancestors, its seal
unless ``verify_seals`` is off, and every root and total it claims against its execution. The
first invalid block stops the import (:class:`~ethread.errors.ImportFailed` naming the block and
the field); the backend keeps every block before it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import rlp
from eth.abc import BlockHeaderAPI, ChainDatabaseAPI
from eth_typing import Hash32
from eth_utils import ValidationError, encode_hex

from ..backend import WritableBackend
from ..codec.stored_answers import keep_answers
from ..errors import GenesisError, ImportFailed
from ..evm.block_vm import vm_at
from ..evm.senders import with_sender
from ..forks import ChainConfig
from ..models import Block, Header, Receipt
from ..progress import Progress
from ..rlpcodec.assemble import build_receipts
from ..rlpcodec.blocks import decode_block
from ..rlpcodec.headers import decode_header, encode_header, header_from_fields
from ..rlpcodec.items import DecodeError, TruncatedRLP, split_concatenated
from .genesis import Genesis, load_genesis

MAX_UNCLE_DEPTH = 6
"""Generations back an uncle may come from (the yellow paper's 6)."""


def import_chain(
    backend: WritableBackend,
    genesis_path: str | Path | Genesis,
    blocks_path: str | Path | None = None,
    *,
    verify_seals: bool = True,
    progress: Progress | None = None,
) -> int:
    """Import ``genesis_path`` (a geth-style genesis.json) and the blocks of ``blocks_path``
    (concatenated RLP, as ``geth export`` writes) into ``backend``; the number imported. Blocks
    the backend already holds are skipped, so an interrupted import resumes.
    """
    genesis = genesis_path if isinstance(genesis_path, Genesis) else load_genesis(genesis_path)
    importer = ChainImporter(backend, genesis, verify_seals=verify_seals)
    if blocks_path is None:
        return 0
    try:
        data = Path(blocks_path).read_bytes()
    except OSError as exc:
        raise GenesisError(f"cannot read blocks file {blocks_path}: {exc.strerror}") from None
    try:
        raw_blocks = split_concatenated(data)
    except TruncatedRLP as exc:
        number = _number_after(exc.complete)
        raise ImportFailed(number, "rlp", f"{blocks_path}: cut short or malformed from byte "
                           f"{exc.position} of {len(data)}; the {len(exc.complete)} block(s) "
                           "before it are whole") from None
    return importer.import_blocks(raw_blocks, progress=progress)


def _number_after(complete: list[bytes]) -> int | None:
    """The number of the block after the last of ``complete`` (None when unknown)."""
    try:
        return header_from_fields(rlp.decode(complete[-1])[0]).number + 1 if complete else None
    except (rlp.DecodingError, DecodeError, IndexError, TypeError):
        return None


class ChainImporter:
    """Executes blocks on top of a backend's head. Also used by the dev chain builder."""

    def __init__(self, backend: WritableBackend, genesis: Genesis, *, verify_seals: bool = True):
        self.backend = backend
        self.config: ChainConfig = genesis.config
        self.verify_seals = verify_seals
        self.chaindb: ChainDatabaseAPI = backend.evm_database()
        self._ensure_genesis(genesis)

    @classmethod
    def from_checkpoint(cls, backend: WritableBackend, config: ChainConfig, header: Header,
                        ancestors: Sequence[Header] = ()) -> ChainImporter:
        """An importer for a chain starting at a block taken on trust (a fork's ``header``): an empty
        store gets it, without a body, as its first block; ``ancestors`` (newest first) are kept
        for BLOCKHASH."""
        importer = cls.__new__(cls)
        importer.backend = backend
        importer.config = config
        importer.verify_seals = False
        importer.chaindb = backend.evm_database()
        if backend.canonical_hash(header.number) == header.hash:
            return importer
        if backend.pointer("latest") is not None:
            raise GenesisError("the store already holds a chain: a fork needs an empty one")
        raw_header = encode_header(header)
        with backend.import_batch():
            db = importer.chaindb.db
            for ancestor in ancestors:
                db[ancestor.hash] = encode_header(ancestor)
            db[header.hash] = raw_header
            evm_header = importer.chaindb.get_block_header_by_hash(Hash32(header.hash))
            importer.chaindb.persist_checkpoint_header(evm_header, header.difficulty + 1)
            backend.store_chain_config(config)
            write_block(backend, _bodiless(header, raw_header), ())
        return importer

    def _ensure_genesis(self, genesis: Genesis) -> None:
        config = self.config
        vm_class = config.vm_class(0, genesis.header_params["timestamp"])
        stored = self.backend.chain_config()
        if stored is not None and stored.chain_id != config.chain_id:
            raise GenesisError(f"the store holds chain {stored.chain_id}, the genesis is for "
                               f"{config.chain_id}")
        existing = self.backend.canonical_hash(0)
        with self.backend.import_batch():
            from eth.chains.base import Chain

            chain_class = Chain.configure(
                __name__="GenesisChain", vm_configuration=((0, vm_class),),
                chain_id=config.chain_id,
            )
            if existing is not None:
                # Build the genesis apart to compare: the store's must be the same block.
                from eth.db.atomic import AtomicDB

                scratch = chain_class.from_genesis(AtomicDB(), genesis.header_params, genesis.alloc)  # type: ignore[arg-type]
                computed = scratch.get_canonical_head().hash
                if existing != computed:
                    raise GenesisError(f"the store's genesis is {encode_hex(existing)}, the genesis file "
                                       f"gives {encode_hex(computed)}")
                return
            chain = chain_class.from_genesis(self.chaindb.db, genesis.header_params, genesis.alloc)  # type: ignore[arg-type]
            raw_header = rlp.encode(chain.get_canonical_head())
            self.backend.store_chain_config(config)
            write_block(self.backend, _bodiless(decode_header(raw_header), raw_header), ())

    def import_blocks(self, raw_blocks: Iterable[bytes], *, progress: Progress | None = None) -> int:
        """Execute and store RLP-encoded blocks in order; how many were new (held ones are skipped)."""
        raw_list = list(raw_blocks)
        done = 0
        for position, raw in enumerate(raw_list):
            if self.import_block(raw):
                done += 1
            if progress is not None:
                progress(position + 1, len(raw_list))
        return done

    def import_block(self, raw: bytes, *, parent_state_root: bytes | None = None,
                     senders: Mapping[bytes, bytes] | None = None) -> bool:
        """Execute, validate and store one block; False when the backend already had it.

        For a dev chain: ``parent_state_root``, the parent's state with test edits, to execute
        on; ``senders`` (transaction hash to address), its impersonated accounts' transactions.
        """
        try:
            items = rlp.decode(raw)
            header = header_from_fields(items[0])
        except (rlp.DecodingError, DecodeError, IndexError, TypeError) as exc:
            raise ImportFailed(None, "rlp", str(exc)) from None
        number = header.number
        if self.backend.canonical_hash(number) == header.hash:
            return False
        self._check_parent(header)
        vm_class = self.config.vm_class(number, header.timestamp)
        try:
            evm_block = rlp.decode(raw, sedes=vm_class.get_block_class())
            if senders:
                spoof_senders(evm_block.transactions, senders)
        except (rlp.DeserializationError, rlp.DecodingError, ValueError) as exc:
            raise ImportFailed(number, "rlp", str(exc)) from None
        evm_parent = self.chaindb.get_block_header_by_hash(Hash32(header.parent_hash))
        with self.backend.import_batch():
            self._validate_header(vm_class, evm_block, evm_parent, number)
            self._validate_uncles(evm_block, header, items, number)
            start = vm_class.create_header_from_parent(evm_parent, timestamp=header.timestamp)
            if parent_state_root is not None:
                start = start.copy(state_root=parent_state_root)
            vm = vm_at(vm_class, start.copy(gas_used=evm_block.header.gas_used), self.chaindb,
                       self.config.chain_id)
            try:
                result = vm.import_block(evm_block).block
            except (ValidationError, ValueError, AssertionError) as exc:
                raise ImportFailed(number, "transactions", str(exc)) from None
            self._compare(header, decode_header(rlp.encode(result.header)))
            self._store(raw, items, result, vm_class, [tx.sender for tx in evm_block.transactions])
        return True

    def store_executed(self, raw: bytes, result: Any, senders: Sequence[bytes], *,
                       check_header: bool = True) -> None:
        """Store a dev chain's block just executed on the head's state (``result``: py-evm's block),
        without executing it again. Its header is checked against its parent unless
        ``check_header`` is False (a gas limit or base fee a test set)."""
        items = rlp.decode(raw)
        header = header_from_fields(items[0])
        number = header.number
        self._check_parent(header)
        vm_class = self.config.vm_class(number, header.timestamp)
        evm_parent = self.chaindb.get_block_header_by_hash(Hash32(header.parent_hash))
        with self.backend.import_batch():
            if check_header:
                self._validate_header(vm_class, result, evm_parent, number)
            self._store(raw, items, result, vm_class, senders)

    def _check_parent(self, header: Header) -> None:
        parent = self.backend.header_by_hash(header.parent_hash)
        if parent is None or parent.number != self.backend.pointer("latest"):
            raise ImportFailed(header.number, "parentHash",
                               f"parent {encode_hex(header.parent_hash)} is not the head")

    def _store(self, raw: bytes, items: Any, result: Any, vm_class: Any,
               senders: Sequence[bytes]) -> None:
        evm_receipts = list(self.chaindb.get_receipts(result.header, vm_class.get_receipt_builder()))
        block = decode_block(raw, items, senders)
        receipts = build_receipts(block, evm_receipts, self.config)
        self.chaindb.persist_header(result.header)
        write_block(self.backend, block, receipts)

    def _validate_header(self, vm_class: Any, evm_block: Any, evm_parent: BlockHeaderAPI,
                         number: int) -> None:
        try:
            vm_class.validate_header(evm_block.header, evm_parent)
        except ValidationError as exc:
            raise ImportFailed(number, "header", str(exc)) from None
        if self.verify_seals:
            self._validate_seal(vm_class, evm_block.header, number, "nonce")

    def _validate_seal(self, vm_class: Any, evm_header: Any, number: int, field: str) -> None:
        consensus = vm_class.consensus_class(None)
        try:
            consensus.validate_seal(evm_header)
        except ValidationError as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
            raise ImportFailed(number, field, f"proof-of-work seal: {first_line} (a chain whose "
                               "blocks carry no real proof-of-work seal, such as a dev chain or "
                               "test fixture, imports with --no-verify-seals, in Python "
                               "verify_seals=False)") from None

    def _validate_uncles(self, evm_block: Any, header: Header, items: list[Any], number: int) -> None:
        uncles = [header_from_fields(u) for u in items[2]]
        if not uncles:
            return
        if len(uncles) > 2:
            raise ImportFailed(number, "uncles", f"{len(uncles)} uncles, at most 2 allowed")
        if len({u.hash for u in uncles}) != len(uncles):
            raise ImportFailed(number, "uncles", "duplicate uncle")
        ancestors: dict[bytes, Block] = {}
        cursor = header.parent_hash
        for _ in range(MAX_UNCLE_DEPTH + 1):
            ancestor = self.backend.block_by_hash(cursor)
            if ancestor is None:
                break
            ancestors[ancestor.hash] = ancestor
            if ancestor.number == 0:
                break
            cursor = ancestor.header.parent_hash
        included = {u.hash for b in ancestors.values() for u in b.uncles}
        for uncle, evm_uncle in zip(uncles, evm_block.uncles, strict=True):
            if uncle.hash in included:
                raise ImportFailed(number, "uncles", f"uncle {encode_hex(uncle.hash)} already included")
            if uncle.hash in ancestors:
                raise ImportFailed(number, "uncles", f"uncle {encode_hex(uncle.hash)} is an ancestor")
            if uncle.parent_hash not in ancestors or uncle.parent_hash == header.parent_hash:
                raise ImportFailed(number, "uncles",
                                   f"uncle {encode_hex(uncle.hash)} has no recent ancestor as parent")
            uncle_vm = self.config.vm_class(uncle.number, uncle.timestamp)
            uncle_parent = self.chaindb.get_block_header_by_hash(Hash32(uncle.parent_hash))
            try:
                uncle_vm.validate_uncle(evm_block, evm_uncle, uncle_parent)
            except ValidationError as exc:
                raise ImportFailed(number, "uncles", str(exc)) from None
            if self.verify_seals:
                self._validate_seal(uncle_vm, evm_uncle, number, "uncles")

    @staticmethod
    def _compare(claimed: Header, computed: Header) -> None:
        """Name the first header field where the block disagrees with its execution."""
        for f in dataclasses.fields(Header):
            if f.name == "hash":
                continue
            want, got = getattr(claimed, f.name), getattr(computed, f.name)
            if want != got:
                raise ImportFailed(claimed.number, f.metadata["json"],
                                   f"block says {_show(want)}, execution gives {_show(got)}")
        if encode_header(claimed) != encode_header(computed):  # pragma: no cover - same fields
            raise ImportFailed(claimed.number, "header", "encoding differs")


def _bodiless(header: Header, header_rlp: bytes) -> Block:
    """The block of ``header`` with an empty body (a genesis, a fork's checkpoint)."""
    withdrawals = () if header.withdrawals_root is not None else None
    raw = rlp.encode([rlp.decode(header_rlp), [], []] + ([[]] if withdrawals is not None else []))
    return Block(header=header, transactions=(), uncles=(), withdrawals=withdrawals, size=len(raw))


def write_block(backend: WritableBackend, block: Block, receipts: Sequence[Receipt]) -> None:
    """Store a block and the answers kept beside it (:func:`~ethread.codec.stored_answers.keep_answers`),
    in the batch the caller holds open."""
    backend.write_block(block, receipts)
    keep_answers(backend, block, receipts)


def spoof_senders(transactions: Iterable[Any], senders: Mapping[bytes, bytes]) -> None:
    """Make py-evm transactions whose hash is in ``senders`` answer that sender (impersonation)."""
    for tx in transactions:
        sender = senders.get(bytes(tx.hash))
        if sender is not None:
            with_sender(tx, sender)


def _show(value: object) -> str:
    return encode_hex(value) if isinstance(value, bytes) else str(value)
