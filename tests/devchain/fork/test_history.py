"""A forked dev chain's history before the fork: blocks, transactions, receipts, uncles and
logs at or below the fork block are the forked node's answers, byte for byte; each is checked
to be in the fork's chain (a node that answers another chain's block is refused, naming it);
kept in the fork cache so a second run asks the node nothing; logs across the fork joined
from both sides. Remotes, all on loopback: ``ethread serve`` of the rpc-compat chain, and
anvil."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain
from ethread.devchain.fork.cache import LMDBCache
from ethread.web3 import EthreadProvider
from tests.support.fork_proxy import CountingProxy
from tests.support.paths import REPO
from tests.support.server_harness import ServeProcess, post

RPC_COMPAT = Path("/work/shared/conformance/rpc-compat")
KEY = "fork-history-key-0123"
LOGS_ON_CREATION = bytes.fromhex("602a600052" "60aa" "6020" "6000" "a1" "00")
"""Init code that logs one word (42) with topic 0xaa and leaves no code."""


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    """``ethread serve`` of the rpc-compat chain: the node forked."""
    args = ["--genesis", str(RPC_COMPAT / "genesis.json"), "--blocks", str(RPC_COMPAT / "chain.rlp"),
            "--no-verify-seals", "--api-key", KEY, "--no-access-log"]  # (a full pipe stalls it)
    with ServeProcess(args, cwd=REPO) as server:
        yield f"http://{server.host}:{server.port}/v3/{KEY}"


def call(url: str, method: str, *params: Any) -> Any:
    answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})[2]
    assert "error" not in answer, (method, params, answer)
    return answer["result"]


def local(chain: DevChain, method: str, *params: Any) -> Any:
    answer = EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" not in answer, (method, params, answer)
    return answer["result"]


def local_error(chain: DevChain, method: str, *params: Any) -> str:
    answer = EthreadProvider(chain).make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" in answer, (method, params, answer)
    return str(answer["error"]["message"])


def history_questions(ask: Callable[..., Any], fork: int) -> list[tuple[str, list[Any]]]:
    """Every history read of every block up to ``fork``, asked of the node with ``ask``."""
    questions: list[tuple[str, list[Any]]] = []
    for number in range(fork + 1):
        block = ask("eth_getBlockByNumber", hex(number), True)
        block_hash = block["hash"]
        for full in (True, False):
            questions.append(("eth_getBlockByNumber", [hex(number), full]))
            questions.append(("eth_getBlockByHash", [block_hash, full]))
        for ref in (hex(number), block_hash):
            questions.append(("eth_getBlockReceipts", [ref]))
        questions += [
            ("eth_getBlockTransactionCountByNumber", [hex(number)]),
            ("eth_getBlockTransactionCountByHash", [block_hash]),
            ("eth_getUncleCountByBlockNumber", [hex(number)]),
            ("eth_getUncleCountByBlockHash", [block_hash]),
            ("eth_getLogs", [{"blockHash": block_hash}]),
        ]
        for index, tx in enumerate(block["transactions"]):
            questions += [
                ("eth_getTransactionByHash", [tx["hash"]]),
                ("eth_getTransactionReceipt", [tx["hash"]]),
                ("eth_getRawTransactionByHash", [tx["hash"]]),
                ("eth_getTransactionByBlockNumberAndIndex", [hex(number), hex(index)]),
                ("eth_getTransactionByBlockHashAndIndex", [block_hash, hex(index)]),
                ("eth_getRawTransactionByBlockNumberAndIndex", [hex(number), hex(index)]),
            ]
        for index in range(len(block["uncles"])):
            questions += [("eth_getUncleByBlockNumberAndIndex", [hex(number), hex(index)]),
                          ("eth_getUncleByBlockHashAndIndex", [block_hash, hex(index)])]
    questions += [("eth_getLogs", [{"fromBlock": "0x0", "toBlock": hex(fork)}]),
                  ("eth_getLogs", [{"fromBlock": "earliest", "toBlock": hex(fork)}]),
                  ("eth_getBlockByNumber", ["earliest", False])]
    return questions


def test_history_is_the_nodes_and_a_second_run_is_offline(remote: str, tmp_path: Path) -> None:
    head = int(call(remote, "eth_blockNumber"), 16)
    fork = head - 2
    cache = tmp_path / "cache"
    chain = DevChain.fork(remote, fork, backend=ethread.MemoryBackend(), cache=cache)
    questions = history_questions(lambda m, *p: call(remote, m, *p), fork)
    assert sum(1 for method, _ in questions if method == "eth_getTransactionByHash") > 10
    expected = [call(remote, method, *params) for method, params in questions]
    got = [local(chain, method, *params) for method, params in questions]
    for question, want, have in zip(questions, expected, got, strict=True):
        assert have == want, question
    assert any(logs for (method, _), logs in zip(questions, got, strict=True)
               if method == "eth_getLogs")
    # above the fork the chain is its own: the remote's next block is not it
    assert local(chain, "eth_getBlockByNumber", hex(fork + 1), False)["hash"] != \
        call(remote, "eth_getBlockByNumber", hex(fork + 1), False)["hash"]
    later = call(remote, "eth_getBlockByNumber", hex(head), True)
    assert local(chain, "eth_getBlockByHash", later["hash"], False) is None
    for tx in later["transactions"]:
        assert local(chain, "eth_getTransactionByHash", tx["hash"]) is None
        assert local(chain, "eth_getTransactionReceipt", tx["hash"]) is None
    source = chain.forked_from
    assert source is not None and source.fetched > 0
    assert isinstance(source.cache, LMDBCache)
    source.cache.close()

    # the same questions of a second fork: answered from the cache
    again = DevChain.fork(remote, fork, backend=ethread.MemoryBackend(), cache=cache)
    assert [local(again, method, *params) for method, params in questions] == expected
    assert again.forked_from is not None and again.forked_from.fetched == 0


def test_logs_across_the_fork_join_both_sides(remote: str) -> None:
    head = int(call(remote, "eth_blockNumber"), 16)
    fork = head - 2
    chain = DevChain.fork(remote, fork, backend=ethread.MemoryBackend())
    tx_hash = chain.send(chain.accounts[0], None, data=LOGS_ON_CREATION, gas=100_000)
    chain.mine()
    receipt = local(chain, "eth_getTransactionReceipt", "0x" + tx_hash.hex())
    (log,) = receipt["logs"]
    assert log["topics"] == ["0x" + "00" * 31 + "aa"] and log["data"] == "0x" + "00" * 31 + "2a"
    remote_logs = call(remote, "eth_getLogs", {"fromBlock": "0x0", "toBlock": hex(fork)})
    assert remote_logs
    assert local(chain, "eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest"}) == \
        [*remote_logs, log]
    assert local(chain, "eth_getLogs", {"fromBlock": hex(fork + 1)}) == [log]
    # a filter is sent to the node as written, and applies to the chain's side the same
    topic = remote_logs[0]["topics"][0]
    assert local(chain, "eth_getLogs", {"fromBlock": "0x0", "topics": [topic]}) == \
        call(remote, "eth_getLogs", {"fromBlock": "0x0", "toBlock": hex(fork), "topics": [topic]})
    # the usual bound on results holds over both sides together
    from ethread.methods.logs import LogLimits
    from ethread.rpc.context import Context
    from ethread.rpc.dispatcher import Dispatcher

    tight = Dispatcher(chain.backend, Context(log_limits=LogLimits(max_results=len(remote_logs)))
                       .for_dev_chain(chain, ()))
    answer = json.loads(tight.handle(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "eth_getLogs",
        "params": [{"fromBlock": "0x0", "toBlock": "latest"}]}).encode()) or b"{}")
    assert answer["error"]["message"] == f"query returned more than {len(remote_logs)} results"
    many = LogLimits(max_parameters=2)
    strict = Dispatcher(chain.backend, Context(log_limits=many).for_dev_chain(chain, ()))
    answer = json.loads(strict.handle(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "eth_getLogs",
        "params": [{"fromBlock": "0x0", "toBlock": hex(fork), "topics": [[topic, topic, topic]]}],
    }).encode()) or b"{}")
    assert answer["error"]["code"] == -32005, answer  # (the node is not asked)
    assert "beyond current head" in local_error(chain, "eth_getLogs",
                                                {"fromBlock": "0x0", "toBlock": hex(head + 50)})


def _ask_the_block_before(request: dict[str, Any]) -> None:
    """Asks for the block before the one a full-block request names."""
    if request["method"] == "eth_getBlockByNumber" and request["params"][1] is True:
        request["params"][0] = hex(int(request["params"][0], 16) - 1)


def _another_blocks_receipt(request: dict[str, Any], answer: dict[str, Any]) -> None:
    """Gives a receipt another block's hash."""
    result = answer.get("result")
    if isinstance(result, dict) and "logsBloom" in result and "status" in result:
        result["blockHash"] = "0x" + "ee" * 32


def test_a_node_answering_another_chain_is_refused(remote: str) -> None:
    """Through a proxy that answers full blocks with the block before the one asked and
    receipts with another block's hash."""
    with CountingProxy(remote, _another_blocks_receipt, rewrite=_ask_the_block_before) as proxy:
        head = int(call(remote, "eth_blockNumber"), 16)
        fork = head - 2
        chain = DevChain.fork(proxy.url, fork,
                              backend=ethread.MemoryBackend())
        assert local_error(chain, "eth_getBlockByNumber", hex(fork - 1), True) == (
            f"the forked node answered block {fork - 2} for block {fork - 1}")
        block = call(remote, "eth_getBlockByNumber", hex(fork), False)
        (tx_hash, *_) = [h for n in range(fork, 0, -1)
                         for h in call(remote, "eth_getBlockByNumber", hex(n), False)["transactions"]]
        tx = call(remote, "eth_getTransactionByHash", tx_hash)
        number = int(tx["blockNumber"], 16)
        message = local_error(chain, "eth_getTransactionReceipt", tx_hash)
        assert message == (f"the forked node answered a receipt of block {number} (0x{'ee' * 32}), "
                           f"which is not in the chain of the fork block {fork}")
        assert block["number"] == hex(fork)
        # what was refused was not kept: the honest answers still come through
        assert local(chain, "eth_getBlockByNumber", hex(fork - 1), False) == \
            call(remote, "eth_getBlockByNumber", hex(fork - 1), False)


@pytest.mark.anvil
def test_history_of_an_anvil_fork(tmp_path: Path) -> None:
    from tests.support.anvil import Anvil, anvil_binary

    anvil = Anvil(anvil_binary(), tmp_path)
    try:
        sender = anvil("eth_accounts")[0]
        for value in range(1, 4):
            anvil("eth_sendTransaction", {"from": sender, "to": "0x" + "42" * 20,
                                          "value": hex(value)})
        anvil("eth_sendTransaction", {"from": sender, "data": "0x" + LOGS_ON_CREATION.hex()})
        anvil("evm_setAutomine", False)
        anvil("eth_sendTransaction", {"from": sender, "to": "0x" + "43" * 20, "value": "0x5"})
        anvil("eth_sendTransaction", {"from": sender, "data": "0x" + LOGS_ON_CREATION.hex()})
        anvil("evm_mine")  # a block of two
        fork = int(anvil("eth_blockNumber"), 16)
        chain = DevChain.fork(anvil.url, fork, backend=ethread.MemoryBackend())
        questions = history_questions(anvil, fork)
        for method, params in questions:
            assert local(chain, method, *params) == anvil(method, *params), (method, params)
        assert anvil("eth_getLogs", {"fromBlock": "0x0", "toBlock": hex(fork)})
    finally:
        anvil.process.terminate()
        anvil.process.wait(timeout=10)


def test_a_served_fork_answers_history_from_the_node(remote: str, tmp_path: Path) -> None:
    head = int(call(remote, "eth_blockNumber"), 16)
    fork = head - 3
    args = ["--fork-url", remote, "--fork-block-number", str(fork), "--fork-cache",
            str(tmp_path / "cache"), "--api-key", KEY, "--no-access-log"]
    questions = [(m, p) for m, p in history_questions(lambda m, *p: call(remote, m, *p), fork)
                 if m in ("eth_getBlockByNumber", "eth_getBlockReceipts", "eth_getTransactionByHash",
                          "eth_getLogs")]
    with ServeProcess(args, cwd=REPO) as server:
        url = f"http://{server.host}:{server.port}/v3/{KEY}"
        for method, params in questions:
            assert call(url, method, *params) == call(remote, method, *params), (method, params)
        assert call(url, "eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest"}) == \
            call(remote, "eth_getLogs", {"fromBlock": "0x0", "toBlock": hex(fork)})


def test_the_walk_down_the_chain_is_batched_checked_and_kept(
        remote: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from ethread.devchain.fork import history
    from ethread.devchain.fork.cache import MemoryCache
    from ethread.devchain.fork.remote import RemoteLimits, RemoteNode
    from ethread.devchain.fork.source import ForkSource

    monkeypatch.setattr(history, "WALK_CHUNK", 7)
    monkeypatch.setattr(history, "LOG_SPAN", 5)
    head = int(call(remote, "eth_blockNumber"), 16)
    node = RemoteNode(remote, RemoteLimits(batch_size=4, concurrency=2))
    cache = MemoryCache()
    source = ForkSource.connect(node, head, cache)  # (keeps only the fork block's header)
    walker = history.ForkHistory(source)
    hashes = [call(remote, "eth_getBlockByNumber", hex(n), False)["hash"] for n in range(head + 1)]
    assert ["0x" + (walker.canonical_hash(n) or b"").hex() for n in (0, *range(head + 1))][1:] == hashes
    assert source.fetched == head  # each header below the fork block once
    assert walker.logs(0, head, {}) == call(remote, "eth_getLogs",
                                            {"fromBlock": "0x0", "toBlock": hex(head)})
    asked = source.fetched
    assert asked == head + (head // 5 + 1)  # one call per span of five blocks

    again = history.ForkHistory(ForkSource.connect(node, head, cache))
    assert ["0x" + (again.canonical_hash(n) or b"").hex() for n in range(head + 1)] == hashes
    assert again.logs(0, head, {}) == walker.logs(0, head, {})
    assert again.source.fetched == 0
    assert again.canonical_hash(head + 1) is None
    node.close()


def test_pending_state_reads_on_a_fork(remote: str) -> None:
    head = int(call(remote, "eth_blockNumber"), 16)
    chain = DevChain.fork(remote, head, backend=ethread.MemoryBackend(), automine=False)
    payer, payee = ("0x" + chain.accounts[i].address.hex() for i in (0, 1))
    start = int(local(chain, "eth_getBalance", payee, "latest"), 16)
    local(chain, "eth_sendTransaction", {"from": payer, "to": payee, "value": "0x7"})
    assert local(chain, "eth_getBalance", payee, "pending") == hex(start + 7)
    assert local(chain, "eth_getBalance", payee, "latest") == hex(start)
    # an account the chain never wrote still reads the forked node's value at "pending"
    (tx_hash, *_) = [h for n in range(head, 0, -1)
                     for h in call(remote, "eth_getBlockByNumber", hex(n), False)["transactions"]]
    sender = call(remote, "eth_getTransactionByHash", tx_hash)["from"]
    assert int(call(remote, "eth_getBalance", sender, hex(head)), 16) > 0
    assert local(chain, "eth_getBalance", sender, "pending") == \
        call(remote, "eth_getBalance", sender, hex(head))
