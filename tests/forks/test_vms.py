"""The VM classes ethread executes with (ethread/forks/vms.py): on Cancun and Prague their states
skip py-evm's ``set_system_contracts``, which is exact only while py-evm's own call changes
nothing. These tests hold py-evm to that, with the system contracts in place, missing and
holding other code, and check that both classes give the same state."""

from __future__ import annotations

from typing import Any

import pytest
from eth.consensus.context import ConsensusContext
from eth.vm import forks as evm_forks
from eth.vm.chain_context import ChainContext
from eth.vm.forks.cancun.constants import BEACON_ROOTS_ADDRESS, BEACON_ROOTS_CONTRACT_CODE
from eth.vm.forks.prague.constants import HISTORY_STORAGE_ADDRESS, HISTORY_STORAGE_CONTRACT_CODE

from ethread.backends.memory import MemoryBackend
from ethread.devchain import DevChain, ForkSchedule

SYSTEM = {
    BEACON_ROOTS_ADDRESS: BEACON_ROOTS_CONTRACT_CODE,
    HISTORY_STORAGE_ADDRESS: HISTORY_STORAGE_CONTRACT_CODE,
}
PY_EVM = {"cancun": evm_forks.CancunVM, "prague": evm_forks.PragueVM}


def _alloc(code: str | None) -> dict[str, dict[str, str]] | None:
    """Genesis entries for the system contracts' addresses: as a dev chain has them (None),
    without code (""), or with other code."""
    if code is None:
        return None
    entry = {"balance": "0x1", "nonce": "0x1"} | ({"code": code} if code else {})
    return {"0x" + bytes(address).hex(): entry for address in SYSTEM}


def _state(vm_class: Any, chain: DevChain) -> Any:
    header = chain._evm_header(chain.head.hash)
    chaindb = chain.backend.evm_database()
    return vm_class(header=header, chaindb=chaindb, chain_context=ChainContext(chain.chain_id),
                    consensus_context=ConsensusContext(chaindb.db)).state


@pytest.mark.parametrize("fork", ["cancun", "prague"])
@pytest.mark.parametrize("code", [None, "", "0x6001600055"], ids=["in place", "missing", "other"])
def test_py_evms_system_contract_write_changes_nothing(fork: str, code: str | None) -> None:
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis(fork), alloc=_alloc(code))
    chain.fund(chain.accounts[1].address, 1)
    chain.mine()
    root = chain.head.state_root
    theirs = _state(PY_EVM[fork], chain)  # built with py-evm's set_system_contracts
    ours = _state(chain.config.vm_class(chain.head.number + 1, chain.head.timestamp + 10), chain)
    assert type(ours).set_system_contracts is not type(theirs).set_system_contracts
    for state in (theirs, ours):
        for address, system_code in SYSTEM.items():
            held = bytes(state.get_code(address))
            assert held == (system_code if code is None else bytes.fromhex(code[2:]))
        assert bytes(state.make_state_root()) == root


@pytest.mark.parametrize("fork", ["cancun", "prague"])
def test_the_vm_classes_are_py_evms_under_their_own_names(fork: str) -> None:
    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis(fork))
    ours = chain.config.vm_class(1, 10)
    assert ours.__name__ == PY_EVM[fork].__name__
    assert issubclass(ours, PY_EVM[fork])
    assert issubclass(ours.get_state_class(), PY_EVM[fork].get_state_class())
