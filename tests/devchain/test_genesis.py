"""devchain/genesis.py: fork schedules (checked when made, from genesis, as a geth genesis
``config``) and the genesis document a dev chain starts from (funded accounts, the system
contracts py-evm updates, ``alloc`` on top, difficulty by the merge, an optional base fee)."""

from __future__ import annotations

import pytest
from eth.vm.forks.cancun.constants import BEACON_ROOTS_ADDRESS
from eth.vm.forks.prague.constants import HISTORY_STORAGE_ADDRESS

import ethread
from ethread.chain.genesis import parse_genesis
from ethread.devchain import DevChain
from ethread.devchain.genesis import (
    DEV_CHAIN_ID,
    OSAKA_FORKS,
    PRAGUE_FORKS,
    RPC_COMPAT_FORKS,
    ForkSchedule,
    genesis_document,
    system_contracts,
)
from ethread.devchain.signing import dev_accounts


def test_fork_schedule_genesis_config_round_trips_through_chain_config() -> None:
    document = genesis_document(forks=RPC_COMPAT_FORKS)
    config = parse_genesis(document).config
    assert config.fork_at(35, 350) == "gray_glacier" and config.fork_at(36, 360) == "paris"
    assert config.fork_at(38, 389) == "paris" and config.fork_at(39, 390) == "shanghai"
    assert config.fork_at(45, 450) == "prague"
    assert document["config"]["eip155Block"] == 6
    with pytest.raises(ValueError, match="order"):
        ForkSchedule(blocks=(("homestead", 5), ("byzantium", 2)))
    with pytest.raises(ValueError, match="merge"):
        ForkSchedule(blocks=(("homestead", 0),), times=(("shanghai", 0),))



def test_a_schedule_from_genesis_puts_every_fork_up_to_it_at_zero() -> None:
    london = ForkSchedule.from_genesis("london")
    assert london.times == () and dict(london.blocks)["london"] == 0
    assert [name for name, _ in london.blocks][-1] == "london" and "paris" not in dict(london.blocks)
    assert dict(PRAGUE_FORKS.times) == {"shanghai": 0, "cancun": 0, "prague": 0}
    assert "osaka" in dict(OSAKA_FORKS.times) and "osaka" not in dict(PRAGUE_FORKS.times)
    config = london.genesis_config(5)
    assert config["chainId"] == 5 and config["londonBlock"] == 0 and config["eip155Block"] == 0
    assert "terminalTotalDifficultyPassed" not in config
    assert PRAGUE_FORKS.genesis_config(1)["terminalTotalDifficultyPassed"] is True


def test_schedules_name_only_forks_of_their_kind() -> None:
    with pytest.raises(ValueError, match="block forks are among"):
        ForkSchedule(blocks=(("cancun", 0),))
    with pytest.raises(ValueError, match="timestamp forks are among"):
        ForkSchedule(blocks=(("paris", 0),), times=(("london", 0),))


def test_the_document_funds_the_accounts_and_holds_the_system_contracts() -> None:
    accounts = dev_accounts(2)
    document = genesis_document(accounts=accounts, balance=77, timestamp=5, gas_limit=9_000_000,
                                alloc={"0x" + "ab" * 20: {"balance": "0x3"}})
    alloc = document["alloc"]
    assert {alloc["0x" + a.address.hex()]["balance"] for a in accounts} == {hex(77)}
    assert alloc["0x" + "ab" * 20] == {"balance": "0x3"}
    for address in (BEACON_ROOTS_ADDRESS, HISTORY_STORAGE_ADDRESS):
        assert alloc["0x" + bytes(address).hex()] == system_contracts()["0x" + bytes(address).hex()]
    assert document["config"]["chainId"] == DEV_CHAIN_ID and document["difficulty"] == "0x0"
    assert document["timestamp"] == "0x5" and document["gasLimit"] == hex(9_000_000)
    assert "baseFeePerGas" not in document
    parsed = parse_genesis(document)
    assert parsed.config.chain_id == DEV_CHAIN_ID


def test_difficulty_before_the_merge_and_a_chosen_base_fee() -> None:
    pow_document = genesis_document(forks=RPC_COMPAT_FORKS, base_fee=7)
    assert pow_document["difficulty"] == hex(0x20000) and pow_document["baseFeePerGas"] == "0x7"


def test_the_system_contracts_are_what_py_evm_updates() -> None:
    chain = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=1)
    parent = chain.head.hash
    chain.mine()
    # EIP-2935: block 1 writes its parent's hash in slot 0 of the history contract
    assert chain.storage(bytes(HISTORY_STORAGE_ADDRESS), 0) == int.from_bytes(parent, "big")
    # EIP-4788: the beacon root (zero here) under the block's time, in its ring buffer
    timestamp = chain.head.timestamp
    assert chain.storage(bytes(BEACON_ROOTS_ADDRESS), timestamp % 8191) == timestamp
