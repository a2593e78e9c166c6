"""A transaction pool kept as geth keeps one (``core/txpool``: its checks in its order and
words). Two sub-pools, a sender in one at a time ("address already reserved"):

- plain transactions: *pending* runs on from the state nonce, *queued* waits for a gap to
  fill; a replacement pays 10% more fee cap and tip;
- blob transactions: no gaps (a small reorder buffer aside), replaced at twice the fees,
  their sidecars checked.

The chain is read through :class:`PoolChain` (:class:`BackendChain` or a dev chain).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from itertools import takewhile
from typing import Any, Protocol

import rlp
from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature

from ..errors import TransactionRejected
from ..forks import ChainConfig, Fork, validity
from ..forks.validity import InvalidTransaction, SenderAccount, fields_of
from ..methods.resolve import require_header
from ..methods.state import StateReader, StateView
from ..models import (
    AccessListTransaction,
    Address,
    BlobTransaction,
    Hash32,
    Header,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from ..rlpcodec.transactions import encode_transaction, transaction_hash
from .pool import cost, decode_raw, evm_transaction, pool_words, recover_sender

ETHER = 10**18
TX_SLOT_SIZE = 32 * 1024
"""geth counts a plain transaction's room in the pool in slots of this many bytes."""
MAX_TX_SIZE = 4 * TX_SLOT_SIZE
"""The largest plain transaction (geth's legacy pool: 128 KiB)."""
MAX_BLOB_TX_SIZE = 1024 * 1024
"""The largest blob transaction, blobs and proofs included (geth's blob pool)."""
MAX_BLOBS_PER_TX = 6
"""The most blobs the pool takes in one transaction (geth's ``BlobTxMaxBlobs``)."""
BLOB_SIZE = 131072
COMMITMENT_SIZE = PROOF_SIZE = 48
CELLS_PER_BLOB = 128
"""EIP-7594: cells (and cell proofs) of an extended blob."""
SIDECAR_VERSION_0, SIDECAR_VERSION_1 = 0, 1


@dataclass(frozen=True, slots=True)
class PoolLimits:
    """geth's defaults (``--txpool.*``, ``--rpc.txfeecap``) and the bounds ethread adds."""

    price_bump: int = 10
    """Percent a replacement's fee cap and tip must each rise (plain transactions)."""
    blob_price_bump: int = 100
    """The same for blob transactions."""
    min_tip: int = 1
    """The least tip the pool takes (``--txpool.pricelimit``)."""
    global_slots: int = 4096 + 1024
    account_queue: int = 64
    global_queue: int = 1024
    blob_account_limit: int = 16
    """Blob transactions of one sender (geth's ``maxTxsPerAccount``)."""
    blob_total: int = 64
    """Blob transactions in all (geth bounds its blob store by bytes on disk; blobs here are in memory)."""
    gapped_blobs: int = 128
    rpc_fee_cap: int = ETHER
    """The most ``gas * fee cap`` of one submitted transaction (``--rpc.txfeecap``; 0: no cap)."""
    allow_unprotected: bool = False
    """Take legacy transactions without a chain id (``--rpc.allow-unprotected-txs``)."""
    build_min_tip: int = 10**6
    """The least effective tip a block built from the pool includes (``--miner.gasprice``)."""
    blob_sidecars: bool = True
    """Whether a blob transaction must come with its blobs (a dev chain's need not)."""


DEFAULT_LIMITS = PoolLimits()
DEV_LIMITS = PoolLimits(min_tip=0, rpc_fee_cap=0, allow_unprotected=True, build_min_tip=0,
                        blob_sidecars=False)
"""A dev chain's pool: geth's rules for nonces, replacement and sub-pools, anvil's leniency for the rest."""
ARRIVALS_KEPT = 4096
"""Hashes of recent arrivals kept for pending-transaction filters."""


@dataclass(frozen=True, slots=True)
class BlobSidecar:
    """A blob transaction's blobs: version 0 has a proof per blob (EIP-4844), 1 per cell (EIP-7594)."""

    version: int
    blobs: tuple[bytes, ...]
    commitments: tuple[bytes, ...]
    proofs: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class Pooled:
    """A transaction the pool holds, with its sender, hash, encoded size and sidecar."""

    tx: Transaction
    hash: Hash32
    sender: Address
    size: int
    sidecar: BlobSidecar | None = None

    @property
    def cost(self) -> int:
        """The most it can take from its sender (gas at the fee cap, value, blob gas)."""
        return cost(self.tx)

    @property
    def fee_cap(self) -> int:
        """:func:`fee_cap` of the transaction."""
        return fee_cap(self.tx)

    @property
    def tip_cap(self) -> int:
        """:func:`tip_cap` of the transaction."""
        return tip_cap(self.tx)

    @property
    def slots(self) -> int:
        """The room it takes in the pool, in geth's slots of :data:`TX_SLOT_SIZE` bytes."""
        return (self.size + TX_SLOT_SIZE - 1) // TX_SLOT_SIZE

    def network_bytes(self) -> bytes:
        """What a client sends: the typed envelope, with a blob transaction's sidecar."""
        sidecar = self.sidecar
        if sidecar is None:
            return bytes(encode_transaction(self.tx))
        body = rlp.decode(encode_transaction(self.tx)[1:])
        lists = [list(sidecar.blobs), list(sidecar.commitments), list(sidecar.proofs)]
        items = lists if sidecar.version == SIDECAR_VERSION_0 else [b"\x01", *lists]
        return b"\x03" + bytes(rlp.encode([body, *items]))


def fee_cap(tx: Transaction) -> int:
    """The most a transaction pays per gas (its gas price before London's fee caps)."""
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        return tx.gas_price
    return tx.max_fee_per_gas


def tip_cap(tx: Transaction) -> int:
    """The most a transaction tips per gas."""
    if isinstance(tx, LegacyTransaction | AccessListTransaction):
        return tx.gas_price
    return tx.max_priority_fee_per_gas


def effective_tip(tx: Transaction, base_fee: int | None) -> int:
    """What the block's fee recipient earns per gas (may be negative below the base fee)."""
    return tip_cap(tx) if base_fee is None else min(tip_cap(tx), fee_cap(tx) - base_fee)


class PoolChain(Protocol):
    """The chain a pool works against: its schedule, head and the head's accounts."""

    @property
    def config(self) -> ChainConfig:
        """The chain's fork schedule and id."""

    def head(self) -> Header:
        """The header of the latest block."""

    def account(self, address: Address) -> SenderAccount:
        """``address`` as the head's state holds it."""


class BackendChain:
    """A backend with state as a pool's chain; the head's state view is kept per head."""

    def __init__(self, backend: StateReader, config: ChainConfig) -> None:
        self.backend = backend
        self.config = config
        self._view: tuple[Hash32, StateView] | None = None

    def head(self) -> Header:
        """The backend's latest header."""
        return require_header(self.backend, "latest")

    def account(self, address: Address) -> SenderAccount:
        """``address`` in the head's state (an account that does not exist: all zero)."""
        head = self.head()
        if self._view is None or self._view[0] != head.hash:
            self._view = (head.hash, StateView(self.backend, head))
        view = self._view[1]
        found = view.account(address)
        return SenderAccount(found.nonce, found.balance, view.code(address) if found.exists else b"")


def decode_submission(raw: bytes) -> tuple[Transaction, BlobSidecar | None]:
    """eth_sendRawTransaction's transaction, and a blob transaction's sidecar in the network form
    (``0x03 || rlp([tx, [version,] blobs, commitments, proofs])``); geth's decoding errors."""
    if raw[:1] != b"\x03":
        return decode_raw(raw), None
    try:
        body = rlp.decode(raw[1:])
    except (rlp.DecodingError, ValueError) as exc:
        raise TransactionRejected(f"rlp: {exc}") from None
    if not (isinstance(body, list) and body and isinstance(body[0], list)):
        return decode_raw(raw), None
    tx = decode_raw(b"\x03" + rlp.encode(body[0]))
    rest = body[1:]
    if len(rest) == 3:
        version, lists = SIDECAR_VERSION_0, rest
    elif len(rest) == 4 and isinstance(rest[0], bytes):
        version, lists = int.from_bytes(rest[0], "big"), rest[1:]
        if version != SIDECAR_VERSION_1:
            raise TransactionRejected(f"rlp: unsupported blob sidecar version {version}")
    else:
        raise TransactionRejected("rlp: blob transaction sidecar has the wrong number of items")
    sizes = (BLOB_SIZE, COMMITMENT_SIZE, PROOF_SIZE)
    names = ("kzg4844.Blob", "kzg4844.Commitment", "kzg4844.Proof")
    parts: list[tuple[bytes, ...]] = []
    for items, size, name in zip(lists, sizes, names, strict=True):
        if not isinstance(items, list) or not all(isinstance(i, bytes) for i in items):
            raise TransactionRejected(f"rlp: expected input list for []{name}")
        for item in items:
            if len(item) != size:
                which = "long" if len(item) > size else "short"
                raise TransactionRejected(f"rlp: input string too {which} for {name}")
        parts.append(tuple(items))
    return tx, BlobSidecar(version, parts[0], parts[1], parts[2])


@cache
def _kzg_setup() -> Any:
    """The KZG trusted setup (py-evm ships the ceremony's file), loaded once."""
    import ckzg  # type: ignore[import-not-found]
    from eth.precompiles.point_evaluation import TRUSTED_SETUP_PATH

    return ckzg.load_trusted_setup(TRUSTED_SETUP_PATH, 0)


def versioned_hash(commitment: bytes) -> bytes:
    """EIP-4844's versioned hash of a KZG commitment."""
    return b"\x01" + hashlib.sha256(commitment).digest()[1:]


def to_cell_proofs(sidecar: BlobSidecar) -> BlobSidecar:
    """A version-0 sidecar with proofs per cell (as geth's eth_sendRawTransaction makes it from Osaka)."""
    import ckzg  # type: ignore[import-not-found]

    proofs: list[bytes] = []
    for blob in sidecar.blobs:
        try:
            _, cell_proofs = ckzg.compute_cells_and_kzg_proofs(blob, _kzg_setup())
        except Exception as exc:  # ckzg raises RuntimeError for a blob out of the field
            raise TransactionRejected(f"blob sidecar conversion failed: {exc}") from None
        proofs.extend(bytes(p) for p in cell_proofs)
    return BlobSidecar(SIDECAR_VERSION_1, sidecar.blobs, sidecar.commitments, tuple(proofs))


def verify_sidecar(sidecar: BlobSidecar) -> None:
    """Check the proofs against the blobs and commitments; geth's "KZG verification error"."""
    import ckzg  # type: ignore[import-not-found]

    setup = _kzg_setup()
    try:
        if sidecar.version == SIDECAR_VERSION_1:
            commitments: list[bytes] = []
            indices: list[int] = []
            cells: list[bytes] = []
            for blob, commitment in zip(sidecar.blobs, sidecar.commitments, strict=True):
                cells.extend(bytes(c) for c in ckzg.compute_cells(blob, setup))
                commitments.extend([commitment] * CELLS_PER_BLOB)
                indices.extend(range(CELLS_PER_BLOB))
            ok = ckzg.verify_cell_kzg_proof_batch(commitments, indices, cells, list(sidecar.proofs), setup)
        else:
            ok = ckzg.verify_blob_kzg_proof_batch(list(sidecar.blobs), list(sidecar.commitments),
                                                  list(sidecar.proofs), setup)
    except Exception as exc:  # ckzg raises RuntimeError for points off the curve
        raise TransactionRejected(f"KZG verification error: {exc}") from None
    if not ok:
        raise TransactionRejected("KZG verification error: invalid proof")


@dataclass(slots=True)
class _Sender:
    """One sender's plain transactions: pending (gapless from the state nonce) and queued."""

    pending: dict[int, Pooled] = field(default_factory=dict)
    queued: dict[int, Pooled] = field(default_factory=dict)

    def pending_cost(self) -> int:
        return sum(p.cost for p in self.pending.values())


@dataclass(frozen=True, slots=True)
class PoolState:
    """A copy of what a pool holds (:meth:`TxPool.save`)."""

    plain: tuple[tuple[Address, tuple[tuple[int, Pooled], ...], tuple[tuple[int, Pooled], ...]], ...]
    blobs: tuple[tuple[Address, tuple[Pooled, ...]], ...]
    gapped: tuple[tuple[Address, tuple[Pooled, ...]], ...]
    arrival: tuple[Pooled, ...]
    head: Hash32 | None


@dataclass(frozen=True, slots=True)
class PoolContent:
    """What the pool holds by sender, each sender's transactions by nonce."""

    pending: dict[Address, list[Pooled]]
    queued: dict[Address, list[Pooled]]


class PoolLines:
    """What a pool holds by sender (plain pending and queued, blob, gapped blob), in step with the head."""

    def __init__(self, chain: PoolChain, limits: PoolLimits = DEFAULT_LIMITS) -> None:
        self.chain = chain
        self.limits = limits
        self._plain: dict[Address, _Sender] = {}
        self._blobs: dict[Address, list[Pooled]] = {}
        self._gapped: dict[Address, list[Pooled]] = {}
        self._all: dict[Hash32, Pooled] = {}
        self._head: Hash32 | None = None
        self._auth_cache: dict[Hash32, tuple[Address, ...]] = {}
        self._arrivals: deque[tuple[int, Hash32]] = deque(maxlen=ARRIVALS_KEPT)  # (sequence number, hash)
        self._arrived = 0
        self._lock = threading.RLock()

    def holds(self, address: Address) -> bool:
        """Whether the pool holds any transaction of ``address`` (pending, queued or gapped)."""
        with self._lock:
            return address in self._plain or address in self._blobs or address in self._gapped

    def _arrive(self, tx_hash: Hash32) -> None:
        self._arrived += 1
        self._arrivals.append((self._arrived, tx_hash))

    def arrivals_since(self, cursor: int) -> tuple[list[Hash32], int]:
        """Hashes taken after ``cursor`` (of the latest :data:`ARRIVALS_KEPT`), and the next cursor."""
        with self._lock:
            return [h for seq, h in self._arrivals if seq > cursor], self._arrived

    def _drop(self, pooled: Pooled) -> None:
        entry = self._plain.get(pooled.sender)
        if entry is None:
            return
        entry.pending.pop(pooled.tx.nonce, None)
        entry.queued.pop(pooled.tx.nonce, None)
        self._all.pop(pooled.hash, None)
        if not entry.pending and not entry.queued:
            del self._plain[pooled.sender]

    def _promote(self, sender: Address, account: SenderAccount, head: Header) -> None:
        """geth's promotion: stale and unpayable queued ones go, the next ones join, the queue is capped."""
        entry = self._plain.get(sender)
        if entry is None:
            return
        for nonce, pooled in sorted(entry.queued.items()):
            if nonce < account.nonce or pooled.cost > account.balance or pooled.tx.gas > head.gas_limit:
                del entry.queued[nonce]
                self._all.pop(pooled.hash, None)
        next_nonce = account.nonce + len(entry.pending)
        while next_nonce in entry.queued:
            entry.pending[next_nonce] = entry.queued.pop(next_nonce)
            next_nonce += 1
        for nonce in sorted(entry.queued)[self.limits.account_queue:]:
            self._all.pop(entry.queued.pop(nonce).hash, None)
        if not entry.pending and not entry.queued:
            del self._plain[sender]

    def _follow_head(self) -> None:
        """After a new head: drop what it made stale, demote what no longer follows, promote what does."""
        head = self.chain.head()
        previous, self._head = self._head, head.hash
        if previous is None or previous == head.hash:
            return
        for sender in list(self._plain):
            account = self.chain.account(sender)
            entry = self._plain[sender]
            for nonce in [n for n in entry.pending if n < account.nonce]:
                self._all.pop(entry.pending.pop(nonce).hash, None)
            line = sorted(entry.pending)
            for index, nonce in enumerate(line):
                if nonce != account.nonce + index:
                    for later in line[index:]:
                        entry.queued[later] = entry.pending.pop(later)
                    break
            self._promote(sender, account, head)
        for sender in list(self._blobs):
            account = self.chain.account(sender)
            blobs = self._blobs[sender]  # (in nonce order)
            kept = [p for p in blobs if p.tx.nonce >= account.nonce]
            if kept and kept[0].tx.nonce != account.nonce:
                kept = []  # (a gap below them)
            for pooled in blobs[:len(blobs) - len(kept)]:
                self._all.pop(pooled.hash, None)
            if kept:
                self._blobs[sender] = kept
            else:
                del self._blobs[sender]

    def status(self) -> tuple[int, int]:
        """(pending, queued) counts for txpool_status (blob transactions pending, gapped ones queued)."""
        with self._lock:
            self._follow_head()
            pending = sum(len(e.pending) for e in self._plain.values()) + sum(map(len, self._blobs.values()))
            queued = sum(len(e.queued) for e in self._plain.values()) + sum(map(len, self._gapped.values()))
            return pending, queued

    def content(self, sender: Address | None = None) -> PoolContent:
        """Plain transactions by sender and nonce, of every sender or of ``sender`` (geth shows no blobs)."""
        with self._lock:
            self._follow_head()
            if sender is None:
                entries = list(self._plain.items())
            else:
                entry = self._plain.get(sender)
                entries = [(sender, entry)] if entry is not None else []
            return PoolContent(
                pending={s: [e.pending[n] for n in sorted(e.pending)] for s, e in entries if e.pending},
                queued={s: [e.queued[n] for n in sorted(e.queued)] for s, e in entries if e.queued},
            )

    def get(self, tx_hash: Hash32) -> Pooled | None:
        """A pooled transaction by hash (pending or queued)."""
        with self._lock:
            return self._all.get(tx_hash)

    def executable(self) -> dict[Address, list[Pooled]]:
        """Every sender's pending transactions (plain and blob) in nonce order."""
        with self._lock:
            self._follow_head()
            out = {s: [e.pending[n] for n in sorted(e.pending)] for s, e in self._plain.items() if e.pending}
            out.update((sender, list(line)) for sender, line in self._blobs.items())
            return out

    def __len__(self) -> int:
        with self._lock:
            return len(self._all)

    def next_nonce(self, address: Address) -> int:
        """The nonce after the sender's pending line (geth's eth_getTransactionCount at "pending")."""
        with self._lock:
            self._follow_head()
            entry = self._plain.get(address)
            taken = len(entry.pending) if entry is not None else len(self._blobs.get(address, []))
            return self.chain.account(address).nonce + taken

    def pending_cost(self, address: Address) -> int:
        """The most the sender's pending transactions can take from it."""
        with self._lock:
            entry = self._plain.get(address)
            line = self._blobs.get(address, [])
            return (entry.pending_cost() if entry is not None else 0) + sum(p.cost for p in line)

    def drop(self, tx_hash: Hash32) -> bool:
        """anvil_dropTransaction, demoting the sender's later ones as geth does; False if not held."""
        with self._lock:
            pooled = self._all.get(tx_hash)
            if pooled is None:
                gapped = next((p for g in self._gapped.values() for p in g if p.hash == tx_hash), None)
                if gapped is None:
                    return False
                self._gapped[gapped.sender].remove(gapped)
                if not self._gapped[gapped.sender]:
                    del self._gapped[gapped.sender]
                return True
            sender, nonce = pooled.sender, pooled.tx.nonce
            line = self._blobs.get(sender)
            if line is not None and pooled in line:
                # A blob line has no gaps: what came after the dropped one goes with it.
                for later in line[line.index(pooled):]:
                    self._all.pop(later.hash, None)
                del line[line.index(pooled):]
                if not line:
                    del self._blobs[sender]
                return True
            entry = self._plain[sender]
            self._drop(pooled)
            if sender in self._plain:
                for later_nonce in [n for n in entry.pending if n > nonce]:
                    entry.queued[later_nonce] = entry.pending.pop(later_nonce)
            return True

    def clear(self) -> None:
        """Forget every transaction (anvil_dropAllTransactions, a chain reset)."""
        with self._lock:
            self._plain.clear()
            self._blobs.clear()
            self._gapped.clear()
            self._all.clear()

    def save(self) -> PoolState:
        """What the pool holds, to come back to with :meth:`restore` (a dev chain's snapshot)."""
        with self._lock:
            return PoolState(
                plain=tuple((s, tuple(e.pending.items()), tuple(e.queued.items()))
                            for s, e in self._plain.items()),
                blobs=tuple((s, tuple(line)) for s, line in self._blobs.items()),
                gapped=tuple((s, tuple(line)) for s, line in self._gapped.items()),
                arrival=tuple(self._all.values()),
                head=self._head,
            )

    def restore(self, state: PoolState) -> None:
        """Hold again what :meth:`save` saw."""
        with self._lock:
            self._plain = {s: _Sender(dict(pending), dict(queued)) for s, pending, queued in state.plain}
            self._blobs = {s: list(line) for s, line in state.blobs}
            self._gapped = {s: list(line) for s, line in state.gapped}
            self._all = {p.hash: p for p in state.arrival}
            self._head = state.head

    def ordered(self, base_fee: int | None) -> list[Pooled]:
        """The executable transactions in a block's order: best tip first (earlier arrival on a tie);
        a sender's line stops at a fee cap below ``base_fee``."""
        with self._lock:
            lines = self.executable()
            arrival = {h: i for i, h in enumerate(self._all)}
        heads: dict[Address, list[Pooled]] = {}
        for sender, line in lines.items():
            payable = list(takewhile(lambda p: base_fee is None or p.fee_cap >= base_fee, line))
            if payable:
                heads[sender] = payable
        out: list[Pooled] = []
        while heads:
            sender = max(heads, key=lambda s: (effective_tip(heads[s][0].tx, base_fee),
                                               -arrival.get(heads[s][0].hash, 0)))
            out.append(heads[sender].pop(0))
            if not heads[sender]:
                del heads[sender]
        return out


class TxPool(PoolLines):
    """Transactions waiting for a block, checked and kept by geth's rules."""

    def submit(self, raw: bytes) -> Hash32:
        """eth_sendRawTransaction: decode, check and keep (else :class:`TransactionRejected`); the hash."""
        if len(raw) > MAX_BLOB_TX_SIZE + 4 * TX_SLOT_SIZE:
            # Far past any transaction either sub-pool could take: refused before decoding.
            raise TransactionRejected(f"oversized data: transaction size {len(raw)}, "
                                      f"limit {MAX_BLOB_TX_SIZE}")
        tx, sidecar = decode_submission(raw)
        with self._lock:
            self._follow_head()
            head = self.chain.head()
            rules = self.chain.config.rules(head.number, head.timestamp)
            if sidecar is not None and sidecar.version == SIDECAR_VERSION_0 and rules.cell_proofs:
                sidecar = to_cell_proofs(sidecar)
            self._rpc_checks(tx)
            return self._add(tx, sidecar, head, rules)

    def add(self, tx: Transaction, *, sender: Address | None = None,
            sidecar: BlobSidecar | None = None) -> Hash32:
        """:meth:`submit` for a decoded transaction; ``sender``: an impersonated one (not recovered)."""
        with self._lock:
            self._follow_head()
            head = self.chain.head()
            rules = self.chain.config.rules(head.number, head.timestamp)
            self._rpc_checks(tx)
            return self._add(tx, sidecar, head, rules, sender)

    def keep(self, tx: Transaction, sender: Address) -> Hash32:
        """Keep, unchecked, a transaction its chain has already admitted (a dev chain's own sends)."""
        tx_hash = transaction_hash(tx)
        with self._lock:
            self._follow_head()
            pooled = Pooled(tx, tx_hash, sender, len(encode_transaction(tx)))
            entry = self._plain.setdefault(sender, _Sender())
            replaced = entry.queued.pop(tx.nonce, None) or entry.pending.get(tx.nonce)
            if replaced is not None:
                self._all.pop(replaced.hash, None)
            entry.pending[tx.nonce] = pooled
            self._all[tx_hash] = pooled
            self._arrive(tx_hash)
            if entry.queued:
                self._promote(sender, self.chain.account(sender), self.chain.head())
        return tx_hash

    def _rpc_checks(self, tx: Transaction) -> None:
        """What geth's eth_sendRawTransaction refuses before the pool sees it."""
        cap = self.limits.rpc_fee_cap
        if cap and fee_cap(tx) * tx.gas > cap:
            fee, limit = fee_cap(tx) * tx.gas / ETHER, cap / ETHER
            raise TransactionRejected(f"tx fee ({fee:.2f} ether) exceeds the configured cap "
                                      f"({limit:.2f} ether)")
        if (isinstance(tx, LegacyTransaction) and tx.v in (27, 28)
                and not self.limits.allow_unprotected):
            raise TransactionRejected("only replay-protected (EIP-155) transactions allowed over RPC")

    def _add(self, tx: Transaction, sidecar: BlobSidecar | None, head: Header, rules: Fork,
             known_sender: Address | None = None) -> Hash32:
        tx_hash = transaction_hash(tx)
        blob = isinstance(tx, BlobTransaction)
        if tx_hash in self._all or (blob and any(tx_hash == p.hash for g in self._gapped.values() for p in g)):
            raise TransactionRejected("already known")
        size = len(Pooled(tx, tx_hash, b"", 0, sidecar).network_bytes())
        sender = self._validate_basics(tx, sidecar, size, head, rules, known_sender)
        pooled = Pooled(tx, tx_hash, sender, size, sidecar)
        if blob:
            self._add_blob(pooled)
        else:
            self._add_plain(pooled, head)
        if tx_hash in self._all:
            self._arrive(tx_hash)
        return tx_hash

    def _validate_basics(self, tx: Transaction, sidecar: BlobSidecar | None, size: int,
                         head: Header, rules: Fork, known_sender: Address | None = None) -> Address:
        """geth's ``ValidateTransaction``: what needs no state; the sender."""
        blob = isinstance(tx, BlobTransaction)
        limit = MAX_BLOB_TX_SIZE if blob else MAX_TX_SIZE
        if size > limit:
            raise TransactionRejected(f"oversized data: transaction size {size}, limit {limit}")
        fields = fields_of(tx)
        try:
            validity.check_type(rules, tx.type)
            validity.check_initcode(rules, fields)
            validity.check_gas_cap(rules, fields)
            if head.gas_limit < tx.gas:
                raise TransactionRejected("exceeds block gas limit")
            validity.check_fee_caps(fields)
            sender = known_sender if known_sender is not None else self._sender(tx, head, rules)
            validity.check_nonce_cap(fields)
            if tx.value.bit_length() > 256:
                raise TransactionRejected("insufficient funds for gas * price + value")
            validity.check_intrinsic_gas(rules, fields)
        except InvalidTransaction as exc:
            raise TransactionRejected(pool_words(exc)) from None
        if tip_cap(tx) < self.limits.min_tip:
            raise TransactionRejected(f"transaction gas price below minimum: gas tip cap {tip_cap(tx)}, "
                                      f"minimum needed {self.limits.min_tip}")
        if isinstance(tx, BlobTransaction) and (sidecar is not None or self.limits.blob_sidecars):
            self._validate_sidecar(tx, sidecar, rules)
        try:
            validity.check_authorizations(fields, sender)
        except InvalidTransaction as exc:
            raise TransactionRejected(pool_words(exc)) from None
        return sender

    def _sender(self, tx: Transaction, head: Header, rules: Fork) -> Address:
        """The signer, as geth's signer for the head recovers it."""
        want = self.chain.config.chain_id
        have = tx.chain_id
        if isinstance(tx, LegacyTransaction) and tx.v in (27, 28):
            have = None
        elif isinstance(tx, LegacyTransaction) and not rules.replay_protection:
            raise TransactionRejected("invalid sender: invalid transaction v, r, s values")
        if have is not None and have != want:
            raise TransactionRejected(f"invalid sender: invalid chain id for signer: have {have} want {want}")
        vm_class = self.chain.config.vm_class(head.number, head.timestamp)
        try:
            return recover_sender(evm_transaction(vm_class, tx))
        except TransactionRejected as exc:
            if exc.message.startswith("invalid sender"):
                raise
            raise TransactionRejected(f"invalid sender: {exc.message}") from None

    def _validate_sidecar(self, tx: BlobTransaction, sidecar: BlobSidecar | None, rules: Fork) -> None:
        """geth's blob sidecar checks, then the proofs."""
        if tx.max_fee_per_blob_gas < 1:
            raise TransactionRejected(f"transaction gas price below minimum: blob fee cap "
                                      f"{tx.max_fee_per_blob_gas}, minimum needed 1")
        if sidecar is None:
            raise TransactionRejected("missing sidecar in blob transaction")
        hashes = tx.blob_versioned_hashes
        if len(sidecar.commitments) != len(hashes):
            raise TransactionRejected(f"invalid number of {len(sidecar.commitments)} blob commitments "
                                      f"compared to {len(hashes)} blob hashes")
        for index, (commitment, wanted) in enumerate(zip(sidecar.commitments, hashes, strict=True)):
            computed = versioned_hash(commitment)
            if computed != wanted:
                raise TransactionRejected(f"blob {index}: computed hash 0x{computed.hex()} mismatches "
                                          f"transaction one 0x{wanted.hex()}")
        if not hashes:
            raise TransactionRejected("blobless blob transaction")
        if len(hashes) > MAX_BLOBS_PER_TX:
            raise TransactionRejected(f"transaction blob limit exceeded: blob count {len(hashes)}, "
                                      f"limit {MAX_BLOBS_PER_TX}")
        want = SIDECAR_VERSION_1 if rules.cell_proofs else SIDECAR_VERSION_0
        if sidecar.version != want:
            raise TransactionRejected(f"Wrong sidecar format: unexpected sidecar version, want: {want}, "
                                      f"got: {sidecar.version}")
        proofs = len(sidecar.commitments) * (CELLS_PER_BLOB if want == SIDECAR_VERSION_1 else 1)
        if len(sidecar.proofs) != proofs:
            raise TransactionRejected(f"Wrong sidecar format: invalid number of {len(sidecar.proofs)} "
                                      f"blob proofs expected {proofs}")
        if len(sidecar.blobs) != len(sidecar.commitments):
            raise TransactionRejected(f"invalid number of {len(sidecar.blobs)} blobs compared to "
                                      f"{len(sidecar.commitments)} commitments")
        verify_sidecar(sidecar)

    def _check_funds(self, pooled: Pooled, account: SenderAccount, spent: int,
                     previous: Pooled | None) -> None:
        """geth's ``ValidateTransactionWithState`` past the nonce, alone and with the pending cost."""
        balance, needed = account.balance, pooled.cost
        if balance < needed:
            raise TransactionRejected(f"insufficient funds for gas * price + value: balance {balance}, "
                                      f"tx cost {needed}, overshot {needed - balance}")
        extra, what = needed, "tx cost"
        if previous is not None:
            extra, what = needed - previous.cost, "tx bumped"
        if balance < spent + extra:
            raise TransactionRejected(
                f"insufficient funds for gas * price + value: balance {balance}, queued cost {spent}, "
                f"{what} {extra}, overshot {spent + extra - balance}")

    @staticmethod
    def _bumped(old: Pooled, new: Pooled, bump: int) -> bool:
        """Whether ``new`` pays enough more than ``old`` to replace it (geth's list.Add)."""
        if old.fee_cap >= new.fee_cap or old.tip_cap >= new.tip_cap:
            return False
        return (new.fee_cap >= old.fee_cap * (100 + bump) // 100
                and new.tip_cap >= old.tip_cap * (100 + bump) // 100)

    def _delegated(self, address: Address, account: SenderAccount) -> bool:
        """Whether the sender is delegated, or a pooled set-code transaction delegates it."""
        return bool(account.code) or any(
            address in self._authorities_of(pooled) for pooled in self._all.values()
            if isinstance(pooled.tx, SetCodeTransaction))

    def _authorities_of(self, pooled: Pooled) -> tuple[Address, ...]:
        """The authorities of a pooled set-code transaction, recovered once."""
        found = self._auth_cache.get(pooled.hash)
        if found is None:
            assert isinstance(pooled.tx, SetCodeTransaction)
            if len(self._auth_cache) > 2 * len(self._all) + 64:
                self._auth_cache = {h: a for h, a in self._auth_cache.items() if h in self._all}
            found = self._auth_cache[pooled.hash] = tuple(_authorities(pooled.tx))
        return found

    def _add_plain(self, pooled: Pooled, head: Header) -> None:
        sender = pooled.sender
        tx = pooled.tx
        account = self.chain.account(sender)
        if tx.nonce < account.nonce:
            raise TransactionRejected(f"nonce too low: next nonce {account.nonce}, tx nonce {tx.nonce}")
        entry = self._plain.get(sender) or _Sender()
        self._check_funds(pooled, account, entry.pending_cost(), entry.pending.get(tx.nonce))
        if self._delegated(sender, account):
            pending_next = account.nonce + len(entry.pending)
            if not entry.pending:
                if tx.nonce != pending_next:
                    raise TransactionRejected("gapped-nonce tx from delegated accounts")
            elif tx.nonce not in entry.pending:
                raise TransactionRejected("in-flight transaction limit reached for delegated accounts")
        if isinstance(tx, SetCodeTransaction):
            for authority in _authorities(tx):
                held = self._plain.get(authority)
                count = len(held.pending) + len(held.queued) if held else 0
                if count > 1 or authority in self._blobs:
                    raise TransactionRejected("authority already reserved")
        if sender in self._blobs or sender in self._gapped:
            raise TransactionRejected("address already reserved")
        replacing = entry.pending.get(tx.nonce) or entry.queued.get(tx.nonce)
        if replacing is not None and not self._bumped(replacing, pooled, self.limits.price_bump):
            raise TransactionRejected("replacement transaction underpriced")
        if replacing is None:
            self._make_room(pooled)
        else:
            del self._all[replacing.hash]
        self._plain[sender] = entry
        if tx.nonce in entry.pending:
            entry.pending[tx.nonce] = pooled
        else:
            entry.queued[tx.nonce] = pooled
        self._all[pooled.hash] = pooled
        self._promote(sender, account, head)

    def _make_room(self, pooled: Pooled) -> None:
        """When the pool is full, drop the cheapest last-in-line plain transaction, or refuse ``pooled``."""
        limit = self.limits.global_slots + self.limits.global_queue
        while sum(p.slots for p in self._all.values() if p.sidecar is None) + pooled.slots > limit:
            tails = [max((*e.pending.values(), *e.queued.values()), key=lambda p: p.tx.nonce)
                     for e in self._plain.values() if e.pending or e.queued]
            cheapest = min(tails, key=lambda p: (p.tip_cap, p.fee_cap), default=None)
            if cheapest is None or (cheapest.tip_cap, cheapest.fee_cap) >= (pooled.tip_cap, pooled.fee_cap):
                raise TransactionRejected("transaction underpriced")
            self._drop(cheapest)

    def _add_blob(self, pooled: Pooled) -> None:
        """geth's blob pool (see the module docstring)."""
        sender, tx = pooled.sender, pooled.tx
        assert isinstance(tx, BlobTransaction)
        account = self.chain.account(sender)
        if tx.nonce < account.nonce:
            raise TransactionRejected(f"nonce too low: next nonce {account.nonce}, tx nonce {tx.nonce}")
        line = self._blobs.get(sender, [])
        gap = account.nonce + len(line)
        if tx.nonce > gap:
            allowance = min(int(math.log10(account.nonce + 1)), self.limits.blob_account_limit - len(line))
            allowance -= len(self._gapped.get(sender, []))
            gapped_total = sum(len(g) for g in self._gapped.values())
            if allowance >= 1 and gapped_total < self.limits.gapped_blobs:
                self._gapped.setdefault(sender, []).append(pooled)
                return
            raise TransactionRejected(f"nonce too high: tx nonce {tx.nonce}, gapped nonce {gap}")
        offset = tx.nonce - account.nonce
        previous = line[offset] if offset < len(line) else None
        spent = sum(p.cost for p in line)
        self._check_funds(pooled, account, spent, previous)
        if previous is None and len(line) >= self.limits.blob_account_limit:
            raise TransactionRejected(f"account limit exceeded: pooled {len(line)} txs")
        replacing_only = len(line) == 1 and previous is not None
        if line and not replacing_only and self._delegated(sender, account):
            raise TransactionRejected("in-flight transaction limit reached for delegated accounts")
        if previous is not None:
            self._check_blob_bump(previous, pooled)
        if sender in self._plain:
            raise TransactionRejected("address already reserved")
        if previous is None and sum(len(v) for v in self._blobs.values()) >= self.limits.blob_total:
            raise TransactionRejected("txpool is full")
        if previous is not None:
            del self._all[previous.hash]
            line[offset] = pooled
        else:
            line.append(pooled)
        self._blobs[sender] = line
        self._all[pooled.hash] = pooled
        self._take_gapped(sender)

    def _check_blob_bump(self, previous: Pooled, pooled: Pooled) -> None:
        old, new = previous.tx, pooled.tx
        assert isinstance(old, BlobTransaction) and isinstance(new, BlobTransaction)
        pairs = (("gas fee cap", new.max_fee_per_gas, old.max_fee_per_gas),
                 ("gas tip cap", new.max_priority_fee_per_gas, old.max_priority_fee_per_gas),
                 ("blob gas fee cap", new.max_fee_per_blob_gas, old.max_fee_per_blob_gas))
        for name, have, had in pairs:
            if have <= had:
                raise TransactionRejected(f"replacement transaction underpriced: new tx {name} {have} "
                                          f"<= {had} queued")
        bump = self.limits.blob_price_bump
        for name, have, had in pairs:
            if have < had * (100 + bump) // 100:
                raise TransactionRejected(f"replacement transaction underpriced: new tx {name} {have} "
                                          f"< {had} queued + {bump}% replacement penalty")

    def _take_gapped(self, sender: Address) -> None:
        """Gapped blob transactions whose turn has come join their sender's line; stale ones go."""
        waiting = sorted(self._gapped.pop(sender, []), key=lambda p: p.tx.nonce)
        kept: list[Pooled] = []
        for pooled in waiting:
            next_nonce = self.chain.account(sender).nonce + len(self._blobs.get(sender, []))
            if pooled.tx.nonce > next_nonce:
                kept.append(pooled)
            elif pooled.tx.nonce == next_nonce:
                # One that no longer fits (funds, limits) is dropped, as geth drops it.
                with contextlib.suppress(TransactionRejected):
                    self._add_blob(pooled)
        if kept:
            self._gapped[sender] = kept


def _authorities(tx: SetCodeTransaction) -> Iterable[Address]:
    """The accounts a set-code transaction's authorizations delegate (those that recover)."""
    found: list[Address] = []
    for auth in tx.authorization_list:
        payload = b"\x05" + rlp.encode([auth.chain_id, auth.address, auth.nonce])
        try:
            signature = Signature(vrs=(auth.y_parity, auth.r, auth.s))
            found.append(bytes(signature.recover_public_key_from_msg(payload).to_canonical_address()))
        except (BadSignature, ValueError):
            continue
    return found


__all__ = ["DEFAULT_LIMITS", "DEV_LIMITS", "BackendChain", "BlobSidecar", "PoolChain",
           "PoolContent", "PoolLimits", "PoolState", "Pooled", "TxPool", "decode_submission",
           "effective_tip", "fee_cap", "tip_cap"]
