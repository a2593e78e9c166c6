"""eth_call's lean classes with py-evm's own interpreter loop: the reference the lean loop
is measured against (``benchmarks/bench_call.py``), kept here rather than in the package,
which runs one loop."""

from __future__ import annotations

from functools import cache
from typing import Any

from ethread.evm.lean_interpreter import lean_vm_class


@cache
def py_evm_loop_vm_class(vm_class: Any) -> Any:
    """:func:`~ethread.evm.lean_interpreter.lean_vm_class` of ``vm_class`` (its lean account
    database and snapshots) with the fork's own computation class, py-evm's loop, in place
    of the lean one. A memoised class build (one per fork)."""
    lean = lean_vm_class(vm_class)
    state = lean.get_state_class()
    own = vm_class.get_state_class().computation_class
    plain = type(state.__name__, (state,), {"computation_class": own})
    return lean.configure(__name__=lean.__name__, _state_class=plain)
