"""Synthetic history for benchmarks: many well-formed blocks, written fast.

Unlike the dev chain, this SKIPS EXECUTION. After a normal genesis (stored through
:class:`ChainImporter`, Prague rules from block 0), blocks are made directly as models and
written with ``backend.write_block``: each holds one dynamic-fee transaction from one of a
handful of senders to one of a handful of token-like contracts, and one ERC-20-style Transfer
log. Headers are well-formed and chained (parent hashes, block hashes, transactions and
receipts roots, blooms, EIP-1559 base fees, gas used all consistent), but:

- the state root of every block is the genesis state root and no state is stored for these
  blocks, so eth_call and eth_getProof find no state for them (their headers are not in the
  py-evm database either);
- gas used is a fixed figure, not what execution would charge;
- unless ``sign=True``, signatures are deterministic filler, well-formed (low s, in range) but
  not made by the sender's key: the stored sender is authoritative, as it is for every block
  (senders are recovered once, at import), but recovering one from the signature gives some
  other address. Signing adds about a millisecond a block.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rlp
from eth.constants import BLANK_ROOT_HASH, EMPTY_UNCLE_HASH
from eth.vm.forks.london.headers import calculate_expected_base_fee_per_gas
from eth_bloom import BloomFilter
from eth_utils import keccak
from trie import HexaryTrie

from ethread.backend import WritableBackend
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import DEV_CHAIN_ID, GWEI, PRAGUE_FORKS, DevChainError, genesis_document
from ethread.devchain.signing import DevAccount, dev_accounts, sign_transaction
from ethread.era1.ere import logs_bloom as ere_logs_bloom
from ethread.models import (
    AccessListEntry,
    AccessListTransaction,
    Address,
    Authorization,
    BlobTransaction,
    Block,
    DynamicFeeTransaction,
    Hash32,
    Header,
    IncludedTransaction,
    LegacyTransaction,
    Log,
    Receipt,
    SetCodeTransaction,
    Transaction,
    Withdrawal,
)
from ethread.progress import Progress
from ethread.rlpcodec.blocks import withdrawal_item
from ethread.rlpcodec.headers import encode_header
from ethread.rlpcodec.items import encode_list_of_encoded as _rlp_list
from ethread.rlpcodec.items import encode_nested, rlp_list_length
from ethread.rlpcodec.ordered_trie import ordered_trie_root
from ethread.rlpcodec.receipts import encode_receipt
from ethread.rlpcodec.transactions import encode_transaction

TRANSFER_TOPIC = keccak(b"Transfer(address,address,uint256)")
TRANSFER_SELECTOR = keccak(b"transfer(address,uint256)")[:4]
EMPTY_REQUESTS_HASH = bytes.fromhex(
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of nothing
)
SECP256K1_HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0
GAS_USED = 51_000
GAS_LIMIT = 30_000_000
FEE_RECIPIENT = b"\xfe" * 20



@dataclass(frozen=True, slots=True)
class SyntheticHistory:
    """What a benchmark needs to aim its queries: who sent, who logged, up to where."""

    senders: tuple[Address, ...]
    emitters: tuple[Address, ...]
    head: int
    transfer_topic: Hash32 = TRANSFER_TOPIC


def emitter_address(index: int) -> Address:
    return keccak(b"synthetic emitter %d" % index)[:20]


def synthetic_history(
    backend: WritableBackend,
    blocks: int = 100_000,
    *,
    chain_id: int = DEV_CHAIN_ID,
    senders: int = 8,
    emitters: int = 4,
    genesis_timestamp: int = 1_700_000_000,
    block_time: int = 12,
    batch: int = 1_000,
    sign: bool = False,
    progress: Progress | None = None,
) -> SyntheticHistory:
    """Fill ``backend`` with a genesis and ``blocks`` synthetic blocks (see the module
    docstring: no execution, no state). A backend already holding a shorter history of the
    same parameters is extended rather than rebuilt; ``batch`` blocks go in each
    ``import_batch``."""
    accounts = dev_accounts(senders)
    genesis = parse_genesis(genesis_document(
        chain_id=chain_id, forks=PRAGUE_FORKS, accounts=accounts, timestamp=genesis_timestamp,
        gas_limit=GAS_LIMIT, extra_data=b"ethread synthetic",
    ))
    ChainImporter(backend, genesis, verify_seals=False)
    head_number = backend.pointer("latest")
    parent = _header_at(backend, head_number or 0)
    maker = _BlockMaker(chain_id, accounts, tuple(emitter_address(i) for i in range(emitters)),
                        block_time, sign)
    numbers = range(parent.number + 1, blocks + 1)
    for chunk in _chunks(numbers, batch):
        with backend.import_batch():
            for number in chunk:
                block, receipt = maker.make(parent, number)
                backend.write_block(block, (receipt,))
                parent = block.header
        if progress is not None:
            progress(chunk[-1], blocks)
    return SyntheticHistory(senders=tuple(a.address for a in accounts), emitters=maker.emitters,
                            head=max(blocks, parent.number))


def _header_at(backend: WritableBackend, number: int) -> Header:
    block_hash = backend.canonical_hash(number)
    header = backend.header_by_hash(block_hash) if block_hash is not None else None
    if header is None:
        raise DevChainError(f"the backend lost block {number}")
    return header


def _chunks(numbers: range, size: int) -> Iterator[range]:
    for start in range(0, len(numbers), size):
        yield numbers[start:start + size]


def next_base_fee(parent: Header) -> int:
    """EIP-1559 (py-evm's rule, which reads only the parent's gas limit, gas used and base fee)."""
    return int(calculate_expected_base_fee_per_gas(parent))


def single_entry_trie_root(value: bytes) -> Hash32:
    """Root of the trie of a one-item list (transactions or receipts root of a one-transaction
    block): ``value`` at key ``rlp(0)``."""
    trie = HexaryTrie({})
    trie[rlp.encode(0)] = value
    return Hash32(trie.root_hash)


def logs_bloom(address: Address, topics: tuple[Hash32, ...]) -> bytes:
    return int(BloomFilter.from_iterable([address, *topics])).to_bytes(256, "big")


AMOUNT_CYCLE = 256
"""Transfer amounts repeat with this period, so that a block's receipt is one of a few hundred
and its receipts root can be remembered rather than recomputed."""


@dataclass(frozen=True, slots=True)
class _Transfer:
    """What a block's transaction does, apart from its nonce and signature; the receipt,
    its root and the bloom depend on nothing else."""

    sender: DevAccount
    recipient: Address
    emitter: Address
    amount: int

    @property
    def topics(self) -> tuple[Hash32, ...]:
        return (TRANSFER_TOPIC, self.sender.address.rjust(32, b"\x00"),
                self.recipient.rjust(32, b"\x00"))

    @property
    def log_data(self) -> bytes:
        return self.amount.to_bytes(32, "big")


@dataclass
class _BlockMaker:
    chain_id: int
    accounts: tuple[DevAccount, ...]
    emitters: tuple[Address, ...]
    block_time: int
    sign: bool
    _receipts: dict[_Transfer, tuple[bytes, Hash32]] = field(default_factory=dict)
    """Bloom and receipts root by transfer."""

    def _transfer(self, number: int) -> _Transfer:
        count = len(self.accounts)
        return _Transfer(
            sender=self.accounts[(number - 1) % count],
            recipient=self.accounts[number % count].address,
            emitter=self.emitters[(number - 1) // count % len(self.emitters)],
            amount=(1 + number % AMOUNT_CYCLE) * 10**15,
        )

    def _bloom_and_root(self, transfer: _Transfer) -> tuple[bytes, Hash32]:
        known = self._receipts.get(transfer)
        if known is None:
            bloom = logs_bloom(transfer.emitter, transfer.topics)
            # The consensus encoding of a log holds its address, topics and data only.
            log = Log(address=transfer.emitter, topics=transfer.topics, data=transfer.log_data,
                      block_number=0, transaction_hash=b"", transaction_index=0, block_hash=b"",
                      block_timestamp=0, log_index=0)
            encoding = encode_receipt(2, 1, GAS_USED, bloom, (log,))
            known = self._receipts[transfer] = (bloom, single_entry_trie_root(encoding))
        return known

    def _transaction(self, number: int, transfer: _Transfer, seed: bytes) -> DynamicFeeTransaction:
        tx = DynamicFeeTransaction(
            chain_id=self.chain_id, nonce=(number - 1) // len(self.accounts),
            max_priority_fee_per_gas=GWEI, max_fee_per_gas=100 * GWEI, gas=100_000,
            to=transfer.emitter, value=0,
            data=TRANSFER_SELECTOR + transfer.recipient.rjust(32, b"\x00") + transfer.log_data,
            access_list=(), y_parity=seed[0] & 1,
            r=int.from_bytes(seed, "big") % SECP256K1_HALF_N + 1,
            s=int.from_bytes(seed, "little") % SECP256K1_HALF_N + 1,
        )
        if self.sign:
            tx = sign_transaction(tx, transfer.sender)
        return tx

    def make(self, parent: Header, number: int) -> tuple[Block, Receipt]:
        # Randomness for signature filler, prevrandao and beacon root; need not be keccak.
        seed = hashlib.sha256(b"synthetic block %d" % number).digest()
        transfer = self._transfer(number)
        tx = self._transaction(number, transfer, seed)
        envelope = encode_transaction(tx)
        tx_hash = keccak(envelope)
        bloom, receipts_root = self._bloom_and_root(transfer)
        base_fee = next_base_fee(parent)
        header = Header(
            parent_hash=parent.hash, uncles_hash=EMPTY_UNCLE_HASH, coinbase=FEE_RECIPIENT,
            state_root=parent.state_root, transactions_root=single_entry_trie_root(envelope),
            receipts_root=receipts_root, logs_bloom=bloom, difficulty=0, number=number,
            gas_limit=parent.gas_limit, gas_used=GAS_USED,
            timestamp=parent.timestamp + self.block_time, extra_data=b"", mix_hash=seed,
            nonce=b"\x00" * 8, base_fee_per_gas=base_fee, withdrawals_root=BLANK_ROOT_HASH,
            blob_gas_used=0, excess_blob_gas=0, parent_beacon_block_root=seed[::-1],
            requests_hash=EMPTY_REQUESTS_HASH,
        )
        header_rlp = encode_header(header)
        # The hash is keccak of the header's RLP, known only once the header is made.
        object.__setattr__(header, "hash", keccak(header_rlp))
        sender = transfer.sender.address
        gas_price = min(tx.max_fee_per_gas, base_fee + tx.max_priority_fee_per_gas)
        included = IncludedTransaction(transaction=tx, hash=tx_hash, sender=sender,
                                       block_hash=header.hash, block_number=number,
                                       block_timestamp=header.timestamp, index=0,
                                       gas_price=gas_price)
        log = Log(address=transfer.emitter, topics=transfer.topics, data=transfer.log_data,
                  block_number=number, transaction_hash=tx_hash, transaction_index=0,
                  block_hash=header.hash, block_timestamp=header.timestamp, log_index=0)
        # [header, [tx], [], []]: no uncles, no withdrawals (one byte each).
        payload = len(header_rlp) + len(rlp.encode([envelope])) + 2
        block = Block(header=header, transactions=(included,), uncles=(), withdrawals=(),
                      size=rlp_list_length(payload))
        receipt = Receipt(
            type=tx.type, status=1, root=None, cumulative_gas_used=GAS_USED, logs_bloom=bloom,
            logs=(log,), transaction_hash=tx_hash, transaction_index=0, block_hash=header.hash,
            block_number=number, sender=sender, to=transfer.emitter, gas_used=GAS_USED,
            effective_gas_price=gas_price, contract_address=None,
        )
        return block, receipt


# --------------------------------------------------------------------------------------------
# Dense history: blocks shaped like mainnet's


DENSE_GAS_LIMIT = 36_000_000
SWAP_TOPIC = keccak(b"Swap(address,uint256,uint256,uint256,uint256,address)")
SYNC_TOPIC = keccak(b"Sync(uint112,uint112)")
APPROVAL_TOPIC = keccak(b"Approval(address,address,uint256)")
SWAP_SELECTOR = keccak(b"swapExactTokensForTokens(uint256,uint256,address[],address,uint256)")[:4]
APPROVE_SELECTOR = keccak(b"approve(address,uint256)")[:4]
GAS_PER_BLOB = 131_072
ROLLUP_INBOX = keccak(b"synthetic rollup inbox")[:20]

DENSE_MIX = (
    # (kind, share of a block's transactions)
    ("ether", 0.18), ("token", 0.42), ("swap", 0.20), ("approve", 0.06), ("create", 0.04),
    ("blob", 0.03), ("set_code", 0.02), ("access_list", 0.05),
)
"""What a dense block's transactions do, roughly mainnet's mix: plain ether transfers (legacy or
EIP-1559), ERC-20 transfers (one Transfer log), swaps through a pair (Transfer in, Transfer
out, Sync, Swap), approvals, contract creations with a few kilobytes of initcode, blob
transactions to a rollup inbox, EIP-7702 set-code transactions, and EIP-2930 calls with an
access list; about 3% of them revert (no logs)."""


def _signature_pool(count: int = 64) -> list[int]:
    """x-coordinates of curve points: filler ``r`` values from which a sender can always be
    recovered (a random ``r`` is not a point half of the time)."""
    from coincurve import PrivateKey

    return [int.from_bytes(PrivateKey((k + 1).to_bytes(32, "big")).public_key.format(False)[1:33],
                           "big") for k in range(count)]


@dataclass(frozen=True, slots=True)
class DenseBlock:
    """One dense block as models (for a store's ``write_block``) and as the records an archive
    holds (header, body and consensus receipts RLP)."""

    block: Block
    receipts: tuple[Receipt, ...]
    header_rlp: bytes
    body_rlp: bytes
    receipts_rlp: bytes


def dense_parent(label: bytes) -> Header:
    """A block 0 header for a :class:`DenseMaker` to build on: empty roots, the dense gas limit
    half used, a 1 gwei base fee; its hash is keccak(``label``) (nothing checks it)."""
    return Header(
        parent_hash=b"\x00" * 32, uncles_hash=EMPTY_UNCLE_HASH, coinbase=b"\x00" * 20,
        state_root=BLANK_ROOT_HASH, transactions_root=BLANK_ROOT_HASH,
        receipts_root=BLANK_ROOT_HASH, logs_bloom=b"\x00" * 256, difficulty=0, number=0,
        gas_limit=DENSE_GAS_LIMIT, gas_used=DENSE_GAS_LIMIT // 2, timestamp=1_700_000_000,
        extra_data=b"", mix_hash=b"\x00" * 32, nonce=b"\x00" * 8, base_fee_per_gas=10**9,
        hash=keccak(label))


class DenseMaker:
    """Makes dense blocks one after another (deterministic for a given seed): each block's
    transactions follow :data:`DENSE_MIX`, from a pool of senders whose nonces advance."""

    def __init__(self, chain_id: int, transactions: int = 200, *, senders: int = 2_000,
                 tokens: int = 64, pairs: int = 24, block_time: int = 12, seed: int = 1,
                 recover: bool = False) -> None:
        """``recover=True`` makes each transaction's sender the address its filler signature
        recovers to (about 0.1 ms a transaction), so archives, whose senders are recovered
        when indexed, answer the same ``from`` as the store; otherwise the sender is taken
        from a pool and only the store's answer has it."""
        import random

        self.recover = recover
        self.chain_id = chain_id
        self.transactions = transactions
        self.block_time = block_time
        self.seed = seed
        self.senders = [keccak(b"dense sender %d" % i)[:20] for i in range(senders)]
        self.nonces = [0] * senders
        self.tokens = [keccak(b"dense token %d" % i)[:20] for i in range(tokens)]
        self.pairs = [keccak(b"dense pair %d" % i)[:20] for i in range(pairs)]
        self.router = keccak(b"dense router")[:20]
        self._r = _signature_pool()
        rng = random.Random(seed)
        self._code = [bytes(rng.getrandbits(8) for _ in range(256)) * rng.randint(4, 16)
                      for _ in range(16)]  # initcode: repetitive, as compiled code is
        kinds = [kind for kind, _ in DENSE_MIX]
        weights = [share for _, share in DENSE_MIX]
        self._kinds = kinds
        self._weights = weights

    def _signature(self, rng: Any) -> tuple[int, int, int]:
        return (rng.getrandbits(1), rng.choice(self._r),
                rng.randrange(1, SECP256K1_HALF_N))

    def make(self, parent: Header, number: int) -> DenseBlock:
        import random

        rng = random.Random(self.seed * 1_000_003 + number)
        timestamp = parent.timestamp + self.block_time
        base_fee = next_base_fee(parent)
        kinds = rng.choices(self._kinds, self._weights, k=self.transactions)
        items: list[tuple[Transaction, Address, int, bool, list[tuple[Address, tuple[Hash32, ...], bytes]], int]] = []
        blob_gas = 0
        for kind in kinds:
            if kind == "blob" and blob_gas >= 6 * GAS_PER_BLOB:
                kind = "ether"
            made = self._transaction(kind, rng, base_fee)
            if self.recover:
                made = (made[0], _recovered(made[0], self.chain_id), *made[2:])
            items.append(made)
            tx = made[0]
            if isinstance(tx, BlobTransaction):
                blob_gas += GAS_PER_BLOB * len(tx.blob_versioned_hashes)
        envelopes = [encode_transaction(tx) for tx, *_ in items]
        hashes = [keccak(e) for e in envelopes]
        # Receipts: cumulative gas, logs (none when the transaction failed), blooms.
        cumulative = 0
        consensus: list[bytes] = []
        raw_logs_per_tx = []
        block_bloom = 0
        for (tx, _sender, gas_used, ok, logs, _), _ in zip(items, hashes, strict=True):
            cumulative += gas_used
            kept = logs if ok else []
            raw_logs_per_tx.append(kept)
            bloom = logs_bloom_of(kept)
            block_bloom |= int.from_bytes(bloom, "big")
            consensus.append(_receipt_record(tx.type, 1 if ok else 0, cumulative, bloom, kept))
        withdrawals = tuple(
            Withdrawal(index=(number - 1) * 16 + i, validator_index=rng.randrange(1_000_000),
                       address=keccak(b"validator %d" % rng.randrange(10_000))[:20],
                       amount=rng.randrange(10_000, 20_000_000))
            for i in range(16))
        withdrawal_records = [encode_nested(withdrawal_item(w)) for w in withdrawals]
        seed = hashlib.sha256(b"dense block %d" % number).digest()
        header = Header(
            parent_hash=parent.hash, uncles_hash=EMPTY_UNCLE_HASH, coinbase=FEE_RECIPIENT,
            state_root=parent.state_root, transactions_root=ordered_trie_root(envelopes),
            receipts_root=ordered_trie_root(consensus),
            logs_bloom=block_bloom.to_bytes(256, "big"), difficulty=0, number=number,
            gas_limit=DENSE_GAS_LIMIT, gas_used=cumulative, timestamp=timestamp,
            extra_data=b"ethread dense", mix_hash=seed, nonce=b"\x00" * 8,
            base_fee_per_gas=base_fee, withdrawals_root=ordered_trie_root(withdrawal_records),
            blob_gas_used=blob_gas, excess_blob_gas=0, parent_beacon_block_root=seed[::-1],
            requests_hash=EMPTY_REQUESTS_HASH,
        )
        header_rlp = encode_header(header)
        object.__setattr__(header, "hash", keccak(header_rlp))
        block_hash = header.hash
        body_items = [e if e[0] >= 0xC0 else encode_nested(e) for e in envelopes]
        body_rlp = _rlp_list([_rlp_list(body_items), b"\xc0", _rlp_list(withdrawal_records)])
        receipts_rlp = _rlp_list([c if tx.type == 0 else encode_nested(c)
                                  for c, (tx, *_) in zip(consensus, items, strict=True)])
        included = []
        receipts = []
        log_index = 0
        previous = 0
        for position, ((tx, sender, gas_used, ok, _, blobs), tx_hash, kept) in enumerate(
                zip(items, hashes, raw_logs_per_tx, strict=True)):
            price = _effective_price(tx, base_fee)
            included.append(IncludedTransaction(
                transaction=tx, hash=tx_hash, sender=sender, block_hash=block_hash,
                block_number=number, block_timestamp=timestamp, index=position, gas_price=price))
            logs = []
            for address, topics, data in kept:
                logs.append(Log(address=address, topics=topics, data=data, block_number=number,
                                transaction_hash=tx_hash, transaction_index=position,
                                block_hash=block_hash, block_timestamp=timestamp,
                                log_index=log_index))
                log_index += 1
            previous += gas_used
            created = (keccak(encode_nested([sender, tx.nonce]))[12:] if tx.to is None else None)
            receipts.append(Receipt(
                type=tx.type, status=1 if ok else 0, root=None, cumulative_gas_used=previous,
                logs_bloom=logs_bloom_of(kept), logs=tuple(logs), transaction_hash=tx_hash,
                transaction_index=position, block_hash=block_hash, block_number=number,
                sender=sender, to=tx.to, gas_used=gas_used, effective_gas_price=price,
                contract_address=created,
                blob_gas_used=GAS_PER_BLOB * blobs if blobs else None,
                blob_gas_price=1 if blobs else None))
        size = len(_rlp_list([header_rlp, *_list_payloads(body_rlp)]))
        block = Block(header=header, transactions=tuple(included), uncles=(),
                      withdrawals=withdrawals, size=size)
        return DenseBlock(block, tuple(receipts), header_rlp, body_rlp, receipts_rlp)

    def _transaction(self, kind: str, rng: Any, base_fee: int
                     ) -> tuple[Transaction, Address, int, bool,
                                list[tuple[Address, tuple[Hash32, ...], bytes]], int]:
        who = rng.randrange(len(self.senders))
        sender = self.senders[who]
        nonce = self.nonces[who]
        self.nonces[who] += 1
        ok = rng.random() >= 0.03
        tip = rng.choice((10**8, 5 * 10**8, 10**9, 2 * 10**9))
        cap = base_fee * 2 + tip
        y, r, s = self._signature(rng)
        other = self.senders[rng.randrange(len(self.senders))]
        word = other.rjust(32, b"\x00")
        amount = rng.randrange(1, 10**24)
        logs: list[tuple[Address, tuple[Hash32, ...], bytes]] = []
        blobs = 0
        tx: Transaction
        if kind == "ether":
            value = rng.randrange(10**15, 10**19)
            if rng.random() < 0.3:
                tx = LegacyTransaction(nonce=nonce, gas_price=base_fee + tip, gas=21_000, to=other,
                                       value=value, data=b"", v=self.chain_id * 2 + 35 + y,
                                       r=r, s=s)
            else:
                tx = DynamicFeeTransaction(chain_id=self.chain_id, nonce=nonce,
                                           max_priority_fee_per_gas=tip, max_fee_per_gas=cap,
                                           gas=21_000, to=other, value=value, data=b"",
                                           access_list=(), y_parity=y, r=r, s=s)
            return tx, sender, 21_000, True, logs, 0
        if kind in ("token", "approve", "access_list"):
            token = self.tokens[int(rng.paretovariate(1.2)) % len(self.tokens)]
            selector, topic = ((APPROVE_SELECTOR, APPROVAL_TOPIC) if kind == "approve"
                               else (TRANSFER_SELECTOR, TRANSFER_TOPIC))
            data = selector + word + amount.to_bytes(32, "big")
            logs.append((token, (topic, sender.rjust(32, b"\x00"), word), amount.to_bytes(32, "big")))
            gas = 46_000 if kind == "approve" else 52_000
            if kind == "access_list":
                access = (AccessListEntry(address=token, storage_keys=(
                    keccak(word), keccak(sender.rjust(32, b"\x00")))),)
                tx = AccessListTransaction(chain_id=self.chain_id, nonce=nonce,
                                           gas_price=base_fee + tip, gas=gas + 10_000, to=token,
                                           value=0, data=data, access_list=access, y_parity=y,
                                           r=r, s=s)
            else:
                tx = DynamicFeeTransaction(chain_id=self.chain_id, nonce=nonce,
                                           max_priority_fee_per_gas=tip, max_fee_per_gas=cap,
                                           gas=gas + 20_000, to=token, value=0, data=data,
                                           access_list=(), y_parity=y, r=r, s=s)
            return tx, sender, gas, ok, logs, 0
        if kind == "swap":
            pair = self.pairs[rng.randrange(len(self.pairs))]
            token_in, token_out = rng.sample(self.tokens, 2)
            out = rng.randrange(1, 10**22)
            reserve = rng.randrange(10**20, 10**30)
            data = (SWAP_SELECTOR + amount.to_bytes(32, "big") + out.to_bytes(32, "big")
                    + (160).to_bytes(32, "big") + sender.rjust(32, b"\x00")
                    + (timestamp_word := rng.randrange(2**32).to_bytes(32, "big"))
                    + (2).to_bytes(32, "big") + token_in.rjust(32, b"\x00")
                    + token_out.rjust(32, b"\x00"))
            del timestamp_word
            pad_sender, pad_pair = sender.rjust(32, b"\x00"), pair.rjust(32, b"\x00")
            logs.extend([
                (token_in, (TRANSFER_TOPIC, pad_sender, pad_pair), amount.to_bytes(32, "big")),
                (token_out, (TRANSFER_TOPIC, pad_pair, pad_sender), out.to_bytes(32, "big")),
                (pair, (SYNC_TOPIC,), reserve.to_bytes(32, "big") + (reserve // 3).to_bytes(32, "big")),
                (pair, (SWAP_TOPIC, self.router.rjust(32, b"\x00"), pad_sender),
                 amount.to_bytes(32, "big") + bytes(64) + out.to_bytes(32, "big")),
            ])
            tx = DynamicFeeTransaction(chain_id=self.chain_id, nonce=nonce,
                                       max_priority_fee_per_gas=tip, max_fee_per_gas=cap,
                                       gas=250_000, to=self.router, value=0, data=data,
                                       access_list=(), y_parity=y, r=r, s=s)
            return tx, sender, rng.randrange(110_000, 180_000), ok, logs, 0
        if kind == "create":
            code = self._code[rng.randrange(len(self._code))]
            tx = DynamicFeeTransaction(chain_id=self.chain_id, nonce=nonce,
                                       max_priority_fee_per_gas=tip, max_fee_per_gas=cap,
                                       gas=3_000_000, to=None, value=0, data=code,
                                       access_list=(), y_parity=y, r=r, s=s)
            return tx, sender, 53_000 + 200 * len(code), ok, logs, 0
        if kind == "blob":
            blobs = rng.randint(1, 3)
            hashes = tuple(b"\x01" + keccak(b"blob %d" % rng.getrandbits(64))[1:]
                           for _ in range(blobs))
            tx = BlobTransaction(chain_id=self.chain_id, nonce=nonce,
                                 max_priority_fee_per_gas=tip, max_fee_per_gas=cap, gas=21_000,
                                 to=ROLLUP_INBOX, value=0, data=b"", access_list=(),
                                 max_fee_per_blob_gas=10**9, blob_versioned_hashes=hashes,
                                 y_parity=y, r=r, s=s)
            return tx, sender, 21_000, True, logs, blobs
        # set_code: delegate the sender's account to a wallet contract, then call it
        ay, ar, as_ = self._signature(rng)
        authorization = Authorization(chain_id=self.chain_id, address=self.router, nonce=nonce + 1,
                                      y_parity=ay, r=ar, s=as_)
        tx = SetCodeTransaction(chain_id=self.chain_id, nonce=nonce, max_priority_fee_per_gas=tip,
                                max_fee_per_gas=cap, gas=100_000, to=sender, value=0,
                                data=b"", access_list=(), authorization_list=(authorization,),
                                y_parity=y, r=r, s=s)
        self.nonces[who] += 1
        return tx, sender, 46_000, ok, logs, 0


def _recovered(tx: Transaction, chain_id: int) -> Address:
    from coincurve import PublicKey

    from ethread.rlpcodec.transactions import signing_hash

    legacy = isinstance(tx, LegacyTransaction)
    digest = signing_hash(tx, chain_id if legacy else None)
    parity = (tx.v - 35 - 2 * chain_id) if isinstance(tx, LegacyTransaction) else tx.y_parity
    signature = tx.r.to_bytes(32, "big") + tx.s.to_bytes(32, "big") + bytes((parity,))
    public = PublicKey.from_signature_and_message(signature, digest, hasher=None)
    return keccak(public.format(False)[1:])[12:]


def logs_bloom_of(logs: Sequence[tuple[Address, tuple[Hash32, ...], bytes]]) -> bytes:
    """The bloom of raw logs ``(address, topics, data)``."""
    return ere_logs_bloom([[address, list(topics), data] for address, topics, data in logs])


def _receipt_record(kind: int, status: int, cumulative: int, bloom: bytes,
                    logs: Sequence[tuple[Address, tuple[Hash32, ...], bytes]]) -> bytes:
    payload = encode_nested([b"\x01" if status else b"", cumulative, bloom,
                             [[a, list(t), d] for a, t, d in logs]])
    return payload if kind == 0 else bytes((kind,)) + payload


def _effective_price(tx: Transaction, base_fee: int) -> int:
    if isinstance(tx, (LegacyTransaction, AccessListTransaction)):
        return tx.gas_price
    return min(tx.max_fee_per_gas, base_fee + tx.max_priority_fee_per_gas)


def _list_payloads(encoded_list: bytes) -> list[bytes]:
    """The encoded items of an encoded list (a block body's three parts)."""
    from ethread.rlpcodec.items import list_items

    starts, _ = list_items(encoded_list)
    return [encoded_list[a:b] for a, b in itertools.pairwise(starts)]


@dataclass(frozen=True, slots=True)
class DenseStores:
    """Where :func:`dense_history` wrote the same blocks."""

    lmdb: Path
    era1: Path
    ere: Path
    blocks: int
    transactions: int
    logs: int


def dense_history(
    folder: str | Path,
    blocks: int,
    *,
    transactions: int = 200,
    chain_id: int = DEV_CHAIN_ID,
    batch: int = 256,
    recover: bool = False,
    progress: Progress | None = None,
) -> DenseStores:
    """Write ``blocks`` dense blocks after a Prague genesis into an LMDB store
    (``folder/lmdb``), Era1 files (``folder/era1``, past the merge: total difficulty flat, as
    :func:`~ethread.era1.export_era1` with ``proof_of_work_only=False`` writes them) and
    ``ere`` files (``folder/ere``), all from one pass that makes each block once (no execution,
    no state: see the module docstring). Network name in the file names: ``devnet``."""
    from ethread.backends.lmdb import LMDBBackend
    from ethread.era1.accumulator import EPOCH_SIZE
    from ethread.era1.ere import EreWriter
    from ethread.era1.writer import Era1Writer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = DenseStores(folder / "lmdb", folder / "era1", folder / "ere", blocks, 0, 0)
    accounts = dev_accounts(1)
    genesis = parse_genesis(genesis_document(
        chain_id=chain_id, forks=PRAGUE_FORKS, accounts=accounts, timestamp=1_700_000_000,
        gas_limit=DENSE_GAS_LIMIT, extra_data=b"ethread dense"))
    maker = DenseMaker(chain_id, transactions, recover=recover)
    tx_count = log_count = 0
    with LMDBBackend(paths.lmdb) as store:
        ChainImporter(store, genesis, verify_seals=False)
        parent = _header_at(store, 0)
        genesis_block = store.block_by_hash(parent.hash)
        genesis_receipts = store.receipts(parent.hash)
        assert genesis_block is not None and genesis_receipts is not None
        from ethread.rlpcodec.blocks import body_rlp
        from ethread.rlpcodec.receipts import encode_receipts

        era1 = Era1Writer(0)
        ere = EreWriter(0)
        genesis_records = (encode_header(parent), body_rlp(genesis_block),
                           encode_receipts(genesis_receipts))
        td = parent.difficulty
        era1.add(parent.hash, *genesis_records, td)
        ere.add(parent.hash, *genesis_records, parent.difficulty,
                td if parent.difficulty else None)
        numbers = range(1, blocks + 1)
        for chunk in _chunks(numbers, batch):
            with store.import_batch():
                for number in chunk:
                    if number % EPOCH_SIZE == 0:
                        era1.write(paths.era1, "devnet")
                        ere.write(paths.ere, "devnet")
                        era1, ere = Era1Writer(number), EreWriter(number)
                    made = maker.make(parent, number)
                    store.write_block(made.block, made.receipts)
                    era1.add(made.block.hash, made.header_rlp, made.body_rlp, made.receipts_rlp,
                             td)
                    ere.add(made.block.hash, made.header_rlp, made.body_rlp, made.receipts_rlp,
                            0, None)
                    tx_count += len(made.receipts)
                    log_count += sum(len(r.logs) for r in made.receipts)
                    parent = made.block.header
            if progress is not None:
                progress(chunk[-1], blocks)
        era1.write(paths.era1, "devnet")
        ere.write(paths.ere, "devnet")
    return DenseStores(paths.lmdb, paths.era1, paths.ere, blocks, tx_count, log_count)


def era1_epochs(folder: str | Path, files: int, blocks: int, transactions: int, *,
                first_epoch: int = 1) -> list[Path]:
    """Era1 files of epochs ``first_epoch ..`` (``files`` of them, one an epoch, as a mainnet
    folder holds 1,897), each with ``blocks`` dense blocks of ``transactions`` transactions at
    the start of its epoch (:class:`DenseMaker`; network ``devnet``, total difficulty flat as
    after the merge, headers chained across the gaps). Many small files, for what costs per
    file. Epoch 0 is left out by default: the maker numbers withdrawals from block 1."""
    from ethread.era1.accumulator import EPOCH_SIZE
    from ethread.era1.writer import Era1Writer

    if first_epoch < 1:
        raise ValueError("the maker numbers withdrawals from block 1: first_epoch >= 1")
    maker = DenseMaker(DEV_CHAIN_ID, transactions, seed=first_epoch + 1)
    zero = b"\x00" * 32
    parent = Header(
        parent_hash=zero, uncles_hash=zero, coinbase=b"\x00" * 20, state_root=zero,
        transactions_root=zero, receipts_root=zero, logs_bloom=b"\x00" * 256, difficulty=0,
        number=0, gas_limit=DENSE_GAS_LIMIT, gas_used=DENSE_GAS_LIMIT // 2,
        timestamp=1_700_000_000, extra_data=b"", mix_hash=zero, nonce=b"\x00" * 8,
        base_fee_per_gas=GWEI, withdrawals_root=zero, blob_gas_used=0, excess_blob_gas=0,
        parent_beacon_block_root=zero, requests_hash=zero, hash=b"\x01" * 32)
    written = []
    for epoch in range(first_epoch, first_epoch + files):
        writer = Era1Writer(epoch * EPOCH_SIZE)
        for number in range(epoch * EPOCH_SIZE, epoch * EPOCH_SIZE + blocks):
            made = maker.make(parent, number)
            writer.add(made.block.hash, made.header_rlp, made.body_rlp, made.receipts_rlp, 1)
            parent = made.block.header
        written.append(writer.write(folder, "devnet"))
    return written
