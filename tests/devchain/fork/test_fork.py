"""A dev chain forked from another node (``DevChain.fork``, ``ethread serve --fork-url``): the
forked state read lazily and checked against the block's state root, the chain continuing
the remote one, writes kept locally with history reads, the LMDB cache, a node whose proofs
do not hold or that alters a balance (refused, naming the account), a node that is down, and
eth_getProof on a fork (the forked node's values proven where a proof can hold them, refused
clearly where none can). The remote is always on loopback: ethread's own server (the demo
chain, in a thread) or anvil."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from eth_utils import to_checksum_address

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.fork.cache import LMDBCache
from ethread.devchain.fork.remote import RemoteError, RemoteLimits
from ethread.web3 import EthreadProvider
from tests.support.inprocess_node import local_call, remote_call
from tests.support.server_harness import KEY, ServeProcess, post, shared_demo

FAST_FAIL = RemoteLimits(timeout=2.0, retries=1, backoff=0.01)


def test_a_fork_continues_the_remote_chain_and_reads_its_state(remote: str) -> None:
    demo = shared_demo()
    chain = DevChain.fork(remote, backend=ethread.MemoryBackend())
    source = chain.forked_from
    assert source is not None
    head = int(remote_call(remote, "eth_blockNumber"), 16)
    remote_head = remote_call(remote, "eth_getBlockByNumber", hex(head), False)
    # the forked block is the remote one; the dev accounts are funded in the next block
    assert chain.head.number == head + 1
    assert local_call(chain, "eth_getBlockByNumber", hex(head), False)["hash"] == remote_head["hash"]
    assert "0x" + chain.head.parent_hash.hex() == remote_head["hash"]
    assert local_call(chain, "eth_chainId") == remote_call(remote, "eth_chainId")
    # accounts, code and storage as the remote chain holds them, through every reader
    for address in (demo.storage, demo.log_emitter, demo.reverter, b"\x42" * 20):
        where = "0x" + address.hex()
        for method in ("eth_getBalance", "eth_getCode", "eth_getTransactionCount"):
            assert local_call(chain, method, where, "latest") == remote_call(remote, method, where,
                                                                             "latest")
    for slot in range(4):
        assert (local_call(chain, "eth_getStorageAt", "0x" + demo.storage.hex(), hex(slot))
                == remote_call(remote, "eth_getStorageAt", "0x" + demo.storage.hex(), hex(slot)))
        assert chain.storage(demo.storage, slot) == demo.chain.storage(demo.storage, slot)
    call = {"to": "0x" + demo.reverter.hex(), "data": "0x" + contracts.ERROR_CALL.hex()}
    mine = EthreadProvider(chain).make_request("eth_call", [call, "latest"])  # type: ignore[arg-type]
    theirs = post(remote, {"jsonrpc": "2.0", "id": 1, "method": "eth_call",
                           "params": [call, "latest"]})[2]
    assert mine["error"] == theirs["error"]  # type: ignore[typeddict-item]
    # BLOCKHASH sees the remote chain's hashes
    assert chain.call(demo.env_echo).success


def test_a_fork_at_an_earlier_block_reads_that_block(remote: str) -> None:
    demo = shared_demo()
    chain = DevChain.fork(remote, 20, backend=ethread.MemoryBackend())
    assert chain.head.number == 21
    sender = demo.chain.accounts[0].address
    assert chain.nonce(sender) == demo.chain.nonce(sender, at=20)
    assert chain.balance(sender, at=20) == demo.chain.balance(sender, at=20)
    assert chain.balance(sender) == 10**24  # the dev accounts are funded after the fork
    with pytest.raises(RemoteError, match="latest block"):
        DevChain.fork(remote, 10**6, backend=ethread.MemoryBackend())


def test_the_lmdb_cache_serves_a_second_fork_without_the_node(remote: str, tmp_path: Path) -> None:
    demo = shared_demo()
    first = DevChain.fork(remote, 30, backend=ethread.MemoryBackend(), cache=tmp_path / "cache")
    values = [first.storage(demo.storage, slot) for slot in range(3)]
    code = first.code(demo.storage)
    assert first.forked_from is not None and first.forked_from.fetched > 0
    cache = first.forked_from.cache
    assert isinstance(cache, LMDBCache)
    cache.close()
    second = DevChain.fork(remote, 30, backend=ethread.MemoryBackend(), cache=tmp_path / "cache")
    assert [second.storage(demo.storage, slot) for slot in range(3)] == values
    assert second.code(demo.storage) == code
    assert second.forked_from is not None and second.forked_from.fetched == 0


def test_a_node_that_is_down_is_a_clear_error() -> None:
    import socket

    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    with pytest.raises(RemoteError, match="cannot be reached"):
        DevChain.fork(url, backend=ethread.MemoryBackend(), limits=FAST_FAIL)
    with pytest.raises(RemoteError, match="http:// or https://"):
        DevChain.fork("file:///etc/passwd", backend=ethread.MemoryBackend())


@pytest.mark.anvil
def test_a_fork_of_anvil(tmp_path: Path) -> None:
    from tests.support.anvil import Anvil, anvil_binary

    anvil = Anvil(anvil_binary(), tmp_path)
    try:
        anvil("anvil_setCode", "0x" + "42" * 20, "0x6001600055")
        anvil("anvil_setStorageAt", "0x" + "42" * 20, "0x" + "00" * 31 + "07",
              "0x" + "00" * 31 + "2a")
        anvil("evm_mine")
        chain = DevChain.fork(anvil.url, backend=ethread.MemoryBackend())
        assert chain.chain_id == 31337
        assert chain.storage("0x" + "42" * 20, 7) == 42
        assert chain.code("0x" + "42" * 20) == bytes.fromhex("6001600055")
        first = to_checksum_address(chain.accounts[0].address)
        assert chain.balance(first) == 10**24
        chain.send(chain.accounts[0], "0x" + "42" * 20)  # runs the code: slot 0 := 1
        chain.mine()
        assert chain.storage("0x" + "42" * 20, 0) == 1
    finally:
        anvil.process.terminate()
        anvil.process.wait(timeout=10)


def test_serve_fork_url(remote: str, tmp_path: Path) -> None:
    demo = shared_demo()
    with ServeProcess(["--fork-url", remote, "--fork-block-number", "40", "--api-key", KEY],
                      cwd=tmp_path) as served:
        url = f"http://127.0.0.1:{served.port}/v3/{KEY}"
        assert remote_call(url, "eth_blockNumber") == hex(41)
        slot = remote_call(url, "eth_getStorageAt", "0x" + demo.storage.hex(), "0x1", "latest")
        assert int(slot, 16) == demo.chain.storage(demo.storage, 1, at=40)
        info = remote_call(url, "anvil_nodeInfo")
        assert info["currentBlockNumber"] == hex(41)
        assert info["forkConfig"]["forkUrl"] == remote.split("/v3/")[0]  # no key shown
        assert info["forkConfig"]["forkBlockNumber"] == 40
        forked = remote_call(url, "anvil_metadata")["forkedNetwork"]
        assert forked == {"chainId": 1337, "forkBlockNumber": 40, "forkBlockHash":
                          remote_call(remote, "eth_getBlockByNumber", hex(40), False)["hash"]}
    done = subprocess.run(
        [*_ethread(), "serve", "--fork-block-number", "3", "--port", "0"],
        capture_output=True, text=True, timeout=60, env={**os.environ})
    assert done.returncode == 2 and "--fork-block-number and --fork-cache need --fork-url" \
        in done.stderr


def _ethread() -> list[str]:
    from tests.support.server_harness import ethread_command

    return ethread_command()


def _proof(chain: DevChain, address: bytes, keys: list[int], block: Any) -> dict[str, Any]:
    answer = EthreadProvider(chain).make_request(  # type: ignore[call-overload]
        "eth_getProof", ["0x" + address.hex(), [hex(k) for k in keys], block])
    return answer  # type: ignore[no-any-return]


def _verified(chain: DevChain, answer: dict[str, Any], number: int) -> None:
    """Check an eth_getProof answer against block ``number``'s state root."""
    from ethread.models import AccountProof, StorageProof

    def raw(text: str) -> bytes:
        digits = text[2:]
        return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits)

    proof = AccountProof(
        address=raw(answer["address"]), account_proof=tuple(map(raw, answer["accountProof"])),
        balance=int(answer["balance"], 16), code_hash=raw(answer["codeHash"]),
        nonce=int(answer["nonce"], 16), storage_hash=raw(answer["storageHash"]),
        storage_proof=tuple(StorageProof(key=raw(e["key"]).rjust(32, b"\0"), value=int(e["value"], 16),
                                         proof=tuple(map(raw, e["proof"])))
                            for e in answer["storageProof"]))
    ethread.verify_account_proof(chain.block(number).header.state_root, proof)


def test_get_proof_on_a_fork(remote: str) -> None:
    demo = shared_demo()
    store = demo.storage
    chain = DevChain.fork(remote, backend=ethread.MemoryBackend())
    forked = chain.head.number - 1
    # at the forked block: the node's proof, checked, equal to what the node answers
    mine = _proof(chain, store, [1, 2], hex(forked))["result"]
    theirs = EthreadProvider(demo.chain).make_request(  # type: ignore[call-overload]
        "eth_getProof", ["0x" + store.hex(), ["0x1", "0x2"], hex(forked)])["result"]
    assert mine == theirs
    assert int(mine["storageProof"][0]["value"], 16) == demo.chain.storage(store, 1)
    _verified(chain, mine, forked)
    # at a local block, an account the fork has not written has no proof there: refused
    refused = _proof(chain, store, [1], "latest")["error"]
    assert refused["code"] == -32000
    assert f"account {to_checksum(store)} has not been written since the fork at block {forked}" \
        in refused["message"]
    # once written, the written slot is proven against the local block; another is refused
    chain.send(chain.accounts[0], store, data=contracts.store_calldata({1: 99}))
    chain.mine()
    local = _proof(chain, store, [1], "latest")["result"]
    assert int(local["storageProof"][0]["value"], 16) == 99
    _verified(chain, local, chain.head.number)
    refused = _proof(chain, store, [2], "latest")["error"]
    assert refused["message"].startswith(f"slot 0x02 of account {to_checksum(store)} has not")
    # an account absent on both sides is proven absent locally
    absent = _proof(chain, b"\x42" * 20, [], "latest")["result"]
    assert absent["balance"] == "0x0"
    _verified(chain, absent, chain.head.number)


def to_checksum(address: bytes) -> str:
    from eth_utils import to_checksum_address

    return to_checksum_address(address)
