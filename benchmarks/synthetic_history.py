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
from collections.abc import Iterator
from dataclasses import dataclass, field

import rlp
from eth.constants import BLANK_ROOT_HASH, EMPTY_UNCLE_HASH
from eth.vm.forks.london.headers import calculate_expected_base_fee_per_gas
from eth_bloom import BloomFilter
from eth_utils import keccak
from trie import HexaryTrie

from ethread.backend import WritableBackend
from ethread.canonical import rlp_list_length
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import DEV_CHAIN_ID, GWEI, PRAGUE_FORKS, DevChainError, genesis_document
from ethread.devchain.signing import DevAccount, dev_accounts, sign_transaction
from ethread.encoding import encode_header, encode_receipt, encode_transaction
from ethread.models import (
    Address,
    Block,
    DynamicFeeTransaction,
    Hash32,
    Header,
    IncludedTransaction,
    Log,
    Receipt,
)
from ethread.progress import Progress

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
        # The hash is filled in after construction, as ethread.encoding's decoder does.
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
