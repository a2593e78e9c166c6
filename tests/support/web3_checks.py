"""Checks web3.py users make, run through more than one provider (in process and over a
live server)."""

from __future__ import annotations

from typing import Any

import pytest
from web3 import Web3
from web3.exceptions import ContractLogicError

from ethread.devchain import contracts
from ethread.devchain.demo import Demo
from tests.support.contracts import load_calldata


def execution_checks(w3: Web3, demo: Demo) -> None:
    """eth_estimateGas, eth_createAccessList and eth_call's overrides through web3.py."""
    storage, reverter = Web3.to_checksum_address(demo.storage), demo.reverter
    assert reverter is not None
    sender = Web3.to_checksum_address(demo.chain.accounts[1].address)
    other = Web3.to_checksum_address(demo.chain.accounts[2].address)
    assert w3.eth.estimate_gas({"from": sender, "to": other, "value": 1}) == 21_000
    store: Any = {"from": sender, "to": storage, "data": contracts.store_calldata({77: 1})}
    gas = w3.eth.estimate_gas(store)
    assert 21_000 + 20_000 < gas < 60_000  # one fresh slot: SSTORE from zero costs 20,000 (+ cold)
    listed = w3.eth.create_access_list(store)
    assert [entry["address"] for entry in listed["accessList"]] == [storage]
    assert [str(k) for k in listed["accessList"][0]["storageKeys"]] == ["0x" + (77).to_bytes(32, "big").hex()]
    with pytest.raises(ContractLogicError, match="user error"):
        w3.eth.estimate_gas({"to": Web3.to_checksum_address(reverter), "data": contracts.ERROR_CALL})
    slot, value = "0x" + (5).to_bytes(32, "big").hex(), "0x" + (99).to_bytes(32, "big").hex()
    override: Any = {storage: {"stateDiff": {slot: value}}}
    answer = w3.eth.call({"to": storage, "data": load_calldata(5)}, "latest", override)
    assert int.from_bytes(answer, "big") == 99
