"""The py-evm virtual machine class that runs a fork's blocks: py-evm's own up to Cancun,
``ethread.evm``'s Prague (py-evm's under the chain's blob parameters) and Osaka after it, each
BPO fork Osaka with its blob parameters."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ..evm import BlobParams, osaka_vm, prague_vm
from .table import Fork

if TYPE_CHECKING:
    from eth.abc import VirtualMachineAPI

_PY_EVM_CLASSES = {
    "frontier": "FrontierVM",
    "homestead": "HomesteadVM",
    "tangerine_whistle": "TangerineWhistleVM",
    "spurious_dragon": "SpuriousDragonVM",
    "byzantium": "ByzantiumVM",
    "constantinople": "ConstantinopleVM",
    "petersburg": "PetersburgVM",
    "istanbul": "IstanbulVM",
    "muir_glacier": "MuirGlacierVM",
    "berlin": "BerlinVM",
    "london": "LondonVM",
    "arrow_glacier": "ArrowGlacierVM",
    "gray_glacier": "GrayGlacierVM",
    "paris": "ParisVM",
    "shanghai": "ShanghaiVM",
    "cancun": "CancunVM",
}


def vm_class_for(fork: Fork, dao_fork_block: int | None) -> type[VirtualMachineAPI]:
    """The VM class for blocks under ``fork`` (a row with the chain's blob parameters)."""
    blob = fork.blob if fork.vm_base in ("prague", "osaka") else None
    return _vm_class(fork.vm_base, blob, dao_fork_block)


@cache
def _vm_class(base: str, blob: BlobParams | None, dao_fork_block: int | None,
              ) -> type[VirtualMachineAPI]:
    if base == "osaka":
        assert blob is not None
        return osaka_vm(blob)
    if base == "prague":
        # py-evm's Prague under the chain's blob parameters, MODEXP's answer corrected
        assert blob is not None
        return prague_vm(blob)
    from eth.vm import forks

    vm: Any = getattr(forks, _PY_EVM_CLASSES[base])
    if base == "homestead":
        # py-evm's Homestead applies the mainnet DAO drain unless told otherwise.
        if dao_fork_block is None:
            vm = vm.configure(__name__="HomesteadVM", support_dao_fork=False)
        else:
            vm = vm.configure(__name__="HomesteadVM", _dao_fork_block_number=dao_fork_block)
    if base == "cancun":
        vm = without_code_rewrite(vm)
    return vm  # type: ignore[no-any-return]


def without_code_rewrite(vm: Any) -> Any:
    """``vm`` with a state class that skips py-evm's ``set_system_contracts``.

    py-evm's Cancun and Prague states call it whenever one is built (each executed block,
    each eth_call and estimate): it writes the beacon-roots (and block-history) contract's code
    at its address when the address holds exactly that code already, and does nothing
    otherwise (``if not get_code(...) != CODE``). Writing what is there changes no account, no
    state root and no warm address; it only costs the state two account reads from the trie
    and a code write, about 0.4 ms a state. tests/forks/test_vms.py holds py-evm to that."""
    state = vm.get_state_class()
    quiet = state.configure(__name__=state.__name__, set_system_contracts=_keep_system_contracts)
    return vm.configure(__name__=vm.__name__, _state_class=quiet)


def _keep_system_contracts(state: Any) -> None:
    """In place of py-evm's ``set_system_contracts``: leave the state as it is."""
