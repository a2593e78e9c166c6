import pytest


def pytest_configure(config):
    # What Ape's eth-tester provider (ethereum:local:test) does not offer: the benchmark
    # (benchmarks/bench_ape.py) deselects these to run the same tests on every provider.
    config.addinivalue_line("markers", "chain_edits: set_balance, set_code, impersonation, "
                            "automine off, mining with a time delta")
    config.addinivalue_line("markers", "traces: call trees, show_trace, gas reports")


@pytest.fixture(scope="session")
def owner(accounts):
    return accounts[0]


@pytest.fixture(scope="session")
def alice(accounts):
    return accounts[1]


@pytest.fixture(scope="session")
def bob(accounts):
    return accounts[2]


@pytest.fixture(scope="module")
def token(project, owner, alice, bob):
    return owner.deploy(project.Token, "Test Token", "TST", 1_000_000 * 10**18)


@pytest.fixture(scope="module")
def timelock(project, owner, token):
    return owner.deploy(project.TimeLock, token)
