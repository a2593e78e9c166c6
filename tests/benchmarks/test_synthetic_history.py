"""The synthetic benchmark history (``benchmarks/benchlib/synthetic_history.py``): well-formed headers
chained by hash, blocks that match the canonical encodings, a history that resumes to the
same chain, and signed transactions whose senders recover."""

from __future__ import annotations

from itertools import pairwise
from types import SimpleNamespace
from typing import Any, cast

import pytest
import rlp
from benchlib.synthetic_history import (
    TRANSFER_TOPIC,
    single_entry_trie_root,
    synthetic_history,
)
from eth.vm.forks.london.headers import calculate_expected_base_fee_per_gas
from eth_bloom.bloom import BloomFilter
from eth_keys.datatypes import Signature
from eth_utils import keccak
from trie import HexaryTrie

from ethread.backends.memory import MemoryBackend
from ethread.models import (
    LegacyTransaction,
)
from ethread.rlpcodec.headers import encode_header
from ethread.rlpcodec.receipts import encode_receipt
from ethread.rlpcodec.transactions import encode_transaction, signing_hash, transaction_hash
from tests.support.chain_reads import blocks_of, raw_block, receipts_of


@pytest.fixture(scope="module")
def history() -> MemoryBackend:
    backend = MemoryBackend()
    synthetic_history(backend, 300, senders=3, emitters=2)
    return backend


def test_synthetic_history_chains_well_formed_headers(history: MemoryBackend) -> None:
    blocks = list(blocks_of(history))
    assert len(blocks) == 301
    for parent, block in pairwise(blocks):
        header = block.header
        assert header.parent_hash == parent.hash and header.number == parent.number + 1
        assert header.timestamp > parent.header.timestamp
        assert keccak(encode_header(header)) == header.hash
        # py-evm's rule reads only these three fields of the parent
        fields = SimpleNamespace(gas_limit=parent.header.gas_limit,
                                 gas_used=parent.header.gas_used,
                                 base_fee_per_gas=parent.header.base_fee_per_gas)
        assert header.base_fee_per_gas == calculate_expected_base_fee_per_gas(cast(Any, fields))


def test_synthetic_blocks_match_the_canonical_encodings(history: MemoryBackend) -> None:
    """Every synthetic block holds together: hashes, tries, size and bloom recompute."""
    for block in list(blocks_of(history))[1:]:
        (itx,) = block.transactions
        (receipt,) = receipts_of(history, block)
        assert transaction_hash(itx.transaction) == itx.hash == receipt.transaction_hash
        tx_trie = HexaryTrie({})
        tx_trie[rlp.encode(0)] = encode_transaction(itx.transaction)
        assert block.header.transactions_root == tx_trie.root_hash
        encoded = encode_receipt(receipt.type, 1, receipt.cumulative_gas_used,
                                 receipt.logs_bloom, receipt.logs)
        assert block.header.receipts_root == single_entry_trie_root(encoded)
        assert block.size == len(raw_block(block))
        (log,) = receipt.logs
        assert log.topics[0] == TRANSFER_TOPIC and log.address == itx.transaction.to
        bloom = BloomFilter(int.from_bytes(block.header.logs_bloom, "big"))
        assert log.address in bloom and all(t in bloom for t in log.topics)


def test_synthetic_history_resumes_to_the_same_chain(history: MemoryBackend) -> None:
    backend = MemoryBackend()
    synthetic_history(backend, 120, senders=3, emitters=2)
    result = synthetic_history(backend, 300, senders=3, emitters=2)
    assert result.head == 300
    assert backend.canonical_hash(300) == history.canonical_hash(300)


def test_signed_synthetic_history_recovers_its_senders() -> None:
    backend = MemoryBackend()
    result = synthetic_history(backend, 6, senders=2, sign=True)
    for block in list(blocks_of(backend))[1:]:
        (itx,) = block.transactions
        tx = itx.transaction
        assert not isinstance(tx, LegacyTransaction)
        public = Signature(vrs=(tx.y_parity, tx.r, tx.s)).recover_public_key_from_msg_hash(
            signing_hash(tx))
        assert public.to_canonical_address() == itx.sender
        assert itx.sender in result.senders
