"""A dev chain's pending transactions, kept in the same pool a served chain uses
(:mod:`ethread.devchain.txpool`): with automine off, what JSON-RPC sends waits there and is
read, replaced, queued, dropped and mined as geth does it; with automine on nothing changes.
"""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain
from ethread.rpc.context import Context
from ethread.rpc.dispatcher import Dispatcher

GWEI = 10**9


class Rpc:
    """JSON-RPC calls to a dev chain's dispatcher, as a client makes them."""

    def __init__(self, chain: DevChain) -> None:
        addresses = tuple(a.address for a in chain.accounts)
        self.dispatcher = Dispatcher(chain.backend, Context().for_dev_chain(chain, addresses))
        self.calls = 0

    def answer(self, method: str, *params: Any) -> dict[str, Any]:
        import orjson

        self.calls += 1
        body = orjson.dumps({"jsonrpc": "2.0", "id": self.calls, "method": method,
                             "params": list(params)})
        return orjson.loads(self.dispatcher.handle(body) or b"{}")  # type: ignore[no-any-return]

    def __call__(self, method: str, *params: Any) -> Any:
        answer = self.answer(method, *params)
        assert "error" not in answer, answer
        return answer["result"]

    def error(self, method: str, *params: Any) -> str:
        answer = self.answer(method, *params)
        assert "error" in answer, answer
        return str(answer["error"]["message"])


@pytest.fixture
def chain() -> DevChain:
    made = DevChain(ethread.MemoryBackend(), automine=False)
    return made


@pytest.fixture
def rpc(chain: DevChain) -> Rpc:
    return Rpc(chain)


def _address(chain: DevChain, index: int) -> str:
    return "0x" + chain.accounts[index].address.hex()


def _send(rpc: Rpc, sender: str, nonce: int | None = None, *, tip: int = GWEI,
          fee_cap: int = 30 * GWEI, value: int = 1) -> str:
    request: dict[str, Any] = {"from": sender, "to": sender, "value": hex(value), "gas": hex(21000),
                               "maxFeePerGas": hex(fee_cap), "maxPriorityFeePerGas": hex(tip)}
    if nonce is not None:
        request["nonce"] = hex(nonce)
    return str(rpc("eth_sendTransaction", request))


def test_a_pending_transaction_is_answered_with_null_block_fields(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    tx_hash = _send(rpc, alice)
    tx = rpc("eth_getTransactionByHash", tx_hash)
    assert tx["hash"] == tx_hash
    assert tx["blockHash"] is None and tx["blockNumber"] is None and tx["transactionIndex"] is None
    assert tx["gasPrice"] == hex(30 * GWEI)  # geth: a pending transaction's fee cap
    assert rpc("eth_getTransactionReceipt", tx_hash) is None
    assert rpc("eth_getTransactionCount", alice, "pending") == "0x1"
    assert rpc("eth_getTransactionCount", alice, "latest") == "0x0"
    rpc("evm_mine")
    mined = rpc("eth_getTransactionByHash", tx_hash)
    assert mined["blockNumber"] == "0x1"
    assert rpc("eth_getTransactionReceipt", tx_hash)["status"] == "0x1"
    assert rpc("eth_getTransactionCount", alice, "pending") == "0x1"


def test_replacement_needs_ten_percent_more(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    first = _send(rpc, alice, 0, tip=GWEI, fee_cap=10 * GWEI)
    assert rpc.error("eth_sendTransaction", {
        "from": alice, "to": alice, "nonce": "0x0", "gas": hex(21000),
        "maxFeePerGas": hex(10 * GWEI + GWEI // 20), "maxPriorityFeePerGas": hex(GWEI + GWEI // 20),
    }) == "replacement transaction underpriced"
    second = _send(rpc, alice, 0, tip=GWEI * 11 // 10, fee_cap=11 * GWEI, value=2)
    assert rpc("eth_getTransactionByHash", first) is None
    assert rpc("eth_getTransactionByHash", second)["value"] == "0x2"
    assert rpc("txpool_status") == {"pending": "0x1", "queued": "0x0"}
    block = chain.mine()
    assert [t for t in block.transactions] and len(block.transactions) == 1
    assert chain.balance(alice) < 10**24


def test_a_future_nonce_waits_until_the_gap_fills(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    later = _send(rpc, alice, 1)
    assert rpc("txpool_status") == {"pending": "0x0", "queued": "0x1"}
    assert rpc("eth_getTransactionCount", alice, "pending") == "0x0"
    rpc("evm_mine")
    assert rpc("eth_getTransactionReceipt", later) is None  # (queued: not mined)
    _send(rpc, alice, 0)
    assert rpc("txpool_status") == {"pending": "0x2", "queued": "0x0"}
    checksummed = chain.accounts[0].local_account.address
    content = rpc("txpool_content")
    assert sorted(content["pending"][checksummed]) == ["0", "1"]
    assert sorted(rpc("txpool_contentFrom", alice)["pending"]) == ["0", "1"]
    assert rpc("txpool_inspect")["pending"][checksummed]["1"].startswith(checksummed + ": 1 wei")
    rpc("evm_mine")
    assert rpc("eth_getTransactionReceipt", later)["status"] == "0x1"
    assert rpc("txpool_status") == {"pending": "0x0", "queued": "0x0"}


def test_the_pending_block_is_the_block_being_built(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    tx_hash = _send(rpc, alice)
    head = rpc("eth_getBlockByNumber", "latest", False)
    pending = rpc("eth_getBlockByNumber", "pending", False)
    assert int(pending["number"], 16) == int(head["number"], 16) + 1
    assert pending["hash"] is None and pending["nonce"] is None and pending["miner"] is None
    assert pending["parentHash"] == head["hash"]
    assert pending["transactions"] == [tx_hash]
    assert int(pending["gasUsed"], 16) == 21000
    full = rpc("eth_getBlockByNumber", "pending", True)
    assert full["transactions"][0]["hash"] == tx_hash
    assert chain.head.number == int(head["number"], 16)  # nothing stored
    mined = chain.mine()
    assert mined.header.state_root == bytes.fromhex(pending["stateRoot"][2:])


def test_pending_transaction_filter(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    filter_id = rpc("eth_newPendingTransactionFilter")
    assert rpc("eth_getFilterChanges", filter_id) == []
    first = _send(rpc, alice)
    second = _send(rpc, _address(chain, 1))
    assert rpc("eth_getFilterChanges", filter_id) == [first, second]
    assert rpc("eth_getFilterChanges", filter_id) == []
    assert rpc("eth_uninstallFilter", filter_id) is True


def test_drop_transaction(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    first = _send(rpc, alice, 0)
    second = _send(rpc, alice, 1)
    assert rpc("anvil_dropTransaction", first) == first
    assert rpc("anvil_dropTransaction", first) is None
    assert rpc("txpool_status") == {"pending": "0x0", "queued": "0x1"}  # nonce 1 waits for 0
    assert rpc("eth_getTransactionCount", alice, "pending") == "0x0"
    assert rpc("hardhat_dropTransaction", second) is True
    assert rpc("hardhat_dropTransaction", second) is False
    _send(rpc, alice)
    rpc("anvil_dropAllTransactions")
    assert rpc("txpool_status") == {"pending": "0x0", "queued": "0x0"}
    assert len(chain.mine().transactions) == 0


def test_mining_takes_by_price_then_nonce(chain: DevChain, rpc: Rpc) -> None:
    alice, bob = _address(chain, 0), _address(chain, 1)
    cheap = [_send(rpc, alice, n, tip=GWEI) for n in range(2)]
    dear = _send(rpc, bob, 0, tip=3 * GWEI)
    block = chain.mine()
    order = ["0x" + tx.hash.hex() for tx in block.transactions]
    assert order == [dear, *cheap]


def test_a_snapshot_keeps_the_pool(chain: DevChain, rpc: Rpc) -> None:
    alice = _address(chain, 0)
    kept = _send(rpc, alice)
    snapshot = rpc("evm_snapshot")
    _send(rpc, alice, tip=2 * GWEI)
    rpc("evm_mine")
    assert rpc("evm_revert", snapshot) is True
    assert rpc("txpool_status") == {"pending": "0x1", "queued": "0x0"}
    assert rpc("eth_getTransactionByHash", kept)["blockHash"] is None


def test_automine_on_mines_at_once_and_refuses_gaps() -> None:
    chain = DevChain(ethread.MemoryBackend())
    rpc = Rpc(chain)
    alice = _address(chain, 0)
    tx_hash = _send(rpc, alice)
    assert rpc("eth_getTransactionReceipt", tx_hash)["blockNumber"] == "0x1"
    assert rpc.error("eth_sendTransaction", {"from": alice, "to": alice, "nonce": "0x5",
                                             "gas": hex(21000)}).startswith("nonce too high")
    assert rpc("txpool_status") == {"pending": "0x0", "queued": "0x0"}
    pending = rpc("eth_getBlockByNumber", "pending", False)  # nothing pending: an empty block
    assert pending["number"] == "0x2" and pending["transactions"] == [] and pending["hash"] is None


def test_code_sends_share_the_pool(chain: DevChain, rpc: Rpc) -> None:
    alice = chain.accounts[0]
    tx_hash = "0x" + chain.send(alice, chain.accounts[1].address, value=5).hex()
    assert rpc("eth_getTransactionByHash", tx_hash)["blockHash"] is None
    assert rpc("eth_getTransactionCount", _address(chain, 0), "pending") == "0x1"
    _send(rpc, _address(chain, 0))  # nonce 1, after the code's send
    assert len(chain.mine().transactions) == 2


STORES_42 = bytes.fromhex("602a600055" "600b601160003960" "0b6000f3" "600054600052602060" "00f3")
"""Init code that stores 42 in slot 0 and leaves code that returns slot 0."""


def test_state_reads_at_pending_see_the_pending_block(chain: DevChain, rpc: Rpc) -> None:
    import rlp
    from eth_utils import keccak, to_checksum_address

    payer, payee, deployer = _address(chain, 0), _address(chain, 1), _address(chain, 2)
    start = int(rpc("eth_getBalance", payee, "latest"), 16)
    assert rpc("eth_getBalance", payee, "pending") == hex(start)  # nothing pooled: the head's
    rpc("eth_sendTransaction", {"from": payer, "to": payee, "value": hex(5)})
    rpc("eth_sendTransaction", {"from": deployer, "data": "0x" + STORES_42.hex(),
                                "gas": hex(200_000)})
    contract = to_checksum_address(keccak(rlp.encode([chain.accounts[2].address, 0]))[12:])
    word = "0x" + (42).to_bytes(32, "big").hex()

    assert rpc("eth_getBalance", payee, "pending") == hex(start + 5)
    assert rpc("eth_getBalance", payee, "latest") == hex(start)
    assert rpc("eth_getCode", contract, "pending") == "0x600054600052602060" "00f3"
    assert rpc("eth_getCode", contract, "latest") == "0x"
    assert rpc("eth_getStorageAt", contract, "0x0", "pending") == word
    assert rpc("eth_getStorageAt", contract, "0x0", "latest") == "0x" + "00" * 32
    assert rpc("eth_call", {"to": contract}, "pending") == word
    assert rpc("eth_call", {"to": contract}, "latest") == "0x"
    assert int(rpc("eth_estimateGas", {"to": contract}, "pending"), 16) > 21_000 + 2_000
    assert rpc("eth_getTransactionCount", deployer, "pending") == "0x1"

    # another pooled payment, no new block: the pending answers move with the pool
    rpc("eth_sendTransaction", {"from": payer, "to": payee, "value": hex(7)})
    assert rpc("eth_getBalance", payee, "pending") == hex(start + 12)
    assert rpc("eth_getBalance", payee, "latest") == hex(start)
    rpc("anvil_dropAllTransactions")
    assert rpc("eth_getBalance", payee, "pending") == hex(start)
    assert rpc("eth_getCode", contract, "pending") == "0x"

    rpc("eth_sendTransaction", {"from": payer, "to": payee, "value": hex(9)})
    rpc("evm_mine")
    assert rpc("eth_getBalance", payee, "latest") == hex(start + 9)
    assert rpc("eth_getBalance", payee, "pending") == hex(start + 9)
