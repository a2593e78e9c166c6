"""The dev chain (``ethread.devchain.builder``): what it builds must be a valid chain (every
block re-validated by the importer), and hold what the tests of the read methods rely on:
every transaction kind, logs, reverts, uncles, withdrawals, blobs, delegations. It is safe by
default: the newest fork, creation bytecode deployed as such (a failed creation raising),
nothing consumed by a refused send, and blocks stored as the import path makes them."""

from __future__ import annotations

from collections import Counter

import pytest
import rlp
from eth_abi.abi import encode
from eth_bloom.bloom import BloomFilter
from eth_keys.datatypes import Signature
from eth_utils import keccak

import ethread
from ethread.backends.memory import MemoryBackend
from ethread.chain.genesis import parse_genesis
from ethread.chain.importer import ChainImporter
from ethread.devchain import (
    PRAGUE_FORKS,
    RPC_COMPAT_FORKS,
    DevChain,
    DevChainError,
    ForkSchedule,
    contracts,
    genesis_document,
)
from ethread.devchain.demo import TICK_TOPIC, Demo, demo_chain
from ethread.devchain.signing import (
    sign_authorization,
    versioned_hash,
)
from ethread.errors import TransactionRejected
from ethread.models import (
    AccessListEntry,
    LegacyTransaction,
    SetCodeTransaction,
)
from ethread.rlpcodec.blocks import block_item
from ethread.rlpcodec.transactions import signing_hash
from tests.support.chain_reads import blocks_of, raw_block, receipts_of

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
    loaded = chain.call(demo.storage, contracts.load_calldata(6)).output
    assert int.from_bytes(loaded, "big") == 7
    sender = chain.accounts[1].address
    env = contracts.decode_env(chain.call(demo.env_echo, sender=sender, at=CANCUN).output)
    header = chain.block(CANCUN).header
    assert env["NUMBER"] == CANCUN and env["TIMESTAMP"] == header.timestamp
    assert env["CHAINID"] == chain.chain_id
    assert env["COINBASE"] == int.from_bytes(header.coinbase, "big")
    assert env["BASEFEE"] == header.base_fee_per_gas
    assert env["PREVRANDAO"] == int.from_bytes(header.mix_hash, "big")
    assert env["CALLER"] == env["ORIGIN"] == int.from_bytes(sender, "big")
    assert env["PARENTHASH"] == int.from_bytes(header.parent_hash, "big")


def test_next_block_adds_a_block_with_a_tick_log() -> None:
    backend = MemoryBackend()
    chain = DevChain(backend, forks=PRAGUE_FORKS, accounts=3)
    demo = Demo(chain=chain, log_emitter=chain.deploy_runtime(chain.accounts[0], contracts.LOG_EMITTER),
                storage=chain.deploy_runtime(chain.accounts[0], contracts.STORAGE))
    chain.mine()
    chain.mine()
    block = demo.next_block()
    assert block.number == 3 and backend.pointer("finalized") == 1
    (receipt,) = receipts_of(backend, block)
    (log,) = receipt.logs
    assert log.address == demo.log_emitter and log.topics[0] == TICK_TOPIC
    assert log.topics[1] == (3).to_bytes(32, "big")


# --------------------------------------------------------------------------------------------
# The builder


@pytest.fixture(scope="module")
def prague() -> DevChain:
    return DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=4)


def test_prague_from_genesis_takes_every_kind_in_one_block(prague: DevChain) -> None:
    a = prague.accounts
    emitter = prague.deploy_runtime(a[0], contracts.LOG_EMITTER)
    prague.mine()
    topic = keccak(b"one")
    hashes = [
        prague.send(a[1], emitter, data=contracts.log_calldata([topic]), kind="legacy"),
        prague.send(a[1], emitter, data=contracts.log_calldata([topic]), kind="legacy",
                    protected=False),
        prague.send(a[2], emitter, kind="access-list",
                    access_list=[AccessListEntry(address=emitter, storage_keys=())]),
        prague.send(a[2], emitter, data=contracts.log_calldata([topic, topic])),
        prague.send(a[3], a[0].address, kind="blob", blob_hashes=[versioned_hash(b"x")]),
        # self-sponsored: the authorization's nonce is one above the transaction's
        prague.send(a[3], a[3].address, kind="set-code", delegations=[(a[3], emitter)]),
    ]
    block = prague.mine(withdrawals=[(a[0].address, 1)])
    assert [t.hash for t in block.transactions] == hashes
    assert [t.transaction.type for t in block.transactions] == [0, 0, 1, 2, 3, 4]
    receipts = [prague.receipt(h) for h in hashes]
    assert all(r is not None and r.status == 1 for r in receipts)
    assert [log.log_index for r in receipts if r for log in r.logs] == [0, 1, 2]
    assert prague.code(a[3].address) == b"\xef\x01\x00" + emitter
    assert prague.nonce(a[3].address) == 3  # two transactions' worth: sent, authorized


def test_presigned_authorization_and_chain_id_zero(prague: DevChain) -> None:
    a = prague.accounts
    with pytest.raises(DevChainError, match="create a contract"):
        prague.send(a[0], None, kind="set-code")
    target = prague.deploy_runtime(a[0], contracts.STORAGE)
    prague.mine()
    auth = sign_authorization(a[2], 0, target, prague.nonce(a[2].address))
    tx_hash = prague.send(a[1], a[2].address, kind="set-code", delegations=[auth])
    prague.mine()
    receipt = prague.receipt(tx_hash)
    assert receipt is not None and receipt.status == 1
    block = prague.block(receipt.block_number)
    tx = block.transactions[0].transaction
    assert isinstance(tx, SetCodeTransaction) and tx.authorization_list == (auth,)
    assert prague.code(a[2].address) == b"\xef\x01\x00" + target


def test_kinds_uncles_and_withdrawals_are_refused_before_their_fork() -> None:
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("london"), accounts=2)
    a = chain.accounts
    with pytest.raises(DevChainError, match="cancun"):
        chain.send(a[0], a[1].address, kind="blob", blob_hashes=[versioned_hash(b"")])
    with pytest.raises(DevChainError, match="Shanghai"):
        chain.mine(withdrawals=[(a[0].address, 1)])
    chain.send(a[0], a[1].address, value=1)
    chain.mine()
    chain.mine(uncles=[chain.sibling(1)])
    merged = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis("paris"), accounts=1)
    merged.mine()
    with pytest.raises(DevChainError, match="merge"):
        merged.sibling()


def test_a_failed_block_drops_the_pending_transactions() -> None:
    chain = DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
    chain.deploy(chain.accounts[0], "0x60006000fd")  # a constructor that reverts
    with pytest.raises(DevChainError, match="deployment"):
        chain.mine()
    assert chain.pending == () and chain.head.number == 0
    chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
    assert chain.mine().number == 1


def test_reopening_a_store_continues_the_chain() -> None:
    backend = MemoryBackend()
    first = DevChain(backend, forks=PRAGUE_FORKS, accounts=2)
    first.mine(withdrawals=[(first.accounts[0].address, 1)])
    again = DevChain(backend, forks=PRAGUE_FORKS, accounts=2)
    block = again.mine(withdrawals=[(again.accounts[1].address, 1)])
    assert block.number == 2 and block.withdrawals is not None
    assert block.withdrawals[0].index == 1


def test_fork_schedule_genesis_config_round_trips_through_chain_config() -> None:
    document = genesis_document(forks=RPC_COMPAT_FORKS)
    config = parse_genesis(document).config
    assert config.fork_at(35, 350) == "gray_glacier" and config.fork_at(36, 360) == "paris"
    assert config.fork_at(38, 389) == "paris" and config.fork_at(39, 390) == "shanghai"
    assert config.fork_at(45, 450) == "prague"
    assert document["config"]["eip155Block"] == 6
    with pytest.raises(ValueError, match="order"):
        ForkSchedule(blocks=(("homestead", 5), ("byzantium", 2)))
    with pytest.raises(ValueError, match="merge"):
        ForkSchedule(blocks=(("homestead", 0),), times=(("shanghai", 0),))


# --------------------------------------------------------------------------------------------
# Contracts


def test_assembler_resolves_labels_and_rejects_mistakes() -> None:
    code = contracts.assemble("@end", "JUMP", 0xFFFF, b"\x00\x01", "end:", "STOP")
    assert code == bytes.fromhex("61000a" "56" "61ffff" "610001" "5b" "00")
    for bad in (["NOPE"], ["@missing"], ["a:", "a:"], [2**256], [b""]):
        with pytest.raises(contracts.AssemblyError):
            contracts.assemble(*bad)


# --------------------------------------------------------------------------------------------
# Synthetic history


STORE = bytes.fromhex("60003560005500")  # SSTORE(0, calldata word 0)


def _constructor_storing_its_argument(runtime: bytes) -> bytes:
    """Creation code whose constructor stores its one uint256 argument (the last 32 bytes of
    the code) in slot 0, then returns ``runtime``."""

    def prefix(start: int) -> bytes:
        return contracts.assemble(
            32, "CODESIZE", "SUB", 32, "SWAP1", 0, "CODECOPY",  # memory[0:32] = the argument
            0, "MLOAD", 0, "SSTORE",
            len(runtime).to_bytes(2, "big"), "DUP1", start.to_bytes(2, "big"), 0, "CODECOPY",
            0, "RETURN",
        )

    return prefix(len(prefix(0))) + runtime


CONSTRUCTOR = _constructor_storing_its_argument(STORE)


def test_the_newest_fork_from_genesis(chain: DevChain) -> None:
    assert chain.next_fork() == "osaka"
    assert chain.config.fork_at(0, 0) == "osaka"


def test_deploy_takes_creation_bytecode_and_constructor_arguments(chain: DevChain) -> None:
    owner = chain.accounts[0]
    encoded = chain.deploy(owner, CONSTRUCTOR, encode(["uint256"], [41]))
    abi = [{"type": "constructor", "inputs": [{"name": "x", "type": "uint256"}]}]
    by_abi = chain.deploy(owner, "0x" + CONSTRUCTOR.hex(), abi=abi, args=(42,))
    chain.mine()
    assert chain.code(encoded) == STORE and chain.storage(encoded, 0) == 41
    assert chain.code(by_abi) == STORE and chain.storage(by_abi, 0) == 42
    runtime = chain.deploy_runtime(owner, STORE)
    chain.mine()
    assert chain.code(runtime) == STORE
    with pytest.raises(TypeError, match="abi"):
        chain.deploy(owner, CONSTRUCTOR, args=(1,))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        chain.deploy(owner, CONSTRUCTOR, abi=abi, args=())


def test_a_failed_creation_raises_and_stores_nothing(chain: DevChain) -> None:
    owner = chain.accounts[0]
    chain.deploy(owner, "0x60006000fd")  # PUSH1 0 PUSH1 0 REVERT
    with pytest.raises(DevChainError, match=r"the deployment of 0x[0-9a-f]{40} .* failed"):
        chain.mine()
    assert chain.head.number == 0 and chain.pending == ()


def test_a_refused_send_consumes_no_nonce(chain: DevChain) -> None:
    sender, other = chain.accounts[:2]
    with pytest.raises(TransactionRejected, match="intrinsic gas too low: gas 20000, minimum needed 21000"):
        chain.send(sender, other.address, value=1, gas=20_000)
    with pytest.raises(TransactionRejected, match="insufficient funds"):
        chain.send(sender, other.address, value=10**30)
    with pytest.raises(TypeError, match="DevAccount"):
        chain.send(sender.address, other.address)  # type: ignore[arg-type]
    chain.send(sender, other.address, value=1)
    block = chain.mine()
    assert block.transactions[0].transaction.nonce == 0 and chain.nonce(sender.address) == 1


def test_blocks_stored_without_a_second_execution_reimport_block_for_block() -> None:
    """A test chain executes each block once (``revalidate=False``, the default); what it
    stores is still exactly what the full import path makes of the same block."""
    chain = DevChain(ethread.MemoryBackend(), accounts=3)
    a, b, c = chain.accounts
    emitter = chain.deploy_runtime(a, contracts.LOG_EMITTER)
    chain.send(b, c.address, value=5, kind="legacy")
    chain.mine()
    chain.send(a, emitter, data=contracts.log_calldata([b"\x01" * 32], b"x"), kind="access-list")
    chain.send(c, a.address, value=1, delegations=[(b, emitter)], kind="set-code")
    chain.mine()
    again = ethread.MemoryBackend()
    replay = ChainImporter(again, parse_genesis(chain.genesis), verify_seals=False)
    for number in range(1, chain.head.number + 1):
        assert replay.import_block(rlp.encode(block_item(
            chain.block(number).header, [t.transaction for t in chain.block(number).transactions],
            chain.block(number).uncles, chain.block(number).withdrawals)))
        original, copy = chain.block(number), again.block_by_hash(chain.block(number).hash)
        assert copy == original
        assert again.receipts(original.hash) == chain.backend.receipts(original.hash)


def test_a_genesis_base_fee_is_the_first_blocks() -> None:
    chain = DevChain(MemoryBackend(), accounts=1, base_fee=7)
    assert chain.head.base_fee_per_gas == 7
    chain.mine()  # empty: EIP-1559 takes 7 // 8 = 0 off
    assert chain.head.number == 1 and chain.head.base_fee_per_gas == 7


def test_with_a_clock_blocks_follow_it_and_its_jumps_last() -> None:
    now = [5_000]
    chain = DevChain(MemoryBackend(), accounts=1, genesis_timestamp=4_000,
                     clock=lambda: now[0])
    assert chain.mine().header.timestamp == 5_000
    assert chain.mine().header.timestamp == 5_001  # at least one second after its parent
    chain.increase_time(100)
    assert chain.mine().header.timestamp == 5_100
    now[0] = 5_050
    assert chain.mine().header.timestamp == 5_150  # the jump stays
    chain.set_next_block_timestamp(9_000)
    assert chain.mine().header.timestamp == 9_000
    now[0] = 5_060
    assert chain.mine().header.timestamp == 9_010  # the clock runs on from the time set
