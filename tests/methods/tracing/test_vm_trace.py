"""Parity's ``vmTrace`` by reth's rules (revm-inspectors' parity builder, ``make_instruction``
and ``populate_vm_trace_bytecodes``):

- one entry per step with its ``pc``, ``op`` and ``cost`` (a CALL's and a CREATE's with the gas
  handed on), ``ex.used`` the gas left before the step, ``ex.push`` the items it leaves,
  ``ex.mem`` the whole memory before it, ``ex.store`` an SSTORE's write or a cold SLOAD's read;
- the frame a CALL or CREATE opened as that step's ``sub``; each frame's ``code`` the code of
  the account it ran as the transaction left it;
- walked depth first, the steps are the opcode logger's (same pc, opcode and gas before), and
  the costs are its costs but for a create's handed-on gas.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from tests.support.rpc_cases import answer_of

WORD = 32


@pytest.fixture(scope="module")
def chain() -> dict[str, Any]:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    child_runtime = contracts.assemble(1, 0, "MSTORE", 32, 0, "RETURN")
    child = contracts.initcode(child_runtime)
    callee = dev.deploy_runtime(a[0], contracts.assemble(
        5, "SLOAD", 0, "MSTORE", 32, 0, "RETURN"))
    main = dev.deploy_runtime(a[0], contracts.assemble(
        7, 0, "SSTORE",                      # set slot 0
        0, "SLOAD", "POP",                   # a warm load
        3, "SLOAD", "POP",                   # a cold load
        32, 0, 32, 0, 0, callee, "GAS", "CALL", "POP",
        contracts.store_bytes(64, child), len(child), 64, 0, "CREATE", "POP",
        0, "MLOAD", 0, "MSTORE", 32, 0, "RETURN"))
    dev.mine()
    hashes = {"main": dev.send(a[1], main, gas=500_000),
              "transfer": dev.send(a[1], a[0].address, value=1)}
    dev.mine()
    return {"backend": dev.backend, "main": main, "callee": callee,
            "child_runtime": child_runtime,
            "hashes": {k: "0x" + bytes(v).hex() for k, v in hashes.items()}}


def _vm(chain: dict[str, Any], name: str) -> dict[str, Any]:
    answer = answer_of(chain["backend"], "trace_replayTransaction", chain["hashes"][name],
                       ["vmTrace"])
    return answer["result"]["vmTrace"]  # type: ignore[no-any-return]


def _walk(trace: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for op in trace["ops"]:
        out.append(op)
        if op["sub"] is not None:
            out.extend(_walk(op["sub"]))
    return out


def test_steps_are_the_opcode_loggers(chain: dict[str, Any]) -> None:
    vm = _vm(chain, "main")
    logs = answer_of(chain["backend"], "debug_traceTransaction", chain["hashes"]["main"],
                     {})["result"]["structLogs"]
    ops = _walk(vm)
    assert [(o["pc"], o["op"], o["ex"]["used"]) for o in ops] == [
        (s["pc"], s["op"], s["gas"]) for s in logs]
    for op, step in zip(ops, logs, strict=True):
        if op["op"] == "CREATE":
            assert op["cost"] == step["gasCost"] + int(
                answer_of(chain["backend"], "debug_traceTransaction", chain["hashes"]["main"],
                          {"tracer": "callTracer"})["result"]["calls"][1]["gas"], 16)
        else:
            assert op["cost"] == step["gasCost"], op


def test_what_each_step_did(chain: dict[str, Any]) -> None:
    vm = _vm(chain, "main")
    ops = vm["ops"]
    first = ops[0]
    assert first["op"] == "PUSH1" and first["pc"] == 0 and first["cost"] == 3
    assert first["ex"]["push"] == ["0x7"] and first["ex"]["mem"] == {"data": "0x", "off": 0}
    assert first["ex"]["store"] is None and first["sub"] is None
    sstore = next(o for o in ops if o["op"] == "SSTORE")
    assert sstore["ex"]["store"] == {"key": "0x0", "val": "0x7"} and sstore["ex"]["push"] == []
    loads = [o for o in ops if o["op"] == "SLOAD"]
    assert loads[0]["ex"]["push"] == ["0x7"] and loads[0]["ex"]["store"] is None  # (warm)
    assert loads[1]["ex"]["push"] == ["0x0"]
    assert loads[1]["ex"]["store"] == {"key": "0x3", "val": "0x0"}  # (cold)
    dup = next(o for o in ops if o["op"] == "GAS")
    assert len(dup["ex"]["push"]) == 1
    for before, after in itertools.pairwise(ops):
        if before["op"] not in ("CALL", "CREATE"):
            assert after["ex"]["used"] == before["ex"]["used"] - before["cost"]


def test_frames_and_code(chain: dict[str, Any]) -> None:
    vm = _vm(chain, "main")
    backend = chain["backend"]
    code = answer_of(backend, "eth_getCode", "0x" + chain["main"].hex(), "latest")["result"]
    assert vm["code"] == code
    call = next(o for o in vm["ops"] if o["op"] == "CALL")
    callee_code = answer_of(backend, "eth_getCode", "0x" + chain["callee"].hex(), "latest")
    assert call["sub"]["code"] == callee_code["result"]
    assert [o["op"] for o in call["sub"]["ops"]][:2] == ["PUSH1", "SLOAD"]
    assert call["ex"]["push"] == ["0x1"]
    create = next(o for o in vm["ops"] if o["op"] == "CREATE")
    assert create["sub"]["code"] == "0x" + chain["child_runtime"].hex()  # (the deployed code)
    assert len(create["ex"]["push"]) == 1 and create["ex"]["push"][0] != "0x0"
    mstore_at = next(i for i, o in enumerate(vm["ops"]) if o["op"] == "MSTORE")
    assert vm["ops"][mstore_at + 1]["ex"]["mem"]["off"] >= WORD


def test_a_transfer_has_no_ops(chain: dict[str, Any]) -> None:
    assert _vm(chain, "transfer") == {"code": "0x", "ops": []}


def test_trace_call_and_block_answer_it(chain: dict[str, Any]) -> None:
    backend = chain["backend"]
    call = answer_of(backend, "trace_call", {"to": "0x" + chain["callee"].hex()},
                     ["vmTrace"], "latest")["result"]
    assert [o["op"] for o in call["vmTrace"]["ops"]][:2] == ["PUSH1", "SLOAD"]
    block = answer_of(backend, "trace_replayBlockTransactions", "0x2", ["vmTrace"])["result"]
    assert block[0]["vmTrace"] == _vm(chain, "main")
