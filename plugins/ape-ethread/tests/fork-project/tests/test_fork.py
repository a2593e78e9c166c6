"""ethereum:sepolia-fork:ethread: a dev chain continuing the upstream's chain, reading its
accounts from it (each read checked against the forked block's state root with eth_getProof)
and keeping its own writes to itself."""

import os

import ape
import requests

UPSTREAM = f"http://127.0.0.1:{os.environ['ETHREAD_UPSTREAM_PORT']}"
FUNDED_UPSTREAM = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"
"""The upstream node's tenth dev account (not one of this project's test accounts)."""


def upstream(method, *params):
    answer = requests.post(UPSTREAM, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                           "params": list(params)}, timeout=30).json()
    return answer["result"]


def test_the_fork_is_the_upstreams_chain():
    assert ape.chain.chain_id == 11155111
    # the blocks up to the forked one are the upstream's (.ci/ape mines three on it first)
    for number in (1, 3):
        assert ape.chain.blocks[number].hash.hex().removeprefix("0x") == \
            upstream("eth_getBlockByNumber", hex(number), False)["hash"][2:]


def test_upstream_accounts_are_read_from_it():
    assert ape.chain.get_balance(FUNDED_UPSTREAM) == int(
        upstream("eth_getBalance", FUNDED_UPSTREAM, "latest"), 16)


def test_writes_stay_on_the_fork(accounts, project):
    token = accounts[0].deploy(project.Token, "Forked", "FRK", 10)
    assert token.totalSupply() == 10
    assert upstream("eth_getCode", token.address, "latest") == "0x"
    impersonated = ape.accounts[FUNDED_UPSTREAM]
    impersonated.transfer(accounts[1], "1 ether")
    assert int(upstream("eth_getBalance", FUNDED_UPSTREAM, "latest"), 16) > \
        ape.chain.get_balance(FUNDED_UPSTREAM)
