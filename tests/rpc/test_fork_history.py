"""rpc/fork_history.py: which reads of a forked dev chain go to the forked node and which stay
with the chain. The chain here is the rpc-compat chain from block 30 on (a memory backend
that starts at its fork block, as a forked chain's does); the node is a plain double that
answers from a table and notes what it was asked. Blocks at or below the fork go to the node,
by number, tag or hash; hashes and transactions the chain holds above the fork stay; a log
range across the fork is the node's logs then the chain's, within the limit."""

from __future__ import annotations

from typing import Any

import pytest

from ethread.backends.memory import MemoryBackend
from ethread.errors import InvalidParams, LimitExceeded, UnknownBlock
from ethread.rpc.fork_history import NOT_HISTORY, HistoryRead, Local, read_history
from ethread.rpc.table import TABLE
from tests.support.storage_backends import each_block

FORK = 30


class Node:
    """The forked node: a block per height up to the fork, each with ``height % 3``
    transactions, one uncle on even heights, and one log."""

    fork_number = FORK

    def __init__(self, hashes: dict[int, bytes]) -> None:
        self.hashes = hashes
        self.asked: list[tuple[Any, ...]] = []

    def _block(self, number: int, full: bool) -> dict[str, Any]:
        txs = [{"hash": "0x" + bytes([number, i]).hex().ljust(64, "0")} for i in range(number % 3)]
        return {"number": hex(number), "transactions": txs if full else [t["hash"] for t in txs],
                "uncles": ["0x" + "11" * 32] if number % 2 == 0 else []}

    def block(self, number: int, full: bool) -> Any:
        self.asked.append(("block", number, full))
        return self._block(number, full)

    def number_of(self, block_hash: bytes) -> int | None:
        found = [n for n, h in self.hashes.items() if h == block_hash and n <= FORK]
        return found[0] if found else None

    def block_by_hash(self, block_hash: bytes, full: bool) -> Any:
        self.asked.append(("block_by_hash", block_hash, full))
        number = self.number_of(block_hash)
        return None if number is None else self._block(number, full)

    def block_receipts(self, number: int) -> Any:
        self.asked.append(("block_receipts", number))
        return [{"blockNumber": hex(number)}]

    def uncle(self, number: int, index: int) -> Any:
        self.asked.append(("uncle", number, index))
        return {"uncleOf": number, "index": index}

    def transaction(self, tx_hash: bytes) -> Any:
        self.asked.append(("transaction", tx_hash))
        return {"hash": "0x" + tx_hash.hex()}

    def receipt(self, tx_hash: bytes) -> Any:
        self.asked.append(("receipt", tx_hash))
        return {"transactionHash": "0x" + tx_hash.hex()}

    def raw_transaction(self, tx_hash: bytes) -> Any:
        self.asked.append(("raw_transaction", tx_hash))
        return "0x02" + tx_hash.hex()

    def logs(self, begin: int, end: int, selection: dict[str, Any]) -> list[Any]:
        self.asked.append(("logs", begin, end, selection))
        return [{"blockNumber": hex(n)} for n in range(begin, end + 1)]

    def block_logs(self, block_hash: bytes, selection: dict[str, Any]) -> list[Any]:
        self.asked.append(("block_logs", block_hash, selection))
        return [{"blockHash": "0x" + block_hash.hex()}]


@pytest.fixture(scope="module")
def forked(rpc_compat_memory: MemoryBackend) -> tuple[MemoryBackend, dict[int, bytes]]:
    """The chain from the fork block on, and every height's hash of the whole chain."""
    backend = MemoryBackend()
    hashes = {}
    for block_hash, block, receipts in each_block(rpc_compat_memory):
        hashes[block.number] = block_hash
        if block.number >= FORK:
            backend.write_block(block, receipts)
    return backend, hashes


class Chain:
    """The chain's own eth_getLogs answers, noted."""

    def __init__(self) -> None:
        self.asked: list[list[Any]] = []

    def __call__(self, params: list[Any]) -> list[Any]:
        self.asked.append(params)
        return [{"own": params[0]["fromBlock"]}]


@pytest.fixture
def node(forked: tuple[MemoryBackend, dict[int, bytes]]) -> Node:
    return Node(forked[1])


def _local(forked: tuple[MemoryBackend, dict[int, bytes]], chain: Chain | None = None,
           max_logs: int = 10_000, max_parameters: int = 5_000) -> Local:
    return Local(forked[0], chain or Chain(), max_logs, max_parameters)


def _history(method: str) -> HistoryRead:
    """The read the method's row declares for a forked chain's history."""
    read = TABLE[method].history
    assert read is not None
    return read


def _read(method: str, node: Node, local: Local, *params: Any) -> Any:
    return read_history(_history(method), node, list(params), local)  # type: ignore[arg-type]


def _hex(raw: bytes) -> str:
    return "0x" + raw.hex()


@pytest.mark.parametrize(("ref", "number"), [
    ("0x0", 0), ("0x5", 5), (hex(FORK), FORK), ("earliest", 0),
    (hex(FORK + 1), None), ("latest", None), ("safe", None), ("finalized", None), ("pending", None),
])
def test_a_block_by_number_or_tag_at_or_below_the_fork_is_the_nodes(
        forked: Any, node: Node, ref: str, number: int | None) -> None:
    answer = _read("eth_getBlockByNumber", node, _local(forked), ref, True)
    if number is None:
        assert answer is NOT_HISTORY and node.asked == []
    else:
        assert node.asked == [("block", number, True)] and answer["number"] == hex(number)


def test_a_tag_names_the_node_when_the_head_is_the_fork_block(forked: Any) -> None:
    class AtHead(Node):
        fork_number = 45  # the chain's head

    node = AtHead(forked[1])
    assert _read("eth_getBlockByNumber", node, _local(forked), "latest", False)["number"] == "0x2d"


def test_a_block_by_hash_stays_with_the_chain_only_above_the_fork(forked: Any, node: Node) -> None:
    hashes = forked[1]
    local = _local(forked)
    assert _read("eth_getBlockByHash", node, local, _hex(hashes[FORK + 1]), False) is NOT_HISTORY
    assert _read("eth_getBlockByHash", node, local, _hex(hashes[FORK]), False)["number"] == hex(FORK)
    assert _read("eth_getBlockByHash", node, local, _hex(hashes[3]), False)["number"] == "0x3"
    assert _read("eth_getBlockByHash", node, local, _hex(b"\x42" * 32), False) is None  # asked: none
    assert [a[0] for a in node.asked] == ["block_by_hash"] * 3


@pytest.mark.parametrize(("method", "params"), [
    ("eth_getBlockByNumber", ["0x01", False]),  # a leading zero
    ("eth_getBlockByNumber", ["0x1", "yes"]),
    ("eth_getBlockByHash", ["0x1234", False]),
    ("eth_getTransactionByBlockNumberAndIndex", ["0x1", "1"]),
    ("eth_getTransactionByHash", [5]),
    ("eth_getLogs", [{"topics": [None] * 5}]),
    ("eth_getLogs", [{"fromBlock": "0x1", "blockHash": "0x" + "00" * 32}]),
])
def test_parameters_that_do_not_parse_are_the_chains_to_refuse(
        forked: Any, node: Node, method: str, params: list[Any]) -> None:
    assert _read(method, node, _local(forked), *params) is NOT_HISTORY
    with pytest.raises(InvalidParams):
        _history(method)(node, params, _local(forked))  # type: ignore[arg-type]
    assert [a for a in node.asked if a[0] != "block"] == []


@pytest.mark.parametrize(("method", "ref", "count"), [
    ("eth_getBlockTransactionCountByNumber", "0x5", "0x2"),
    ("eth_getBlockTransactionCountByNumber", "0x6", "0x0"),
    ("eth_getUncleCountByBlockNumber", "0x6", "0x1"),
    ("eth_getUncleCountByBlockNumber", "0x7", "0x0"),
    ("eth_getBlockTransactionCountByNumber", "latest", NOT_HISTORY),
])
def test_counts_are_the_lengths_of_the_nodes_lists(forked: Any, node: Node, method: str, ref: str,
                                                   count: Any) -> None:
    assert _read(method, node, _local(forked), ref) == count


def test_counts_by_hash(forked: Any, node: Node) -> None:
    local = _local(forked)
    hashes = forked[1]
    assert _read("eth_getBlockTransactionCountByHash", node, local, _hex(hashes[4])) == "0x1"
    assert _read("eth_getUncleCountByBlockHash", node, local, _hex(hashes[4])) == "0x1"
    assert _read("eth_getBlockTransactionCountByHash", node, local, _hex(b"\x42" * 32)) is None
    assert _read("eth_getUncleCountByBlockHash", node, local, _hex(hashes[40])) is NOT_HISTORY


def test_a_transaction_by_block_and_index(forked: Any, node: Node) -> None:
    local = _local(forked)
    hashes = forked[1]
    tx = _read("eth_getTransactionByBlockNumberAndIndex", node, local, "0x5", "0x1")
    assert tx == {"hash": "0x" + bytes([5, 1]).hex().ljust(64, "0")}
    assert _read("eth_getTransactionByBlockNumberAndIndex", node, local, "0x5", "0x2") is None
    assert _read("eth_getTransactionByBlockHashAndIndex", node, local, _hex(hashes[5]), "0x0") == {
        "hash": "0x" + bytes([5, 0]).hex().ljust(64, "0")}
    assert _read("eth_getTransactionByBlockHashAndIndex", node, local, _hex(b"\x42" * 32), "0x0") is None
    raw = _read("eth_getRawTransactionByBlockNumberAndIndex", node, local, "0x5", "0x1")
    assert raw == "0x02" + bytes([5, 1]).hex().ljust(64, "0")
    assert _read("eth_getRawTransactionByBlockNumberAndIndex", node, local, "0x5", "0x9") == "0x"
    assert _read("eth_getRawTransactionByBlockHashAndIndex", node, local, _hex(b"\x42" * 32), "0x0") == "0x"
    assert _read("eth_getTransactionByBlockNumberAndIndex", node, local, "0x2d", "0x0") is NOT_HISTORY


def test_an_uncle_by_block_and_index(forked: Any, node: Node) -> None:
    local = _local(forked)
    hashes = forked[1]
    assert _read("eth_getUncleByBlockNumberAndIndex", node, local, "0x4", "0x0") == {
        "uncleOf": 4, "index": 0}
    assert _read("eth_getUncleByBlockHashAndIndex", node, local, _hex(hashes[8]), "0x1") == {
        "uncleOf": 8, "index": 1}
    assert _read("eth_getUncleByBlockHashAndIndex", node, local, _hex(b"\x42" * 32), "0x0") is None
    assert _read("eth_getUncleByBlockHashAndIndex", node, local, _hex(hashes[44]), "0x0") is NOT_HISTORY
    assert _read("eth_getUncleByBlockNumberAndIndex", node, local, "latest", "0x0") is NOT_HISTORY


@pytest.mark.parametrize(("ref", "answer"), [
    ("0x3", [{"blockNumber": "0x3"}]),
    ("earliest", [{"blockNumber": "0x0"}]),
    ({"blockNumber": "0x7"}, [{"blockNumber": "0x7"}]),
    ("latest", NOT_HISTORY),
])
def test_block_receipts_by_number_or_tag(forked: Any, node: Node, ref: Any, answer: Any) -> None:
    assert _read("eth_getBlockReceipts", node, _local(forked), ref) == answer


def test_block_receipts_by_hash(forked: Any, node: Node) -> None:
    local = _local(forked)
    hashes = forked[1]
    assert _read("eth_getBlockReceipts", node, local, _hex(hashes[9])) == [{"blockNumber": "0x9"}]
    assert _read("eth_getBlockReceipts", node, local, {"blockHash": _hex(hashes[FORK])}) == [
        {"blockNumber": hex(FORK)}]
    assert _read("eth_getBlockReceipts", node, local, _hex(b"\x42" * 32)) is None
    assert _read("eth_getBlockReceipts", node, local, _hex(hashes[FORK + 2])) is NOT_HISTORY


@pytest.mark.parametrize("method", ["eth_getTransactionByHash", "eth_getTransactionReceipt",
                                    "eth_getRawTransactionByHash"])
def test_a_transaction_the_chain_holds_is_its_own(forked: Any, node: Node, method: str,
                                                  rpc_compat_memory: MemoryBackend) -> None:
    backend = forked[0]
    own = [tx.hash for _, block, _ in each_block(rpc_compat_memory) if block.number > FORK
           for tx in block.transactions]
    assert own and backend.transaction_location(own[0]) is not None
    local = _local(forked)
    assert _read(method, node, local, _hex(own[0])) is NOT_HISTORY
    other = b"\x42" * 32
    answer = _read(method, node, local, _hex(other))
    assert answer is not NOT_HISTORY and node.asked[-1][1] == other


def test_logs_across_the_fork_are_the_nodes_then_the_chains(forked: Any, node: Node) -> None:
    chain = Chain()
    address = "0x" + "aa" * 20
    request = {"fromBlock": hex(FORK - 2), "toBlock": hex(FORK + 3), "address": address,
               "topics": None}
    logs = _read("eth_getLogs", node, _local(forked, chain), request)
    assert logs == [{"blockNumber": hex(n)} for n in range(FORK - 2, FORK + 1)] + [
        {"own": hex(FORK + 1)}]
    assert node.asked == [("logs", FORK - 2, FORK, {"address": address})]
    assert chain.asked == [[{**request, "fromBlock": hex(FORK + 1), "toBlock": hex(FORK + 3)}]]


def test_logs_below_the_fork_are_the_nodes_alone(forked: Any, node: Node) -> None:
    chain = Chain()
    topics = [None, ["0x" + "bb" * 32]]
    logs = _read("eth_getLogs", node, _local(forked, chain),
                 {"fromBlock": "earliest", "toBlock": "0x2", "topics": topics})
    assert logs == [{"blockNumber": "0x0"}, {"blockNumber": "0x1"}, {"blockNumber": "0x2"}]
    assert node.asked == [("logs", 0, 2, {"topics": topics})] and chain.asked == []


@pytest.mark.parametrize("request_", [
    {"fromBlock": hex(FORK + 1), "toBlock": "latest"},  # wholly above the fork
    {"fromBlock": "0x5", "toBlock": "0x4"},  # an empty range: the chain's error
    {"fromBlock": "0x5", "toBlock": "0x100"},  # past the head
    {"fromBlock": "0x1", "toBlock": "0x2", "address": ["0x" + "aa" * 20] * 3},  # over the limit
])
def test_logs_the_node_has_no_part_in_are_the_chains(forked: Any, node: Node,
                                                      request_: dict[str, Any]) -> None:
    local = _local(forked, max_parameters=2)
    assert _read("eth_getLogs", node, local, request_) is NOT_HISTORY
    assert node.asked == []


def test_logs_over_the_limit_are_refused(forked: Any, node: Node) -> None:
    local = _local(forked, max_logs=3)
    assert len(_read("eth_getLogs", node, local, {"fromBlock": "0x0", "toBlock": "0x2"})) == 3
    for to in ("0x3", hex(FORK + 1)):  # the node's part alone, or with the chain's
        with pytest.raises(LimitExceeded) as caught:
            _read("eth_getLogs", node, local, {"fromBlock": "0x0", "toBlock": to})
        assert (caught.value.code, caught.value.message) == (-32005, "query returned more than 3 results")


def test_logs_of_one_block_by_hash(forked: Any, node: Node) -> None:
    local = _local(forked)
    hashes = forked[1]
    assert _read("eth_getLogs", node, local, {"blockHash": _hex(hashes[12])}) == [
        {"blockHash": _hex(hashes[12])}]
    assert _read("eth_getLogs", node, local, {"blockHash": _hex(hashes[FORK + 1])}) is NOT_HISTORY
    with pytest.raises(UnknownBlock) as caught:
        _read("eth_getLogs", node, local, {"blockHash": _hex(b"\x42" * 32)})
    assert (caught.value.code, caught.value.message) == (-32000, "unknown block")
