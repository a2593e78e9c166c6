"""The pytest plugin, run by pytest itself (pytester): fixtures, isolation by snapshot and
revert, and assertion output in hex."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_fixtures_give_a_chain_web3_and_funded_accounts_isolated_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        CHAINS = []

        def test_send(ethread_web3, ethread_accounts, ethread_chain):
            CHAINS.append(ethread_chain)
            alice, bob = ethread_accounts[:2]
            assert alice.address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
            tx = ethread_web3.eth.send_transaction({"to": bob.address, "value": 10**18, "gas": 21000})
            assert ethread_web3.eth.block_number == 1
            assert ethread_chain.balance(bob.address) == 1_000_001 * 10**18

        def test_isolated(ethread_web3, ethread_accounts, ethread_chain):
            CHAINS.append(ethread_chain)
            assert ethread_web3.eth.block_number == 0
            assert ethread_chain.balance(ethread_accounts[1].address) == 1_000_000 * 10**18
            assert CHAINS[0] is CHAINS[1]  # the same chain, rolled back, not rebuilt
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_chain_options_can_be_overridden(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture(scope="session")
        def ethread_chain_options():
            return {"accounts": 3, "balance": 5}
        """
    )
    pytester.makepyfile(
        """
        def test_options(ethread_chain, ethread_accounts):
            assert len(ethread_accounts) == 3
            assert ethread_chain.balance(ethread_accounts[2].address) == 5
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_assertion_output_shows_models_in_hex(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_receipts_differ(ethread_chain):
            a, b = ethread_chain.accounts[:2]
            first = ethread_chain.fund(b.address, 1)
            second = ethread_chain.fund(b.address, 2)
            ethread_chain.mine()
            assert ethread_chain.receipt(first) == ethread_chain.receipt(second)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*Receipt(type=2, status=1*== Receipt(type=2, status=1*",
        "*Differing fields:",
        "*transaction_hash: 0x*!= 0x*",
        "*transaction_index: 0 != 1",
    ])
    assert "b'\\\\x" not in result.stdout.str()
