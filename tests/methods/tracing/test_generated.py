"""Tracing's fast paths answer what the plain path answers, on generated programs: random
chains of calls (each of CALL, CALLCODE, DELEGATECALL and STATICCALL, each frame returning,
propagating a failure, reverting after its call or starving its callee), ending in storage
writes, reverts, precompiles and creates, built from the tracing benchmark's contracts
(``benchmarks/benchlib/trace_scenario.py``), several to a block.

The fast paths: blocks replayed on eth_call's lean classes with a dispatcher's kept replays and
tables (a block's system calls made once), a tracer without steps on the lean loop; the plain
path: py-evm's own classes, each request replaying its block from the start. Every tracer, and
the parity traces, must agree byte for byte, for the mined transactions and for the same
programs run as calls (debug_traceCall, trace_call: the fast path's call states built with the
replays' tables, a tracer without steps on the lean loop).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from benchlib.trace_scenario import (
    CALL,
    CALLCODE,
    DELEGATECALL,
    STATICCALL,
    WRITER,
    factory_code,
    hop_code,
    nest,
    writes,
)

import ethread
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.rpc.dispatcher import Dispatcher
from tests.support.plain_replay import on_path

PROGRAMS = 24
CONFIGS: list[Any] = [
    {"tracer": "callTracer", "tracerConfig": {"withLog": True}},
    {"tracer": "flatCallTracer", "tracerConfig": {"includePrecompiles": True}},
    {"tracer": "4byteTracer"},
    {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}},
    {"tracer": "prestateTracer"},
    {"enableMemory": True, "enableReturnData": True},
]
OPS = (CALL, CALLCODE, DELEGATECALL, STATICCALL)


def _program(rng: random.Random, hops: list[bytes], leaves: dict[str, bytes]) -> dict[str, Any]:
    depth = rng.randint(0, 2)
    chain = [(rng.choice(OPS), rng.choice(hops), rng.choice((0, 0, 1, 2, 3)))
             for _ in range(depth)]
    leaf = rng.choice(sorted(leaves))
    if leaf == "writer":
        data = writes(*[(rng.randint(0, 4), rng.choice((0, 1, 5, 9))) for _ in range(rng.randint(1, 3))])
    elif leaf == "custom":
        data, leaf = rng.randbytes(32), "writer"
    elif leaf == "reverter":
        data = bytes([rng.randint(0, 3)])
    elif leaf == "factory":
        child = contracts.initcode(contracts.assemble(1, 0, "MSTORE", 32, 0, "RETURN"))
        data = bytes([rng.randint(1, 2)]) + child
    else:
        data = rng.randbytes(rng.randint(0, 40))
    chain.append((rng.choice(OPS), leaves[leaf], rng.choice((0, 1, 2))))
    return {"to": hops[0], "data": nest(*chain, data=data)}


@pytest.fixture(scope="module")
def generated() -> tuple[Any, list[str], list[dict[str, str]]]:
    dev = DevChain(ethread.MemoryBackend(), forks=PRAGUE_FORKS, accounts=4)
    a = dev.accounts
    hops = [dev.deploy_runtime(a[0], hop_code()) for _ in range(2)]
    leaves = {"writer": dev.deploy_runtime(a[0], WRITER), "custom": b"",
              "reverter": dev.deploy_runtime(a[0], contracts.REVERTER),
              "factory": dev.deploy_runtime(a[0], factory_code(), value=10**6),
              "sha256": b"\x00" * 19 + b"\x02", "identity": b"\x00" * 19 + b"\x04"}
    dev.mine()
    rng = random.Random(20261207)
    hashes, calls = [], []
    for n in range(PROGRAMS):
        program = _program(rng, hops, leaves)
        sender = a[1 + n % 3]
        tx_hash = dev.send(sender, program["to"], data=program["data"], gas=1_000_000)
        hashes.append("0x" + bytes(tx_hash).hex())
        calls.append({"from": "0x" + sender.address.hex(), "to": "0x" + program["to"].hex(),
                      "data": "0x" + program["data"].hex(), "gas": hex(1_000_000)})
        if n % 4 == 3:
            dev.mine()
    dev.mine()
    return dev.backend, hashes, calls


def _body(method: str, *params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()


def _answers(backend: Any, bodies: list[bytes], fast: bool) -> list[bytes]:
    dispatcher = Dispatcher(backend)
    with on_path(fast):
        return [dispatcher.handle(body) or b"" for body in bodies]


def test_fast_paths_answer_as_the_plain_one(generated: tuple[Any, list[str], list[Any]]) -> None:
    backend, hashes, calls = generated
    order = random.Random(7).sample(hashes, len(hashes))
    bodies = [_body("debug_traceTransaction", h, config) for config in CONFIGS for h in order]
    bodies += [_body("trace_replayTransaction", h, ["trace", "stateDiff", "vmTrace"])
               for h in order]
    bodies += [_body("debug_traceCall", call, "0x2", config) for config in CONFIGS
               for call in calls]
    bodies += [_body("trace_call", call, ["trace", "stateDiff", "vmTrace"], "0x2")
               for call in calls]
    fast = _answers(backend, bodies, True)
    plain = _answers(backend, bodies, False)
    refused = [answer[:300] for answer in fast if "error" in json.loads(answer)]
    assert not refused
    for body, mine, theirs in zip(bodies, fast, plain, strict=True):
        assert mine == theirs, body


def test_the_programs_do_what_traces_show(generated: tuple[Any, list[str], list[Any]]) -> None:
    """The generated calls cover what they are meant to: every call kind, failures of each
    sort, creates and precompiles."""
    backend, hashes, _ = generated
    seen: set[str] = set()
    errors: set[str] = set()

    def walk(frame: dict[str, Any]) -> None:
        seen.add(frame["type"])
        if "error" in frame:
            errors.add(frame["error"])
        for call in frame.get("calls", ()):
            walk(call)

    dispatcher = Dispatcher(backend)
    for tx_hash in hashes:
        answer = json.loads(dispatcher.handle(_body("debug_traceTransaction", tx_hash,
                                                    {"tracer": "callTracer"})) or b"null")
        walk(answer["result"])
    assert {"CALL", "CALLCODE", "DELEGATECALL", "STATICCALL"} <= seen
    assert "execution reverted" in errors and len(errors) >= 2
