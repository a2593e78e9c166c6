"""Edge cases where a trace's shape is decided by geth's sources (``core/vm``,
``eth/tracers/native``) or by reth's parity builder (revm-inspectors' ``parity_trace_output``),
each checked on a transaction built to hit it.

- an SSTORE with 2,300 gas or less left (EIP-2200's sentry): geth's gas function fails with
  ``not enough gas for reentrancy sentry``, which its interpreter wraps in ``ErrOutOfGas``
  (``out of gas: not enough gas for reentrancy sentry``), on the step and on the frame; the
  step's cost is the opcode's constant gas (none for SSTORE);
- a CALL py-evm refuses before running it (more value than the caller holds): geth's
  ``evm.Call`` reports the frame before its checks (``captureBegin``), so callTracer shows it
  with ``insufficient balance for transfer``, the gas it was to get and none used;
- a CREATE2 to an address already taken: geth's ``evm.create`` reports the frame, then fails
  with ``contract address collision`` and keeps all the gas it was given;
- a CREATE whose init code reverts: geth's callTracer leaves the frame's ``to`` out, so its
  flatCallTracer's result has no ``address`` (``call_flat.go``, ``newFlatCreate``); reth's
  parity builder gives the address the contract would have had.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_utils import keccak

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from tests.support.rpc_cases import answer_of


def _create_address(sender: bytes, nonce: int) -> bytes:
    import rlp

    return keccak(rlp.encode([sender, nonce]))[12:]


@pytest.fixture(scope="module")
def chain() -> dict[str, Any]:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=2)
    a = dev.accounts
    writer = dev.deploy_runtime(a[0], contracts.assemble(1, 0, "SSTORE", "STOP"))
    # calls the writer with 2,000 gas: its SSTORE meets the sentry
    starved = dev.deploy_runtime(a[0], contracts.assemble(0, 0, 0, 0, 0, writer, 2000, "CALL",
                                                           "POP", "STOP"))
    reverting_init = contracts.assemble(
        contracts.store_bytes(0, contracts.error_data("no")), 100, 0, "REVERT")
    creator = dev.deploy_runtime(a[0], contracts.assemble(
        contracts.store_bytes(0, reverting_init), len(reverting_init), 0, 0, "CREATE", "POP",
        "STOP"))
    spender = dev.deploy_runtime(a[0], contracts.assemble(
        0, 0, 0, 0, "SELFBALANCE", 1, "ADD", writer, "GAS", "CALL", "POP", "STOP"), value=5)
    child = contracts.initcode(b"\x00")
    factory = dev.deploy_runtime(a[0], contracts.assemble(
        contracts.store_bytes(0, child), 0x42, len(child), 0, 0, "CREATE2", "POP",
        0x42, len(child), 0, 0, "CREATE2", "POP", "STOP"))
    dev.mine()
    hashes = {
        "refused": dev.send(a[1], spender, gas=100_000),
        "collision": dev.send(a[1], factory, gas=300_000),
        "sentry": dev.send(a[1], starved, gas=100_000),
        "sentry-top": dev.send(a[1], writer, gas=21_000 + 6 + 2_000),
        "reverted-create": dev.send(a[1], creator, gas=300_000),
    }
    dev.mine()
    return {"backend": dev.backend, "creator": creator, "writer": writer, "spender": spender,
            "factory": factory, "child": child,
            "hashes": {k: "0x" + bytes(v).hex() for k, v in hashes.items()}}


def _trace(chain: dict[str, Any], name: str, config: dict[str, Any]) -> Any:
    answer = answer_of(chain["backend"], "debug_traceTransaction", chain["hashes"][name], config)
    assert "error" not in answer, answer
    return answer["result"]


SENTRY = "out of gas: not enough gas for reentrancy sentry"


def test_sentry_in_call_frames(chain: dict[str, Any]) -> None:
    top = _trace(chain, "sentry", {"tracer": "callTracer"})
    assert top["calls"][0]["error"] == SENTRY
    assert "error" not in top
    alone = _trace(chain, "sentry-top", {"tracer": "callTracer"})
    assert alone["error"] == SENTRY


def test_sentry_on_the_step(chain: dict[str, Any]) -> None:
    logs = _trace(chain, "sentry", {})["structLogs"]
    failed = [step for step in logs if "error" in step]
    assert [(s["op"], s["error"], s["gasCost"], s["depth"]) for s in failed] == [
        ("SSTORE", SENTRY, 0, 2)]


def test_sentry_in_parity_words(chain: dict[str, Any]) -> None:
    flat = _trace(chain, "sentry", {"tracer": "flatCallTracer",
                                    "tracerConfig": {"convertParityErrors": True}})
    assert flat[1]["error"] == "Out of gas"
    assert "result" not in flat[1]
    plain = _trace(chain, "sentry", {"tracer": "flatCallTracer"})
    assert plain[1]["error"] == SENTRY
    parity = answer_of(chain["backend"], "trace_transaction", chain["hashes"]["sentry"])["result"]
    assert parity[1]["error"] == "Out of gas" and parity[1]["result"] is None


def test_reverted_create_in_geth_tracers(chain: dict[str, Any]) -> None:
    top = _trace(chain, "reverted-create", {"tracer": "callTracer"})
    create = top["calls"][0]
    assert create["type"] == "CREATE" and create["error"] == "execution reverted"
    assert "to" not in create and create["revertReason"] == "no"
    flat = _trace(chain, "reverted-create", {"tracer": "flatCallTracer"})
    entry = flat[1]
    assert entry["type"] == "create" and entry["error"] == "execution reverted"
    assert "address" not in entry["result"]
    assert entry["result"]["code"] == create["output"]
    assert entry["result"]["gasUsed"] == create["gasUsed"]


def test_reverted_create_in_parity_traces(chain: dict[str, Any]) -> None:
    would_be = "0x" + _create_address(chain["creator"], 1).hex()
    parity = answer_of(chain["backend"], "trace_transaction",
                       chain["hashes"]["reverted-create"])["result"]
    entry = parity[1]
    assert entry["type"] == "create" and entry["error"] == "Reverted"
    assert entry["result"]["address"] == would_be
    replay = answer_of(chain["backend"], "trace_replayTransaction",
                       chain["hashes"]["reverted-create"], ["trace"])["result"]
    assert replay["trace"][1]["result"]["address"] == would_be


def test_refused_call_has_a_frame(chain: dict[str, Any]) -> None:
    top = _trace(chain, "refused", {"tracer": "callTracer"})
    (call,) = top["calls"]
    assert call["type"] == "CALL" and call["error"] == "insufficient balance for transfer"
    assert call["from"] == "0x" + chain["spender"].hex() and call["to"] == "0x" + chain["writer"].hex()
    assert call["value"] == hex(6) and call["gasUsed"] == "0x0" and call["input"] == "0x"
    assert "output" not in call
    steps = _trace(chain, "refused", {})["structLogs"]
    (step,) = [s for s in steps if s["op"] == "CALL"]
    # geth's CALL step costs the gas handed to the callee too (given back at once here)
    assert step["gasCost"] > int(call["gas"], 16) and step["gasCost"] < step["gas"]
    after = steps[steps.index(step) + 1]
    assert after["gas"] == step["gas"] - step["gasCost"] + int(call["gas"], 16)
    parity = answer_of(chain["backend"], "trace_transaction", chain["hashes"]["refused"])["result"]
    assert parity[1]["action"]["callType"] == "call" and parity[1]["result"] is None
    assert parity[1]["traceAddress"] == [0] and parity[0]["subtraces"] == 1


def test_collision_has_a_frame(chain: dict[str, Any]) -> None:
    top = _trace(chain, "collision", {"tracer": "callTracer"})
    first, second = top["calls"]
    assert first["type"] == second["type"] == "CREATE2"
    assert "error" not in first
    assert second["error"] == "contract address collision" and "to" not in second
    assert second["gasUsed"] == second["gas"] and second["input"] == "0x" + chain["child"].hex()
    assert second["value"] == "0x0"
    steps = _trace(chain, "collision", {})["structLogs"]
    creates = [s for s in steps if s["op"] == "CREATE2"]
    assert len(creates) == 2 and creates[0]["gasCost"] == creates[1]["gasCost"]
    parity = answer_of(chain["backend"], "trace_transaction",
                       chain["hashes"]["collision"])["result"]
    assert parity[2]["type"] == "create" and parity[2]["result"] is None
    assert parity[2]["error"] == "contract address collision"
