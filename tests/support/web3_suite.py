"""Fixtures for running web3.py's own provider test classes (``web3._utils.module_testing``:
``EthModuleTest``, ``Web3ModuleTest``, ``NetModuleTest``) against ethread's dev chain.

web3.py runs these classes against a geth whose data directory was prepared by a script that
deploys its fixture contracts and makes a few known blocks (``tests/integration/
generate_fixtures/go_ethereum.py`` in web3.py's repository). :func:`fixture_chain` does the same
on a dev chain, in the same order: the math and emitter contracts, a transaction with a log,
the revert contract with a passing and two reverting calls, the offchain-lookup, panic-errors
and storage contracts, an empty block and a block with one plain transfer. geth's keyfile
account, which those tests sign and send with, is the dev chain's first account here.

Each test then runs on that chain from a snapshot and is reverted after it, so tests never see
each other's blocks (web3.py restarts geth from its zipped data directory for each test).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from eth_utils import to_bytes, to_checksum_address
from web3 import Web3
from web3._utils.contract_sources.contract_data._custom_contract_data import EMITTER_ENUM
from web3._utils.contract_sources.contract_data.emitter_contract import EMITTER_CONTRACT_DATA
from web3._utils.contract_sources.contract_data.math_contract import MATH_CONTRACT_DATA
from web3._utils.contract_sources.contract_data.offchain_lookup import OFFCHAIN_LOOKUP_DATA
from web3._utils.contract_sources.contract_data.panic_errors_contract import (
    PANIC_ERRORS_CONTRACT_DATA,
)
from web3._utils.contract_sources.contract_data.revert_contract import REVERT_CONTRACT_DATA
from web3._utils.contract_sources.contract_data.storage_contract import STORAGE_CONTRACT_DATA
from web3._utils.module_testing.utils import RequestMocker

import ethread
from ethread.devchain import DevChain
from ethread.web3 import EthreadProvider

from .server_harness import KEY, serve_in_thread

GETH_FIXTURE_CHAIN_ID = 131277322940537
"""The chain id of web3.py's geth fixture, which its tests sign for and compare with."""


@dataclass(frozen=True)
class FixtureChain:
    """A dev chain prepared as web3.py's geth fixture is, and what the tests look up in it
    (the names of web3.py's ``config.json``)."""

    chain: DevChain
    data: dict[str, Any]


def _deploy(w3: Web3, contract_data: dict[str, Any]) -> Any:
    factory = w3.eth.contract(**contract_data)
    return w3.eth.wait_for_transaction_receipt(factory.constructor().transact())


def fixture_chain() -> FixtureChain:
    """The dev chain with web3.py's fixture contracts and blocks."""
    # geth's fixture chain is mined by its genesis coinbase, which the fees then go to: the
    # zero address is both here.
    chain = DevChain(ethread.MemoryBackend(), chain_id=GETH_FIXTURE_CHAIN_ID,
                     coinbase=b"\x00" * 20)
    w3 = Web3(EthreadProvider(chain))
    coinbase = to_checksum_address(chain.accounts[0].address)
    w3.eth.default_account = coinbase
    math = _deploy(w3, MATH_CONTRACT_DATA)
    emitter = _deploy(w3, EMITTER_CONTRACT_DATA)
    emitter_contract = w3.eth.contract(address=emitter["contractAddress"], **EMITTER_CONTRACT_DATA)
    with_log = emitter_contract.functions.logDouble(
        which=EMITTER_ENUM["LogDoubleWithIndex"], arg0=12345, arg1=54321).transact()
    block_with_log = w3.eth.get_transaction_receipt(with_log)["blockHash"]
    revert = _deploy(w3, REVERT_CONTRACT_DATA)
    revert_contract = w3.eth.contract(address=revert["contractAddress"], **REVERT_CONTRACT_DATA)
    revert_contract.functions.normalFunction().transact({"gas": 320_000})
    with_msg = revert_contract.functions.revertWithMessage().transact({"gas": 320_000})
    no_msg = revert_contract.functions.revertWithoutMessage().transact({"gas": 320_000})
    offchain = _deploy(w3, OFFCHAIN_LOOKUP_DATA)
    panic = _deploy(w3, PANIC_ERRORS_CONTRACT_DATA)
    storage = _deploy(w3, STORAGE_CONTRACT_DATA)
    chain.mine()
    empty_block = w3.eth.get_block("latest")["hash"]
    mined = w3.eth.send_transaction({"to": coinbase, "value": 1, "gas": 21_000,
                                     "gasPrice": w3.eth.gas_price})
    block_with_txn = w3.eth.get_transaction_receipt(mined)["blockHash"]
    data = {
        "keyfile_account_address": coinbase,
        "keyfile_account_pkey": "0x" + chain.accounts[0].private_key.hex(),
        "math_deploy_txn_hash": math["transactionHash"],
        "math_address": math["contractAddress"],
        "emitter_address": emitter["contractAddress"],
        "revert_address": revert["contractAddress"],
        "offchain_lookup_address": offchain["contractAddress"],
        "panic_errors_contract_address": panic["contractAddress"],
        "storage_contract_address": storage["contractAddress"],
        "txn_hash_with_log": with_log,
        "block_hash_with_log": block_with_log,
        "block_hash_revert_with_msg": w3.eth.get_transaction_receipt(with_msg)["blockHash"],
        "block_hash_revert_no_msg": w3.eth.get_transaction_receipt(no_msg)["blockHash"],
        "empty_block_hash": empty_block,
        "mined_txn_hash": mined,
        "block_with_txn_hash": block_with_txn,
    }
    return FixtureChain(chain, data)


# -- the fixtures web3.py's test classes ask for ------------------------------------------------


@pytest.fixture(scope="module")
def suite_chain() -> FixtureChain:
    return fixture_chain()


@pytest.fixture(scope="module", params=["in-process", "http"])
def suite_web3(request: pytest.FixtureRequest, suite_chain: FixtureChain) -> Iterator[Web3]:
    """web3.py over the fixture chain: in this process, and over HTTP from ``ethread serve``'s
    server in a thread."""
    if request.param == "in-process":
        yield Web3(EthreadProvider(suite_chain.chain))
        return
    from ethread.server import make_network

    network = make_network("dev", suite_chain.chain.backend, miner=suite_chain.chain)
    with serve_in_thread(networks=[network]) as thread:
        yield Web3(Web3.HTTPProvider(f"http://127.0.0.1:{thread.port}/v3/{KEY}",
                                     request_kwargs={"timeout": 30}))


@pytest.fixture
def w3(suite_web3: Web3, suite_chain: FixtureChain) -> Iterator[Web3]:
    """The module's web3, each test on the fixture chain as it was prepared."""
    snapshot = suite_chain.chain.snapshot()
    suite_web3.eth.default_account = suite_chain.data["keyfile_account_address"]
    try:
        yield suite_web3
    finally:
        suite_chain.chain.automine = True
        suite_chain.chain.revert(snapshot)


@pytest.fixture(scope="module", params=[lambda x: to_bytes(hexstr=x), lambda x: x],
                ids=["bytes", "hex"])
def address_conversion_func(request: pytest.FixtureRequest) -> Callable[[str], Any]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def request_mocker() -> type[RequestMocker]:
    return RequestMocker


@pytest.fixture
def skip_if_testrpc() -> Callable[[Web3], None]:
    return lambda w3: None


@pytest.fixture
def geth_fixture_data(suite_chain: FixtureChain) -> dict[str, Any]:
    return suite_chain.data


def _datum(key: str) -> Any:
    """A fixture of one value of the prepared chain's data (under web3.py's fixture names)."""

    @pytest.fixture
    def datum(geth_fixture_data: dict[str, Any]) -> Any:
        return geth_fixture_data[key]

    return datum


def _block(key: str) -> Any:
    """A fixture of the block whose hash the prepared chain's data holds under ``key``."""

    @pytest.fixture
    def block(w3: Web3, geth_fixture_data: dict[str, Any]) -> Any:
        return w3.eth.get_block(geth_fixture_data[key])

    return block


def _contract(contract_data: dict[str, Any], key: str) -> Any:
    """A fixture of the contract deployed at the address the data holds under ``key``."""

    @pytest.fixture
    def contract(w3: Web3, geth_fixture_data: dict[str, Any]) -> Any:
        return w3.eth.contract(address=geth_fixture_data[key], **contract_data)

    return contract


math_contract_deploy_txn_hash = _datum("math_deploy_txn_hash")
keyfile_account_pkey = _datum("keyfile_account_pkey")
keyfile_account_address = _datum("keyfile_account_address")
mined_txn_hash = _datum("mined_txn_hash")
txn_hash_with_log = _datum("txn_hash_with_log")
block_hash_revert_no_msg = _datum("block_hash_revert_no_msg")
block_hash_revert_with_msg = _datum("block_hash_revert_with_msg")
empty_block = _block("empty_block_hash")
block_with_txn = _block("block_with_txn_hash")
block_with_txn_with_log = _block("block_hash_with_log")
math_contract = _contract(MATH_CONTRACT_DATA, "math_address")
emitter_contract = _contract(EMITTER_CONTRACT_DATA, "emitter_address")
revert_contract = _contract(REVERT_CONTRACT_DATA, "revert_address")
offchain_lookup_contract = _contract(OFFCHAIN_LOOKUP_DATA, "offchain_lookup_address")
panic_errors_contract = _contract(PANIC_ERRORS_CONTRACT_DATA, "panic_errors_contract_address")
storage_contract = _contract(STORAGE_CONTRACT_DATA, "storage_contract_address")


@pytest.fixture
def math_contract_address(math_contract: Any, address_conversion_func: Callable[[str], Any]) -> Any:
    return address_conversion_func(math_contract.address)


@pytest.fixture
def emitter_contract_address(emitter_contract: Any,
                             address_conversion_func: Callable[[str], Any]) -> Any:
    return address_conversion_func(emitter_contract.address)


@pytest.fixture
def keyfile_account_address_dual_type(keyfile_account_address: str) -> str:
    return keyfile_account_address
