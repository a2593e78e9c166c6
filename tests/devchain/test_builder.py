"""The dev chain (``ethread.devchain.builder``) as the demo chain uses it: what it builds must
be a valid chain (every block re-validated by the importer), and hold what the tests of the
read methods rely on: every transaction kind, logs, reverts, uncles, withdrawals, blobs,
delegations. What each part does on its own is tested beside it (test_core, test_mining,
test_sending, test_genesis)."""

from __future__ import annotations

from collections import Counter

import pytest
from eth_bloom.bloom import BloomFilter
from eth_keys.datatypes import Signature

from ethread.backends.memory import MemoryBackend
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import (
    contracts,
)
from ethread.devchain.demo import Demo, demo_chain
from ethread.models import (
    LegacyTransaction,
)
from ethread.rlpcodec.transactions import signing_hash
from tests.support.chain_reads import blocks_of, raw_block, receipts_of
from tests.support.contracts import decode_env, load_calldata

MERGE, SHANGHAI, CANCUN, PRAGUE = 36, 39, 42, 45  # RPC_COMPAT_FORKS with 10-second blocks


@pytest.fixture(scope="module")
def demo() -> Demo:
    return demo_chain(MemoryBackend())


# --------------------------------------------------------------------------------------------
# The demo chain is a valid chain


def test_demo_chain_reimports_block_for_block_into_a_fresh_store(demo: Demo) -> None:
    """Every stored block re-encodes to bytes a second importer executes and accepts, with
    the same hashes: the dev chain's blocks are real blocks, not shortcuts."""
    blocks = list(blocks_of(demo.chain.backend))
    fresh = MemoryBackend()
    importer = ChainImporter(fresh, parse_genesis(demo.chain.genesis), verify_seals=False)
    assert importer.import_blocks(raw_block(b) for b in blocks[1:]) == len(blocks) - 1
    assert [fresh.canonical_hash(b.number) for b in blocks] == [b.hash for b in blocks]
    assert sum(b.size for b in blocks[1:]) == sum(len(raw_block(b)) for b in blocks[1:])


def test_pre_merge_blocks_carry_zero_seals(demo: Demo) -> None:
    """Which is why the importer runs with seal checks off (checking one ethash seal would
    take this suite twenty seconds, so that is not shown here)."""
    blocks = list(blocks_of(demo.chain.backend))
    for block in blocks[1:MERGE]:
        assert block.header.difficulty > 0
        assert block.header.nonce == b"\x00" * 8 and block.header.mix_hash == b"\x00" * 32
    for block in blocks[MERGE:]:
        assert block.header.difficulty == 0 and block.header.nonce == b"\x00" * 8
        assert block.header.mix_hash != b"\x00" * 32  # the stand-in for prevrandao


def test_demo_chain_follows_the_fork_schedule(demo: Demo) -> None:
    chain = demo.chain
    head = chain.head
    assert head.number == 50
    assert chain.config.fork_at(head.number, head.timestamp) == "prague"
    blocks = list(blocks_of(chain.backend))
    first_with = {
        field: next(b.number for b in blocks if getattr(b.header, field) is not None)
        for field in ("base_fee_per_gas", "withdrawals_root", "excess_blob_gas", "requests_hash")
    }
    assert first_with == {"base_fee_per_gas": 27, "withdrawals_root": SHANGHAI,
                          "excess_blob_gas": CANCUN, "requests_hash": PRAGUE}
    assert (chain.backend.pointer("safe"), chain.backend.pointer("finalized")) == (49, 48)


# --------------------------------------------------------------------------------------------
# What the demo chain holds


def test_every_transaction_kind_is_present_with_its_sender(demo: Demo) -> None:
    """Senders stored at import are the dev accounts that signed, and recovering each
    signature over :func:`signing_hash` gives them back, for all five kinds."""
    chain = demo.chain
    accounts = {a.address for a in chain.accounts}
    kinds: Counter[int] = Counter()
    legacy_vs: set[str] = set()
    for block in blocks_of(chain.backend):
        for itx in block.transactions:
            tx = itx.transaction
            kinds[tx.type] += 1
            assert itx.sender in accounts
            if isinstance(tx, LegacyTransaction):
                protected = tx.chain_id is not None
                legacy_vs.add("protected" if protected else "unprotected")
                assert tx.chain_id in (None, chain.chain_id)
                digest = signing_hash(tx, tx.chain_id)
                parity = tx.v - (35 + 2 * chain.chain_id if protected else 27)
            else:
                digest, parity = signing_hash(tx), tx.y_parity
            signature = Signature(vrs=(parity, tx.r, tx.s))
            recovered = signature.recover_public_key_from_msg_hash(digest)
            assert recovered.to_canonical_address() == itx.sender
    assert set(kinds) == {0, 1, 2, 3, 4}
    assert legacy_vs == {"protected", "unprotected"}


def test_transaction_kinds_start_at_their_forks(demo: Demo) -> None:
    first: dict[int, int] = {}
    for block in blocks_of(demo.chain.backend):
        for itx in block.transactions:
            first.setdefault(itx.transaction.type, block.number)
    assert first[1] >= 24 and first[2] >= 27 and first[3] >= CANCUN and first[4] >= PRAGUE


def test_logs_carry_block_wide_indexes_and_every_topic_count(demo: Demo) -> None:
    backend = demo.chain.backend
    topic_counts: set[int] = set()
    blocks_with_logs_in_several_txs = 0
    for block in blocks_of(backend):
        logs = [log for r in receipts_of(backend, block) for log in r.logs]
        assert [log.log_index for log in logs] == list(range(len(logs)))
        for log in logs:
            assert (log.block_hash, log.block_number) == (block.hash, block.number)
            assert log.block_timestamp == block.header.timestamp
            topic_counts.add(len(log.topics))
        if len({log.transaction_index for log in logs}) > 1:
            blocks_with_logs_in_several_txs += 1
    assert topic_counts == {0, 1, 2, 3, 4}
    assert blocks_with_logs_in_several_txs >= 1


def test_receipts_bloom_covers_their_logs(demo: Demo) -> None:
    backend = demo.chain.backend
    for block in blocks_of(backend):
        for receipt in receipts_of(backend, block):
            bloom = BloomFilter(int.from_bytes(receipt.logs_bloom, "big"))
            for log in receipt.logs:
                assert log.address in bloom
                assert all(topic in bloom for topic in log.topics)


def test_uncles_only_before_the_merge_and_never_canonical(demo: Demo) -> None:
    backend = demo.chain.backend
    uncles_seen = 0
    for block in blocks_of(backend):
        for uncle in block.uncles:
            uncles_seen += 1
            assert block.number < MERGE
            assert block.number - 6 <= uncle.number < block.number
            assert backend.canonical_hash(uncle.number) != uncle.hash
            assert backend.canonical_hash(uncle.number - 1) == uncle.parent_hash
    assert uncles_seen >= 5
    assert any(len(b.uncles) == 2 for b in blocks_of(backend))


def test_withdrawals_from_shanghai_with_consecutive_indexes(demo: Demo) -> None:
    indexes = []
    for block in blocks_of(demo.chain.backend):
        if block.number < SHANGHAI:
            assert block.withdrawals is None
        else:
            assert block.withdrawals is not None
            indexes += [w.index for w in block.withdrawals]
    assert len(indexes) >= 3
    assert indexes == list(range(len(indexes)))
    assert demo.chain.balance(b"\x99" * 20) == 32 * 10**9 * 10**9  # gwei to wei


def test_revert_contract_fails_with_panic_and_error(demo: Demo) -> None:
    backend, reverter = demo.chain.backend, demo.reverter
    assert reverter is not None
    statuses = {}
    for block in blocks_of(backend):
        for itx, receipt in zip(block.transactions, receipts_of(backend, block), strict=True):
            if itx.transaction.to == reverter:
                statuses[itx.transaction.data] = receipt.status
    assert statuses == {contracts.PANIC_CALL: 0, contracts.ERROR_CALL: 0,
                        contracts.BARE_REVERT_CALL: 0, b"\x07": 1}
    panic = demo.chain.call(reverter, contracts.PANIC_CALL)
    error = demo.chain.call(reverter, contracts.ERROR_CALL)
    assert not panic.success and panic.output == contracts.panic_data(1)
    assert not error.success and error.output == contracts.error_data("user error")
    assert demo.chain.call(reverter, b"\x07").success


def test_contract_creations_have_receipts_with_their_address(demo: Demo) -> None:
    backend = demo.chain.backend
    created = {r.contract_address for b in blocks_of(backend) for r in receipts_of(backend, b)}
    assert {demo.log_emitter, demo.storage, demo.reverter, demo.env_echo} <= created
    assert demo.chain.code(demo.log_emitter) == contracts.LOG_EMITTER
    assert demo.chain.code(demo.storage) == contracts.STORAGE


def test_pre_byzantium_receipts_carry_a_state_root(demo: Demo) -> None:
    backend = demo.chain.backend
    for block in blocks_of(backend):
        for receipt in receipts_of(backend, block):
            if block.number < 9:
                assert receipt.status is None and receipt.root is not None
            else:
                assert receipt.status in (0, 1) and receipt.root is None


def test_blob_transactions_account_for_their_blob_gas(demo: Demo) -> None:
    backend = demo.chain.backend
    blob_blocks = 0
    for block in blocks_of(backend):
        used = 0
        for receipt in receipts_of(backend, block):
            if receipt.type == 3:
                assert receipt.blob_gas_used is not None and receipt.blob_gas_price == 1
                used += receipt.blob_gas_used
        if used:
            blob_blocks += 1
            assert block.header.blob_gas_used == used
    assert blob_blocks >= 3


def test_set_code_delegates_an_account_that_then_logs(demo: Demo) -> None:
    chain, delegated = demo.chain, demo.delegated
    assert delegated is not None
    assert chain.code(delegated.address) == b"\xef\x01\x00" + demo.log_emitter
    logs_by_delegated = [
        log for b in blocks_of(chain.backend) for r in receipts_of(chain.backend, b)
        for log in r.logs if log.address == delegated.address
    ]
    assert [log.data for log in logs_by_delegated] == [b"from an EOA"]


def test_storage_and_environment_are_readable(demo: Demo) -> None:
    chain = demo.chain
    assert demo.env_echo is not None
    assert [chain.storage(demo.storage, slot) for slot in range(7)] == [1, 20, 3, 4, 5, 6, 7]
    assert chain.storage(demo.storage, 1, at=23) == 2  # before block 24 rewrote it
    loaded = chain.call(demo.storage, load_calldata(6)).output
    assert int.from_bytes(loaded, "big") == 7
    sender = chain.accounts[1].address
    env = decode_env(chain.call(demo.env_echo, sender=sender, at=CANCUN).output)
    header = chain.block(CANCUN).header
    assert env["NUMBER"] == CANCUN and env["TIMESTAMP"] == header.timestamp
    assert env["CHAINID"] == chain.chain_id
    assert env["COINBASE"] == int.from_bytes(header.coinbase, "big")
    assert env["BASEFEE"] == header.base_fee_per_gas
    assert env["PREVRANDAO"] == int.from_bytes(header.mix_hash, "big")
    assert env["CALLER"] == env["ORIGIN"] == int.from_bytes(sender, "big")
    assert env["PARENTHASH"] == int.from_bytes(header.parent_hash, "big")
