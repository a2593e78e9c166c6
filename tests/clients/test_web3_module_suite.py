"""web3.py's own provider tests (``EthModuleTest``, ``Web3ModuleTest``, ``NetModuleTest``
from ``web3._utils.module_testing``) on ethread's dev chain, through ``EthreadProvider`` and
over HTTP: the chain prepared as web3.py's geth fixture is (see ``tests/support/web3_suite.py``).

Tests are skipped only where they cannot hold on a dev chain, each with its reason in
:data:`SKIPS`.
"""

from __future__ import annotations

import pytest
from web3._utils.module_testing import EthModuleTest, NetModuleTest, Web3ModuleTest

from tests.support.web3_suite import (  # noqa: F401  (fixtures)
    FixtureChain,
    address_conversion_func,
    block_hash_revert_no_msg,
    block_hash_revert_with_msg,
    block_with_txn,
    block_with_txn_with_log,
    emitter_contract,
    emitter_contract_address,
    empty_block,
    geth_fixture_data,
    keyfile_account_address,
    keyfile_account_address_dual_type,
    keyfile_account_pkey,
    math_contract,
    math_contract_address,
    math_contract_deploy_txn_hash,
    mined_txn_hash,
    offchain_lookup_contract,
    panic_errors_contract,
    request_mocker,
    revert_contract,
    skip_if_testrpc,
    storage_contract,
    suite_chain,
    suite_web3,
    txn_hash_with_log,
    w3,
)

SKIPS: dict[str, str] = {
    # marked xfail by web3.py for geth (tests/integration/go_ethereum/common.py), and it can
    # hold on no node: it expects web3.py's own Web3ValueError, which only eth-tester raises in
    # process; a node answers the bad document with an RPC error (ethread: -32602 with the
    # same words, "Expected 2 items for array type Person[2], got 1 items")
    "test_invalid_eth_sign_typed_data": "geth-only xfail: expects an in-process ValueError",
}
"""Test name -> why it cannot run here."""


PENDING = frozenset({
    "test_eth_replace_transaction_legacy",
    "test_eth_replace_transaction",
    "test_eth_replace_transaction_underpriced",
    "test_eth_replace_transaction_gas_price_defaulting_minimum",
    "test_eth_replace_transaction_gas_price_defaulting_strategy_higher",
    "test_eth_replace_transaction_gas_price_defaulting_strategy_lower",
    "test_eth_modify_transaction_legacy",
    "test_eth_modify_transaction",
    "test_eth_get_transaction_receipt_unmined",
    "test_eth_wait_for_transaction_receipt_unmined",
})
"""Tests whose transactions must stay pending: web3.py's geth mines a block every few
seconds, so these run with automine off (the transaction waits in the dev chain's pool)."""


@pytest.fixture(autouse=True)
def _prepare_named(request: pytest.FixtureRequest) -> None:
    reason = SKIPS.get(request.node.originalname)
    if reason:
        pytest.skip(reason)
    if request.node.originalname in PENDING:
        prepared: FixtureChain = request.getfixturevalue("suite_chain")
        prepared.chain.automine = False  # (the w3 fixture turns it on again)


class TestEth(EthModuleTest):
    pass


class TestWeb3(Web3ModuleTest):
    def _check_web3_client_version(self, client_version: str) -> None:
        assert client_version.startswith("ethread/")


class TestNet(NetModuleTest):
    pass
