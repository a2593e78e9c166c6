"""evm-trace (the library Ape builds its call trees with) reads ethread's traces: callTracer's
tree (``get_calltree_from_geth_call_trace``) and the opcode logger's steps
(``create_trace_frames`` and ``get_calltree_from_geth_trace``), on the router transaction of
tests/differential/test_anvil_traces.py (a call, a delegate call, two precompiles, a callee that reverts,
logs) and on one that creates contracts.

evm-trace 0.3 pins eth-utils below 6; it works with ethread's eth-utils 6 when installed
without its dependencies (``pip install --no-deps evm-trace eth-pydantic-types cchecksum
msgspec``), so it is no requirement of ethread's extras. Outside CI the module skips without
it; in CI (``CI`` set) ``.ci/run`` installs it that way into a folder of its own, put on the
path for this module alone, and a missing evm-trace fails here instead."""

from __future__ import annotations

import os
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from tests.support.router import router
from tests.support.rpc_cases import answer_of

if os.environ.get("CI"):
    import evm_trace  # (never skipped in CI: .ci/run puts it on the path for this module)
else:
    evm_trace = pytest.importorskip("evm_trace", reason="pip install --no-deps evm-trace ...")


@pytest.fixture(scope="module")
def chain() -> tuple[DevChain, list[str], bytes, bytes, bytes]:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    storage = dev.deploy_runtime(a[0], contracts.STORAGE)
    reverter = dev.deploy_runtime(a[0], contracts.REVERTER)
    routed = dev.deploy_runtime(a[0], router(storage, reverter))
    dev.mine()
    dev.send(a[1], routed, data=b"\x01", gas=1_000_000)
    dev.send(a[1], routed, data=b"\x02", value=10**6, gas=1_000_000)
    dev.mine()
    hashes = ["0x" + itx.hash.hex() for itx in dev.block(2).transactions]
    return dev, hashes, storage, reverter, routed


def _trace(dev: DevChain, tx_hash: str, config: dict[str, Any]) -> Any:
    return answer_of(dev.backend, "debug_traceTransaction", tx_hash, config)["result"]


def test_call_tracer_tree(chain: Any) -> None:
    from evm_trace import CallType, get_calltree_from_geth_call_trace

    dev, hashes, storage, reverter, routed = chain
    tree = get_calltree_from_geth_call_trace(_trace(dev, hashes[0], {"tracer": "callTracer"}))
    assert tree.call_type == CallType.CALL and bytes(tree.address) == routed
    assert bytes(tree.calldata) == b"\x01" and not tree.failed
    kinds = [(call.call_type, bytes(call.address)) for call in tree.calls]
    assert kinds == [(CallType.CALL, storage), (CallType.DELEGATECALL, storage),
                     (CallType.STATICCALL, (2).to_bytes(20, "big")), (CallType.CALL, reverter),
                     (CallType.CALL, (4).to_bytes(20, "big"))]
    assert [call.failed for call in tree.calls] == [False, False, False, True, False]
    assert tree.gas_cost == int(answer_of(dev.backend, "eth_getTransactionReceipt", hashes[0])
                                ["result"]["gasUsed"], 16)


def test_call_tracer_creates(chain: Any) -> None:
    from evm_trace import CallType, get_calltree_from_geth_call_trace

    dev, hashes, *_ = chain
    tree = get_calltree_from_geth_call_trace(_trace(dev, hashes[1], {"tracer": "callTracer"}))
    assert tree.value == 10**6
    assert [call.call_type for call in tree.calls] == [CallType.CREATE, CallType.CREATE2, CallType.CREATE]
    assert tree.calls[2].selfdestruct or tree.calls[2].calls  # (the constructor self-destructs)


def test_struct_logs_tree(chain: Any) -> None:
    from evm_trace import CallType, get_calltree_from_geth_trace
    from evm_trace.geth import create_trace_frames

    dev, hashes, storage, reverter, routed = chain
    logs = _trace(dev, hashes[0], {"enableMemory": True})["structLogs"]
    tree = get_calltree_from_geth_trace(create_trace_frames(logs), call_type=CallType.CALL,
                                        address=routed, calldata=b"\x01", gas_limit=1_000_000)
    # the opcode logger has no frames for precompiles: evm-trace sees the calls that ran code
    kinds = [(call.call_type, bytes(call.address)) for call in tree.calls]
    assert (CallType.CALL, storage) in kinds and (CallType.DELEGATECALL, storage) in kinds
    assert (CallType.CALL, reverter) in kinds
    assert len(tree.events) == 2  # the router's two LOG1s

    create_logs = _trace(dev, hashes[1], {"enableMemory": True})["structLogs"]
    created = get_calltree_from_geth_trace(create_trace_frames(create_logs),
                                           call_type=CallType.CALL, address=routed)
    assert [call.call_type for call in created.calls][:2] == [CallType.CREATE, CallType.CREATE2]
