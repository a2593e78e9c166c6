"""State files in anvil's shape (``ethread.devchain.state_file``): dumped and loaded between dev
chains and over JSON-RPC, bad states refused, ``ethread serve --state`` loading at start and
writing at exit.

State files are also checked against anvil itself (from tests/js, as the differential run
starts it): a state anvil dumps loads into a dev chain, and one a dev chain dumps loads into
anvil and comes back the same."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from tests.support.anvil import Anvil, anvil_binary
from tests.support.provider_calls import error, ok


def _busy(chain: DevChain) -> bytes:
    """A chain with a contract, storage, nonces and an edited account; the storage contract."""
    storage = chain.deploy_runtime(chain.accounts[0], contracts.STORAGE)
    chain.mine()
    chain.send(chain.accounts[1], storage, data=contracts.store_calldata({1: 11, 2**200: 7}))
    chain.send(chain.accounts[0], chain.accounts[2].address, value=12345)
    chain.mine()
    chain.set_storage("0x" + "77" * 20, 5, 55)
    return storage


SYSTEM_CONTRACTS = {"0x000f3df6d732807ef1319fb7b8bb8522d0beac02",
                    "0x0000f90827f1c53a10cb7a02335b175320002935"}
"""The beacon roots and block hash history: each block writes them, the one a state is loaded
in too, so their storage is compared apart from the rest."""


def _accounts(document: dict[str, Any]) -> dict[str, Any]:
    """Accounts of a state document in one form (numbers as ints, lower-case keys), the system
    contracts left out."""
    def number(value: Any) -> int:
        return value if isinstance(value, int) else int(value, 16)

    return {address.lower(): (number(fields["nonce"]), number(fields["balance"]),
                              fields["code"].lower(),
                              {int(k, 16): int(v, 16) for k, v in fields["storage"].items()
                               if int(v, 16)})
            for address, fields in document["accounts"].items()
            if address.lower() not in SYSTEM_CONTRACTS}


def test_dump_and_load_state_between_dev_chains(chain: DevChain) -> None:
    storage = _busy(chain)
    dumped = json.loads(chain.dump_state())
    accounts = _accounts(dumped)
    assert accounts["0x" + storage.hex()][3] == {1: 11, 2**200: 7}
    assert accounts["0x" + "77" * 20][3] == {5: 55}
    assert dumped["best_block_number"] == chain.head.number
    assert set(dumped) >= {"block", "accounts", "best_block_number", "blocks", "transactions"}
    hexed = ok(chain, "anvil_dumpState")
    assert json.loads(gzip.decompress(bytes.fromhex(hexed[2:]))) == dumped

    fresh = DevChain(ethread.MemoryBackend(), accounts=3, genesis_timestamp=5)
    assert ok(fresh, "anvil_loadState", hexed) is True
    assert fresh.storage(storage, 2**200) == 7 and fresh.code(storage) == chain.code(storage)
    assert fresh.balance(chain.accounts[2].address) == chain.balance(chain.accounts[2].address)
    assert fresh.nonce(chain.accounts[1].address) == 1
    assert fresh.head.timestamp >= chain.head.timestamp
    assert _accounts(json.loads(fresh.dump_state())) == accounts
    # plain JSON loads too, and a state loaded twice changes nothing more
    fresh.load_state(chain.dump_state())
    assert _accounts(json.loads(fresh.dump_state())) == accounts


@pytest.mark.parametrize(("state", "words"), [
    ("0x", "not valid JSON"),
    ("0x1f8b0000", "not valid gzip"),
    ("0x" + json.dumps([]).encode().hex(), "expected a JSON object"),
    ("0x" + json.dumps({"block": {}}).encode().hex(), "no accounts"),
    ("0x" + json.dumps({"accounts": {"0x12": {}}}).encode().hex(), "is not an address"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"nonce": -1}}}).encode().hex(),
     "out of range"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"code": "60"}}}).encode().hex(),
     "0x-prefixed hex"),
    ("0x" + json.dumps({"accounts": {"0x" + "11" * 20: {"storage": {"0x1": "x"}}}}).encode().hex(),
     "not a number"),
    ("state", "hex string without 0x prefix"),
])
def test_bad_states_are_invalid_params(chain: DevChain, state: str, words: str) -> None:
    code, message = error(chain, "anvil_loadState", state)
    assert code == -32602 and words in message, message
    assert chain.head.number == 0


@pytest.fixture(scope="module")
def anvil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Anvil]:
    peer = Anvil(anvil_binary(), tmp_path_factory.mktemp("anvil-home"))
    try:
        yield peer
    finally:
        peer.process.terminate()
        peer.process.wait(timeout=10)


@pytest.mark.anvil
def test_states_travel_between_anvil_and_the_dev_chain(chain: DevChain, anvil: Anvil) -> None:
    # anvil -> ethread: anvil's own accounts, a contract with storage, a nonce
    anvil("anvil_reset")
    anvil("anvil_setCode", "0x" + "42" * 20, "0x6001600055")
    anvil("anvil_setStorageAt", "0x" + "42" * 20, "0x" + "00" * 31 + "09",
          "0x" + "00" * 31 + "2a")
    anvil("anvil_setNonce", "0x" + "42" * 20, "0x3")
    anvil("eth_sendTransaction", {"from": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                                  "to": "0x" + "43" * 20, "value": "0x7"})
    from_anvil = anvil("anvil_dumpState")
    expected = _accounts(json.loads(gzip.decompress(bytes.fromhex(from_anvil[2:]))))
    assert ok(chain, "anvil_loadState", from_anvil) is True
    got = _accounts(json.loads(chain.dump_state()))
    for address, fields in expected.items():
        assert got[address] == fields, address
    assert chain.storage("0x" + "42" * 20, 9) == 42 and chain.nonce("0x" + "42" * 20) == 3

    # ethread -> anvil -> ethread: the dev chain's accounts survive anvil
    storage = _busy(chain)
    ours = _accounts(json.loads(chain.dump_state()))
    anvil("anvil_reset")
    assert anvil("anvil_loadState", ok(chain, "anvil_dumpState")) is True
    assert int(anvil("eth_getStorageAt", "0x" + storage.hex(), hex(2**200), "latest"), 16) == 7
    back = _accounts(json.loads(gzip.decompress(bytes.fromhex(anvil("anvil_dumpState")[2:]))))
    for address, fields in ours.items():
        assert back[address] == fields, address


def test_serve_state_file_is_loaded_at_start_and_written_at_exit(tmp_path: Path) -> None:
    from tests.support.server_harness import KEY, ServeProcess, post

    state = tmp_path / "state.json"
    receiver = "0x" + "5e" * 20
    with ServeProcess(["--state", str(state), "--api-key", KEY], cwd=tmp_path) as served:
        url = f"http://127.0.0.1:{served.port}/v3/{KEY}"
        status, _, answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": "anvil_setBalance",
                                       "params": [receiver, "0x1234"]})
        assert status == 200 and "error" not in answer, answer
        code, err = served.stop()
    assert code == 0 and f"state written to {state}" in err
    assert json.loads(state.read_text())["accounts"][receiver]["balance"] == "0x1234"

    with ServeProcess(["--state", str(state), "--api-key", KEY], cwd=tmp_path) as served:
        url = f"http://127.0.0.1:{served.port}/v3/{KEY}"
        _, _, answer = post(url, {"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance",
                                  "params": [receiver, "latest"]})
        assert answer["result"] == "0x1234"


def test_serve_refuses_a_file_that_is_not_a_state(tmp_path: Path) -> None:
    from tests.support.server_harness import ethread_command

    bad = tmp_path / "state.json"
    bad.write_text('{"accounts": {"0x12": {}}}')
    done = subprocess.run([*ethread_command(), "serve", "--state", str(bad), "--port", "0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert f"state file {bad}: state: '0x12' is not an address" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([*ethread_command(), "serve", "--state", str(bad), "--era",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--state applies to a dev chain only" in done.stderr
