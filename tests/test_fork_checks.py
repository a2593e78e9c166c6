"""Forking checked end to end, as issue 25 asks: a test suite runs forked from a served chain
(the token suite, and the testing guide's suite through the pytest plugin's fork options);
a second run of a forked suite asks the node nothing it read the first time (a counting proxy
on loopback in front of the node); a node that alters one account's balance is refused with
an error naming the account; and eth_getProof on a fork proves the forked node's values where
a proof can hold them, and refuses clearly where none can.

The node is the demo chain served in this process, on loopback; nothing else is contacted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.fork.remote import RemoteError
from ethread.web3 import EthreadProvider
from tests.support.fork_proxy import CountingProxy
from tests.support.paths import CONTRACTS, REPO
from tests.support.server_harness import KEY, demo_network, serve_in_thread, shared_demo
from tests.support.token_suite import PROVIDER_LINE, SUITE

FORKED_LINE = ("    import os\n"
               "    return Web3(EthreadProvider(DevChain.fork(\n"
               "        os.environ['FORK_URL'], int(os.environ['FORK_BLOCK']),\n"
               "        backend=ethread.MemoryBackend(), cache=os.environ['FORK_CACHE'])))"
               "  # the provider line")


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with serve_in_thread(networks=[demo_network()]) as thread:
        yield f"http://127.0.0.1:{thread.port}/v3/{KEY}"


def forked_token_suite(folder: Path) -> Path:
    """tests/clients/test_token_web3.py with its provider line forking ``FORK_URL`` at
    ``FORK_BLOCK`` (the contract's artifacts where it finds them, in ``../contracts``)."""
    text = SUITE.read_text()
    assert text.count(PROVIDER_LINE) == 1
    shutil.copytree(CONTRACTS, folder / "contracts",
                    ignore=shutil.ignore_patterns("node_modules"), dirs_exist_ok=True)
    path = folder / "clients" / "test_token_forked.py"
    path.parent.mkdir()
    path.write_text(text.replace(PROVIDER_LINE, FORKED_LINE))
    return path


def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", "--rootdir", str(folder), *args],
                          cwd=folder, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_token_suite_runs_forked_and_a_second_run_asks_nothing_again(
        remote: str, tmp_path: Path) -> None:
    suite = forked_token_suite(tmp_path)
    block = shared_demo().chain.head.number
    with CountingProxy(remote) as proxy:
        env = {"FORK_URL": proxy.url, "FORK_BLOCK": str(block),
               "FORK_CACHE": str(tmp_path / "fork-cache")}
        first = run_pytest(tmp_path, str(suite), env=env)
        assert "50 passed" in first
        asked_first = dict(proxy.calls)
        assert asked_first.get("eth_getProof", 0) > 0 and asked_first.get("eth_getBlockByNumber", 0) > 0
        proxy.reset()
        second = run_pytest(tmp_path, str(suite), env=env)
        assert "50 passed" in second
        # what the first run read (headers, accounts, code, storage) is not asked again: only
        # the chain id, which says whose cache to read
        assert dict(proxy.calls) == {"eth_chainId": 1}


def _guide_block(language: str, containing: str) -> str:
    import re

    text = (REPO / "docs" / "testing.md").read_text()
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)
    return next(body for lang, body in blocks if lang == language and containing in body)


@pytest.mark.node
def test_the_guides_suite_runs_forked_through_the_plugin(remote: str, tmp_path: Path) -> None:
    node = shutil.which("node")
    solc = CONTRACTS / "node_modules"
    assert node, "node is needed to compile the guide's contract"
    assert (solc / "solc").is_dir(), "run `npm ci` in tests/contracts first (CI does)"
    folder = tmp_path / "guide"
    (folder / "contracts").mkdir(parents=True)
    (folder / "contracts" / "Counter.sol").write_text(_guide_block("solidity", "contract Counter"))
    (folder / "contracts" / "compile.js").write_text(_guide_block("js", "solc.compile"))
    compiled = subprocess.run([node, "contracts/compile.js"], cwd=folder, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "NODE_PATH": str(solc)})
    assert compiled.returncode == 0, compiled.stderr
    (folder / "test_counter.py").write_text(_guide_block("python", "def test_increment_counts_and_logs"))
    block = shared_demo().chain.head.number
    with CountingProxy(remote) as proxy:
        options = ["--ethread-fork-url", proxy.url, "--ethread-fork-block", str(block),
                   "--ethread-fork-cache", str(tmp_path / "cache")]
        # (the guide's third test checks that a fresh chain starts at block 0: a fork starts
        # after the forked block, so it is left out here)
        out = run_pytest(folder, "test_counter.py", *options, "-k", "not starts_afresh")
        assert "2 passed" in out
        assert proxy.total > 0
        proxy.reset()
        assert "2 passed" in run_pytest(folder, "test_counter.py", *options, "-k", "not starts_afresh")
        assert dict(proxy.calls) == {"eth_chainId": 1}


def test_a_node_that_alters_a_balance_is_refused_naming_the_account(remote: str) -> None:
    victim = DevChain(ethread.MemoryBackend()).accounts[2].address  # a dev account the fork funds
    victim_hex = "0x" + victim.hex()

    def alter(request: dict[str, Any], answer: dict[str, Any]) -> None:
        if request.get("method") == "eth_getProof" and request["params"][0].lower() == victim_hex:
            result = answer["result"]
            result["balance"] = hex(int(result["balance"], 16) + 10**18)

    with CountingProxy(remote, alter) as proxy:
        with pytest.raises(RemoteError, match=f"account {victim_hex} claims balance") as raised:
            DevChain.fork(proxy.url, backend=ethread.MemoryBackend())
        assert "its proof against block" in raised.value.message


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
