import pytest


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
