"""``ethread serve --txpool``: a served chain that takes transactions into a pool checked as
geth's is, answers txpool_* and builds blocks with testing_buildBlockV1.

Two halves: the Osaka conformance cases replayed over HTTP against a fresh ``ethread serve``
per method folder (a pool starts empty), and the pool's rules one by one on a dev-built
Osaka chain in memory (each geth message, replacement, queued promotion, bounds, building
from the pool, the read-only answer without a pool).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain
from ethread.devchain.genesis import ForkSchedule
from ethread.devchain.payload import BuildFailed
from ethread.devchain.served_pool import ServedPool
from ethread.devchain.signing import DevAccount, dev_accounts, sign_transaction
from ethread.devchain.txpool import BlobSidecar, Pooled, PoolLimits
from ethread.errors import MethodNotFound, TransactionRejected
from ethread.models import (
    BlobTransaction,
    DynamicFeeTransaction,
    LegacyTransaction,
    SetCodeTransaction,
    Transaction,
)
from ethread.rlpcodec.transactions import encode_transaction, transaction_hash
from ethread.rpc.context import Context
from ethread.rpc.table import call_method
from tests.support.paths import REPO, conformance_dir
from tests.support.rpc_cases import first_difference, is_speconly, read_case, shape_difference
from tests.support.server_harness import ServeProcess, post

FOLDERS = ("eth_sendRawTransaction", "txpool_status", "txpool_content", "txpool_contentFrom",
           "testing_buildBlockV1")
KEY = "txpool-test-key-0123"
GWEI = 10**9
ETHER = 10**18


def _osaka() -> Path:
    return conformance_dir() / "osaka"


@pytest.fixture(params=FOLDERS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(method folder, URL) of a fresh ``ethread serve --txpool`` on the Osaka chain."""
    osaka = _osaka()
    args = ["--genesis", str(osaka / "genesis.json"), "--blocks", str(osaka / "chain.rlp"),
            "--no-verify-seals", "--txpool", "--api-key", KEY]
    with ServeProcess(args, cwd=REPO) as server:
        yield request.param, f"http://{server.host}:{server.port}/v3/{KEY}"


def _replay(url: str, path: Path) -> str | None:
    compare = shape_difference if is_speconly(path) else first_difference
    for exchange in read_case(path):
        _, _, got = post(url, None, raw=exchange.request.encode())
        if "id" not in exchange.expected:
            got.pop("id", None)
        diff = compare(got, exchange.expected)
        if diff:
            return diff
    return None


NEEDS_PRIOR_POOL = {
    # The generator's node held transactions from other tests when it answered (four of one
    # sender, one of another); a fresh node's empty pool cannot have the same keys.
    "txpool_content/get-content.io": "$.result.pending.0x0c2c51a0990AeE1d73C1228de158688341557508: missing",
}


def test_conformance_cases_over_http(served: tuple[str, str]) -> None:
    folder, url = served
    failures = {}
    for path in sorted((_osaka() / "cases" / folder).glob("*.io")):
        name = f"{folder}/{path.name}"
        diff = _replay(url, path)
        if diff != NEEDS_PRIOR_POOL.get(name):
            failures[name] = diff
    assert not failures, json.dumps(failures, indent=1)


def test_pool_content_matches_geth_objects_after_the_sends() -> None:
    """The pool after the eth_sendRawTransaction cases, read with txpool_content: each
    transaction object is exactly the one geth wrote for the same transaction."""
    osaka = _osaka()
    args = ["--genesis", str(osaka / "genesis.json"), "--blocks", str(osaka / "chain.rlp"),
            "--no-verify-seals", "--txpool", "--api-key", KEY]
    sender = "0x0c2c51a0990AeE1d73C1228de158688341557508"

    def count(url: str, tag: str) -> Any:
        return post(url, {"jsonrpc": "2.0", "id": 3, "method": "eth_getTransactionCount",
                          "params": [sender, tag]})[2]["result"]

    with ServeProcess(args, cwd=REPO) as server:
        url = f"http://{server.host}:{server.port}/v3/{KEY}"
        latest = count(url, "latest")
        assert count(url, "pending") == latest  # nothing pooled yet (and not kept in a cache)
        for path in sorted((osaka / "cases" / "eth_sendRawTransaction").glob("*.io")):
            assert _replay(url, path) is None
        _, _, status = post(url, {"jsonrpc": "2.0", "id": 1, "method": "txpool_status", "params": []})
        _, _, content = post(url, {"jsonrpc": "2.0", "id": 2, "method": "txpool_content", "params": []})
        # the sender's pending line is one transaction (its later two wait for a gap)
        assert count(url, "latest") == latest
        assert count(url, "pending") == hex(int(latest, 16) + 1)
        pooled = [tx for part in content["result"].values() for txs in part.values()
                  for tx in txs.values()]
        by_hash = {}
        for tx in pooled:
            _, _, answer = post(url, {"jsonrpc": "2.0", "id": 4, "method": "eth_getTransactionByHash",
                                      "params": [tx["hash"]]})
            by_hash[tx["hash"]] = answer["result"]
    # eth_getTransactionByHash answers each pooled transaction (pending or queued) as
    # txpool_content writes it: null block fields
    assert by_hash == {tx["hash"]: tx for tx in pooled}
    assert all(tx["blockHash"] is None and tx["blockNumber"] is None for tx in by_hash.values())
    # legacy nonce 0 and the blob transaction pending; nonces 2 and 3 wait for nonce 1
    assert status["result"] == {"pending": "0x2", "queued": "0x2"}
    expected = read_case(osaka / "cases" / "txpool_content" / "get-content.io")[0].expected["result"]
    by_hash = {tx["hash"]: tx for part in expected.values() for txs in part.values() for tx in txs.values()}
    got = content["result"]
    seen = 0
    for part in ("pending", "queued"):
        for txs in got[part].values():
            for tx in txs.values():
                assert first_difference(tx, by_hash[tx["hash"]]) is None
                seen += 1
    assert seen == 3
    assert list(got["pending"]) == ["0x0c2c51a0990AeE1d73C1228de158688341557508"]


# -- the pool's rules on a dev-built Osaka chain -----------------------------------------------


@dataclasses.dataclass
class Setup:
    chain: DevChain
    accounts: tuple[DevAccount, ...]
    served: ServedPool
    ctx: Context

    def send(self, raw: bytes) -> Any:
        return json.loads(call_method(self.chain.backend, "eth_sendRawTransaction",
                                      ["0x" + raw.hex()], self.ctx))

    def rpc(self, method: str, *params: Any) -> Any:
        return json.loads(call_method(self.chain.backend, method, list(params), self.ctx))


_CHAIN: list[DevChain] = []


def _chain() -> DevChain:
    """An Osaka dev chain (10 M gas blocks) where account 0 has sent one transaction."""
    if not _CHAIN:
        chain = DevChain(ethread.MemoryBackend(), forks=ForkSchedule.from_genesis("osaka"),
                         gas_limit=10_000_000)
        chain.send(chain.accounts[0], chain.accounts[1].address, value=1)
        chain.mine()
        _CHAIN.append(chain)
    return _CHAIN[0]


@pytest.fixture
def setup() -> Setup:
    chain = _chain()
    served = ServedPool(chain.backend)
    return Setup(chain, dev_accounts(12), served, Context().for_backend().for_txpool(served))


def dynamic(account: DevAccount, nonce: int, *, tip: int = GWEI, fee: int = 10 * GWEI,
            gas: int = 21000, value: int = 1, data: bytes = b"", chain_id: int = 1337,
            to: bytes | None = b"\x11" * 20) -> Transaction:
    tx = DynamicFeeTransaction(chain_id=chain_id, nonce=nonce, max_priority_fee_per_gas=tip,
                               max_fee_per_gas=fee, gas=gas, to=to, value=value, data=data,
                               access_list=(), y_parity=0, r=0, s=0)
    return sign_transaction(tx, account)


def raw(tx: Transaction) -> bytes:
    return bytes(encode_transaction(tx))


def test_accepts_reads_and_promotes(setup: Setup) -> None:
    sender = setup.accounts[2]
    later = dynamic(sender, 1)
    assert setup.send(raw(later)) == "0x" + transaction_hash(later).hex()
    assert setup.rpc("txpool_status") == {"pending": "0x0", "queued": "0x1"}
    first = dynamic(sender, 0)
    setup.send(raw(first))
    assert setup.rpc("txpool_status") == {"pending": "0x2", "queued": "0x0"}
    content = setup.rpc("txpool_content")
    assert content["queued"] == {}
    (address, txs), = content["pending"].items()
    assert address.lower() == "0x" + sender.address.hex() and address != address.lower()
    assert list(txs) == ["0", "1"]
    tx = txs["0"]
    assert tx["blockHash"] is None and tx["blockNumber"] is None and tx["transactionIndex"] is None
    assert tx["blockTimestamp"] is None
    assert tx["gasPrice"] == hex(10 * GWEI) and tx["hash"] == "0x" + transaction_hash(first).hex()
    assert setup.rpc("txpool_contentFrom", "0x" + sender.address.hex()) == {
        "pending": txs, "queued": {}}
    assert setup.rpc("txpool_contentFrom", "0x" + "00" * 20) == {"pending": {}, "queued": {}}


def test_pooled_transactions_and_pending_nonces_are_read_from_the_pool(setup: Setup) -> None:
    sender = setup.accounts[9]
    address = "0x" + sender.address.hex()
    assert setup.rpc("eth_getTransactionCount", address, "pending") == "0x0"
    first, gap = dynamic(sender, 0, value=5), dynamic(sender, 2)
    setup.send(raw(first))
    setup.send(raw(gap))
    # the queued nonce 2 does not count: the pending line is nonce 0 alone
    assert setup.rpc("eth_getTransactionCount", address, "pending") == "0x1"
    assert setup.rpc("eth_getTransactionCount", address, "latest") == "0x0"
    answer = setup.rpc("eth_getTransactionByHash", "0x" + transaction_hash(first).hex())
    assert answer["blockHash"] is None and answer["blockNumber"] is None
    assert answer["transactionIndex"] is None and answer["blockTimestamp"] is None
    assert answer["from"] == address and answer["nonce"] == "0x0" and answer["value"] == "0x5"
    assert answer["gasPrice"] == hex(10 * GWEI)
    queued = setup.rpc("eth_getTransactionByHash", "0x" + transaction_hash(gap).hex())
    assert queued["nonce"] == "0x2" and queued["blockHash"] is None
    # a mined transaction is the chain's, with its block
    mined = setup.chain.backend.block_by_hash(setup.chain.backend.canonical_hash(1) or b"")
    assert mined is not None
    answer = setup.rpc("eth_getTransactionByHash", "0x" + mined.transactions[0].hash.hex())
    assert answer["blockNumber"] == "0x1"
    assert setup.rpc("eth_getTransactionByHash", "0x" + "ab" * 32) is None


def test_replacement_needs_ten_percent_more(setup: Setup) -> None:
    sender = setup.accounts[3]
    old = dynamic(sender, 0, tip=GWEI, fee=10 * GWEI)
    setup.send(raw(old))
    with pytest.raises(TransactionRejected, match=r"^already known$"):
        setup.send(raw(old))
    with pytest.raises(TransactionRejected, match=r"^replacement transaction underpriced$"):
        setup.send(raw(dynamic(sender, 0, tip=GWEI * 105 // 100, fee=11 * GWEI)))
    new = dynamic(sender, 0, tip=GWEI * 110 // 100, fee=11 * GWEI)
    setup.send(raw(new))
    pending = setup.rpc("txpool_content")["pending"]
    (txs,) = pending.values()
    assert txs["0"]["hash"] == "0x" + transaction_hash(new).hex()
    assert setup.served.pool.get(transaction_hash(old)) is None
    # a queued transaction is replaced by the same rule
    setup.send(raw(dynamic(sender, 5)))
    with pytest.raises(TransactionRejected, match=r"^replacement transaction underpriced$"):
        setup.send(raw(dynamic(sender, 5, value=2)))


def _messages(setup: Setup) -> list[tuple[bytes, str]]:
    a = setup.accounts
    unfunded = a[11]
    legacy = LegacyTransaction(nonce=0, gas_price=10 * GWEI, gas=21000, to=b"\x11" * 20, value=1,
                               data=b"", v=0, r=0, s=0)
    setcode = SetCodeTransaction(chain_id=1337, nonce=0, max_priority_fee_per_gas=GWEI,
                                 max_fee_per_gas=10 * GWEI, gas=100_000, to=b"\x11" * 20, value=0,
                                 data=b"", access_list=(), authorization_list=(), y_parity=0, r=0, s=0)
    cost = 21000 * 10 * GWEI + 1
    big = raw(dynamic(a[4], 0, gas=3_000_000, data=b"\x01" * 140_000))
    return [
        (raw(dynamic(a[0], 0)), "nonce too low: next nonce 1, tx nonce 0"),
        (raw(dynamic(a[4], 0, chain_id=1)), "invalid sender: invalid chain id for signer: have 1 want 1337"),
        (raw(dynamic(a[4], 0, gas=20000)), "intrinsic gas too low: gas 20000, minimum needed 21000"),
        (raw(dynamic(a[4], 0, gas=20_000_000)), "transaction gas limit too high (cap: 16777216, tx: 20000000)"),
        (raw(dynamic(a[4], 0, gas=12_000_000)), "exceeds block gas limit"),
        (raw(dynamic(a[4], 0, tip=11 * GWEI)), "max priority fee per gas higher than max fee per gas"),
        (raw(dynamic(a[4], 0, tip=0)), "transaction gas price below minimum: gas tip cap 0, minimum needed 1"),
        (raw(dynamic(unfunded, 0)), f"insufficient funds for gas * price + value: balance 0, tx cost {cost}, "
                                    f"overshot {cost}"),
        (raw(dynamic(a[4], 0, fee=100_000 * GWEI, tip=GWEI)),
         "tx fee (2.10 ether) exceeds the configured cap (1.00 ether)"),
        (raw(sign_transaction(legacy, a[4])), "only replay-protected (EIP-155) transactions allowed over RPC"),
        (b"", "typed transaction too short"),
        (big, f"oversized data: transaction size {len(big)}, limit 131072"),
        (raw(dynamic(a[4], 0, gas=3_000_000, to=None, data=b"\x00" * 49153)),
         "max initcode size exceeded: code size 49153, limit 49152"),
        (raw(dynamic(a[4], 0, gas=21000, data=b"\x01" * 100)),
         "intrinsic gas too low: gas 21000, minimum needed 22600"),
        (raw(dynamic(a[4], 0, gas=22600, data=b"\x01" * 100)),
         "insufficient gas for floor data gas cost: gas 22600, minimum needed 25000"),
        (raw(sign_transaction(setcode, a[4])), "set code tx must have at least one authorization tuple"),
    ]


def test_each_geth_message(setup: Setup) -> None:
    failures = []
    for tx_bytes, message in _messages(setup):
        try:
            setup.send(tx_bytes)
        except TransactionRejected as exc:
            if exc.message != message or exc.code != -32000:
                failures.append((message, exc.code, exc.message))
        else:
            failures.append((message, "accepted"))
    assert not failures
    assert setup.rpc("txpool_status") == {"pending": "0x0", "queued": "0x0"}


def test_funds_count_what_is_pending(setup: Setup) -> None:
    sender = setup.accounts[5]
    balance = setup.chain.balance(sender.address)
    first = dynamic(sender, 0, value=balance // 2)
    setup.send(raw(first))
    second = dynamic(sender, 1, value=balance // 2)
    spent = 21000 * 10 * GWEI + balance // 2
    with pytest.raises(TransactionRejected) as caught:
        setup.send(raw(second))
    assert caught.value.message == (
        f"insufficient funds for gas * price + value: balance {balance}, queued cost {spent}, "
        f"tx cost {spent}, overshot {2 * spent - balance}")


def test_fee_cap_below_base_fee_waits_in_the_pool_and_stays_out_of_blocks(setup: Setup) -> None:
    """geth's pool takes a transaction that cannot pay the next base fee (it may later);
    its miner leaves it out, as it leaves out tips below ``--miner.gasprice``."""
    base_fee = setup.chain.next_base_fee()
    assert base_fee is not None and base_fee > 1
    cheap = dynamic(setup.accounts[6], 0, fee=base_fee - 1, tip=1)
    stingy = dynamic(setup.accounts[7], 0, fee=10 * GWEI, tip=1)
    paying = dynamic(setup.accounts[8], 0)
    for tx in (cheap, stingy, paying):
        setup.send(raw(tx))
    assert setup.rpc("txpool_status") == {"pending": "0x3", "queued": "0x0"}
    head = setup.chain.head
    built = _build(setup, None)
    assert built["executionPayload"]["transactions"] == ["0x" + raw(paying).hex()]
    assert built["blockValue"] == hex(21000 * GWEI)
    assert setup.chain.head == head  # nothing inserted
    assert setup.rpc("txpool_status") == {"pending": "0x3", "queued": "0x0"}


def _attributes(setup: Setup) -> dict[str, Any]:
    head = setup.chain.head
    return {"timestamp": hex(head.timestamp + 12), "prevRandao": "0x" + "00" * 32,
            "suggestedFeeRecipient": "0x" + "00" * 20, "withdrawals": [],
            "parentBeaconBlockRoot": "0x" + "ab" * 32}


def _build(setup: Setup, transactions: list[str] | None, attributes: dict[str, Any] | None = None) -> Any:
    return setup.rpc("testing_buildBlockV1", "0x" + setup.chain.head.hash.hex(),
                     attributes or _attributes(setup), transactions)


def test_build_block_checks(setup: Setup) -> None:
    empty = _build(setup, [])
    assert empty["executionPayload"]["transactions"] == [] and empty["blockValue"] == "0x0"
    assert empty["executionRequests"] == [] and empty["blobsBundle"]["blobs"] == []
    with pytest.raises(BuildFailed, match=r"^parentHash is not current head$"):
        setup.rpc("testing_buildBlockV1", "0x" + "00" * 32, _attributes(setup), [])
    stale = dict(_attributes(setup), timestamp=hex(setup.chain.head.timestamp))
    with pytest.raises(BuildFailed, match=r"^invalid timestamp, parent"):
        _build(setup, [], stale)
    sender = setup.accounts[9]
    address = "0x" + sender.address.hex()
    with pytest.raises(BuildFailed) as caught:
        _build(setup, ["0x" + raw(dynamic(sender, 3)).hex()])
    assert caught.value.message.startswith("nonce too high: address 0x") and address in caught.value.message.lower()
    with pytest.raises(Exception, match="missing required field 'timestamp' for PayloadAttributes"):
        setup.rpc("testing_buildBlockV1", "0x" + setup.chain.head.hash.hex(),
                  {"prevRandao": "0x" + "00" * 32, "suggestedFeeRecipient": "0x" + "00" * 20}, [])


def test_queue_per_sender_is_bounded(setup: Setup) -> None:
    served = ServedPool(setup.chain.backend, limits=PoolLimits(account_queue=2))
    ctx = Context().for_backend().for_txpool(served)
    sender = setup.accounts[4]
    for nonce in (5, 6, 7):
        call_method(setup.chain.backend, "eth_sendRawTransaction", ["0x" + raw(dynamic(sender, nonce)).hex()], ctx)
    assert served.pool.status() == (0, 2)


def test_the_pool_in_total_is_bounded(setup: Setup) -> None:
    served = ServedPool(setup.chain.backend, limits=PoolLimits(global_slots=1, global_queue=1))
    served.pool.submit(raw(dynamic(setup.accounts[2], 0, tip=GWEI)))
    served.pool.submit(raw(dynamic(setup.accounts[3], 0, tip=GWEI)))
    with pytest.raises(TransactionRejected, match=r"^transaction underpriced$"):
        served.pool.submit(raw(dynamic(setup.accounts[4], 0, tip=GWEI)))
    served.pool.submit(raw(dynamic(setup.accounts[4], 0, tip=2 * GWEI)))  # pushes a cheaper one out
    assert served.pool.status() == (2, 0)


def test_without_txpool_a_served_chain_stays_read_only(setup: Setup) -> None:
    ctx = Context().for_backend()
    for method, params in (("eth_sendRawTransaction", ["0x" + raw(dynamic(setup.accounts[2], 0)).hex()]),
                           ("txpool_status", []), ("txpool_content", []),
                           ("testing_buildBlockV1", ["0x" + "00" * 32, {}])):
        with pytest.raises(MethodNotFound) as caught:
            call_method(setup.chain.backend, method, params, ctx)
        assert caught.value.message == f"the method {method} does not exist/is not available"


def test_txpool_needs_a_chain_with_state() -> None:
    from ethread.server.config import ConfigError, NetworkConfig, ServerConfig, validate

    era = NetworkConfig(name="e", backend="era", path=Path("/nowhere"), txpool=True)
    with pytest.raises(ConfigError, match="a transaction pool"):
        validate(ServerConfig(networks=(era,)))
    imported = NetworkConfig(name="i", backend="import", genesis=Path("g.json"), txpool=True)
    with pytest.raises(ConfigError, match="a transaction pool"):
        validate(ServerConfig(workers=2, ledger="x.ledger", networks=(imported,)))


# -- blob transactions -----------------------------------------------------------------------------


def _blob_tx(account: DevAccount, nonce: int, *, fee: int = 10 * GWEI, tip: int = GWEI,
             blob_fee: int = 10 * GWEI, version: int = 1, hashes: tuple[bytes, ...] | None = None,
             ) -> tuple[Transaction, BlobSidecar]:
    import ckzg

    from ethread.devchain.txpool import _kzg_setup

    blob = b"".join((i * 7919 + nonce).to_bytes(32, "big") for i in range(4096))  # field elements
    setup_ = _kzg_setup()
    commitment = bytes(ckzg.blob_to_kzg_commitment(blob, setup_))
    if version == 1:
        proofs = tuple(bytes(p) for p in ckzg.compute_cells_and_kzg_proofs(blob, setup_)[1])
    else:
        proofs = (bytes(ckzg.compute_blob_kzg_proof(blob, commitment, setup_)),)
    versioned = b"\x01" + hashlib.sha256(commitment).digest()[1:]
    tx = BlobTransaction(chain_id=1337, nonce=nonce, max_priority_fee_per_gas=tip, max_fee_per_gas=fee,
                         gas=21000, to=b"\x22" * 20, value=0, data=b"", access_list=(),
                         max_fee_per_blob_gas=blob_fee, blob_versioned_hashes=hashes or (versioned,),
                         y_parity=0, r=0, s=0)
    return sign_transaction(tx, account), BlobSidecar(version, (blob,), (commitment,), proofs)


def _network(tx: Transaction, sidecar: BlobSidecar) -> bytes:
    return Pooled(tx, transaction_hash(tx), b"", 0, sidecar).network_bytes()


def test_blob_transactions(setup: Setup) -> None:
    sender = setup.accounts[6]
    tx, sidecar = _blob_tx(sender, 0)
    assert setup.send(_network(tx, sidecar)) == "0x" + transaction_hash(tx).hex()
    assert setup.rpc("txpool_status") == {"pending": "0x1", "queued": "0x0"}
    assert setup.rpc("txpool_content") == {"pending": {}, "queued": {}}  # as geth's blob pool
    with pytest.raises(TransactionRejected, match=r"^address already reserved$"):
        setup.send(raw(dynamic(sender, 1)))
    bumped, sidecar2 = _blob_tx(sender, 0, fee=15 * GWEI, tip=2 * GWEI, blob_fee=20 * GWEI)
    with pytest.raises(TransactionRejected) as caught:
        setup.send(_network(bumped, sidecar2))
    assert caught.value.message == (f"replacement transaction underpriced: new tx gas fee cap {15 * GWEI} "
                                    f"< {10 * GWEI} queued + 100% replacement penalty")
    with pytest.raises(TransactionRejected) as caught:
        setup.send(_network(*_blob_tx(sender, 2)))
    assert caught.value.message == "nonce too high: tx nonce 2, gapped nonce 1"
    # built into a block with its blobs in the bundle
    built = _build(setup, None)
    assert len(built["blobsBundle"]["blobs"]) == 1 and len(built["blobsBundle"]["proofs"]) == 128
    assert built["executionPayload"]["blobGasUsed"] == hex(131072)


def test_blob_sidecar_checks(setup: Setup) -> None:
    sender = setup.accounts[7]
    tx, sidecar = _blob_tx(sender, 0, hashes=(b"\x01" + b"\x00" * 31,))
    with pytest.raises(TransactionRejected, match=r"^blob 0: computed hash 0x01"):
        setup.send(_network(tx, sidecar))
    tx, sidecar = _blob_tx(sender, 0)
    with pytest.raises(TransactionRejected, match=r"^missing sidecar in blob transaction$"):
        setup.send(raw(tx))
    broken = dataclasses.replace(sidecar, proofs=(sidecar.proofs[1],) * 128)
    with pytest.raises(TransactionRejected, match=r"^KZG verification error"):
        setup.send(_network(tx, broken))
    # a version-0 sidecar is given cell proofs, as geth's eth_sendRawTransaction does
    tx0, sidecar0 = _blob_tx(sender, 0, version=0)
    setup.send(_network(tx0, sidecar0))
    pooled = setup.served.pool.get(transaction_hash(tx0))
    assert pooled is not None and pooled.sidecar is not None and pooled.sidecar.version == 1
    assert len(pooled.sidecar.proofs) == 128
