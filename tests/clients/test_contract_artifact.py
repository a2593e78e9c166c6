"""The Solidity test contract's checked-in artifact is what solc-js makes of its source:
tests/contracts/Token.json records the compiler version and the source's hash, and compiling
Token.sol again (solc-js from npm, offline, `npm ci` in tests/contracts) gives the same ABI and
bytecode. A dev chain deploys it from its creation bytecode (Prague: PUSH0 and all)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from eth_utils import keccak

import ethread
from ethread.devchain import DevChain
from tests.support.paths import CONTRACTS

ARTIFACT = json.loads((CONTRACTS / "Token.json").read_text())


def test_the_artifact_names_its_compiler_and_matches_its_source() -> None:
    assert ARTIFACT["compiler"].startswith("solc-js 0.8.30+commit.")
    assert ARTIFACT["settings"]["evmVersion"] == "prague"
    source = (CONTRACTS / ARTIFACT["source"]).read_bytes()
    assert ARTIFACT["sourceKeccak256"] == "0x" + keccak(source).hex()
    version = json.loads((CONTRACTS / "package.json").read_text())["dependencies"]["solc"]
    assert ARTIFACT["compiler"].startswith(f"solc-js {version}+")


@pytest.mark.node
def test_solc_js_compiles_the_same_artifact_offline() -> None:
    node = shutil.which("node")
    assert node, "node is needed to compile the test contract"
    assert (CONTRACTS / "node_modules" / "solc").is_dir(), "run `npm ci` in tests/contracts first (CI does)"
    done = subprocess.run([node, "compile.js", "Token.sol"], cwd=CONTRACTS, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ARTIFACT


def test_the_creation_bytecode_deploys_on_a_default_dev_chain() -> None:
    token = ARTIFACT["contracts"]["Token"]
    chain = DevChain(ethread.MemoryBackend(), accounts=1)
    owner = chain.accounts[0]
    address = chain.deploy(owner, token["bytecode"], abi=token["abi"], args=("T", "T", 5))
    chain.mine()
    assert chain.code(address) == bytes.fromhex(token["deployedBytecode"][2:])
    assert bytes.fromhex("5f5ffd") in chain.code(address)  # PUSH0 PUSH0 REVERT: Shanghai and later
    assert chain.storage(address, 2) == 5  # totalSupply
