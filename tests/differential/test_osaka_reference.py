"""ethread's Osaka EVM against the execution specs' (``ethereum-execution``, the reference):
generated programs that count leading zeros (CLZ) and call P256VERIFY and MODEXP with valid
and broken inputs, at every call kind and at gas that may run out, give the same output, gas
used and success on the reference, on py-evm with ethread's Osaka classes, and through
eth_call's lean interpreter (``ethread.evm.lean_interpreter``)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ethread.evm.p256 import P256_N, P256_P
from tests.support.osaka_runs import p256_input, run_py_evm, run_reference

CLZ, MSTORE, GAS, RETURN, SHA3 = 0x1E, 0x52, 0x5A, 0xF3, 0x20
RETURNDATASIZE, RETURNDATACOPY = 0x3D, 0x3E
CALL, CALLCODE, DELEGATECALL, STATICCALL = 0xF1, 0xF2, 0xF4, 0xFA
RESULTS, INPUT, SCRATCH = 0, 0x800, 0x1000
"""Memory: the words the program returns, the input of the next call, returned data."""
MODEXP, P256VERIFY = 0x05, 0x100


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def push(value: int) -> bytes:
    return bytes([0x7F]) + value.to_bytes(32, "big")


def store(slot: int) -> bytes:
    """Store the top of the stack in the ``slot``-th returned word."""
    return push(RESULTS + 32 * slot) + bytes([MSTORE])


def write_input(data: bytes) -> bytes:
    code = b""
    for start in range(0, len(data), 32):
        chunk = data[start:start + 32].ljust(32, b"\x00")
        code += push(int.from_bytes(chunk, "big")) + push(INPUT + start) + bytes([MSTORE])
    return code


def call(kind: int, address: int, data: bytes, gas: int | None, slot: int) -> tuple[bytes, int]:
    """A call to a precompile; stores its success, its return data's size and hash, and the
    first word it returned into memory. Returns the code and the next free slot."""
    code = write_input(data)
    code += push(32) + push(RESULTS + 32 * (slot + 3)) + push(len(data)) + push(INPUT)
    if kind in (CALL, CALLCODE):
        code += push(0)
    code += push(address) + (push(gas) if gas is not None else bytes([GAS])) + bytes([kind])
    code += store(slot)
    code += bytes([RETURNDATASIZE]) + store(slot + 1)
    code += bytes([RETURNDATASIZE]) + push(0) + push(SCRATCH) + bytes([RETURNDATACOPY])
    code += bytes([RETURNDATASIZE]) + push(SCRATCH) + bytes([SHA3]) + store(slot + 2)
    return code, slot + 4


words = st.one_of(
    st.integers(0, 2**256 - 1),
    st.integers(0, 256).map(lambda bits: (1 << bits) >> 1),  # every leading-zero count
    st.integers(0, 256).map(lambda bits: (1 << bits) - 1),
)


@st.composite
def p256_inputs(draw: st.DrawFn) -> bytes:
    valid = p256_input(draw(st.integers(1, P256_N - 1)), draw(st.binary(min_size=32, max_size=32)))
    fields = [valid[i:i + 32] for i in range(0, 160, 32)]
    mutation = draw(st.sampled_from([
        "none", "none", "none", "r", "s", "qx", "qy", "infinity", "negated", "hash", "length",
        "random"]))
    if mutation in ("r", "s"):
        fields[1 if mutation == "r" else 2] = word(draw(st.sampled_from(
            [0, 1, P256_N - 1, P256_N, P256_N + 1, 2**256 - 1])))
    elif mutation in ("qx", "qy"):
        fields[3 if mutation == "qx" else 4] = word(draw(st.sampled_from(
            [0, 1, P256_P - 1, P256_P, 2**256 - 1])))
    elif mutation == "infinity":
        fields[3] = fields[4] = word(0)
    elif mutation == "negated":  # the same x, the other y: on the curve, another key
        fields[4] = word(P256_P - int.from_bytes(fields[4], "big"))
    elif mutation == "hash":
        fields[0] = bytes([fields[0][0] ^ 1]) + fields[0][1:]
    data = b"".join(fields)
    if mutation == "length":
        data = bytes(draw(st.sampled_from([data[:-1], data + b"\x00", b"", data[:128]])))
    elif mutation == "random":
        data = draw(st.binary(min_size=160, max_size=160))
    return data


lengths = st.one_of(
    st.integers(0, 70),
    st.sampled_from([0, 1, 31, 32, 33, 64, 128, 1023, 1024, 1025, 2**32, 2**256 - 1]),
)


@st.composite
def modexp_inputs(draw: st.DrawFn) -> bytes:
    base, exponent, modulus = draw(lengths), draw(lengths), draw(lengths)
    body = draw(st.binary(max_size=200))
    return base.to_bytes(32, "big") + exponent.to_bytes(32, "big") + modulus.to_bytes(32, "big") + body


call_gas = st.sampled_from([None, None, None, 0, 199, 200, 499, 500, 6899, 6900, 30_000])
"""The gas a call passes on (None: all there is, with GAS)."""
steps = st.one_of(
    st.tuples(st.just("clz"), words),
    st.tuples(st.just("call"), st.sampled_from([CALL, CALLCODE, DELEGATECALL, STATICCALL]),
              st.just(P256VERIFY), p256_inputs(), call_gas),
    st.tuples(st.just("call"), st.sampled_from([CALL, CALLCODE, DELEGATECALL, STATICCALL]),
              st.just(MODEXP), modexp_inputs(), call_gas),
)


def program(parts: list[Any], underflow: bool) -> bytes:
    code, slot = b"", 0
    for part in parts:
        if part[0] == "clz":
            code += push(part[1]) + bytes([CLZ]) + store(slot)
            slot += 1
        else:
            _, kind, address, data, gas = part
            piece, slot = call(kind, address, data, gas, slot)
            code += piece
    if underflow:
        code += bytes([CLZ])  # on an empty stack: the whole message fails
    return code + push(32 * slot) + push(RESULTS) + bytes([RETURN])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(steps, min_size=1, max_size=5), underflow=st.booleans() | st.just(False),
       gas=st.sampled_from([60_000, 300_000, 3_000_000]), data=st.binary(max_size=40))
def test_osaka_agrees_with_the_execution_specs(parts: list[Any], underflow: bool, gas: int,
                                               data: bytes) -> None:
    code = program(parts, underflow)
    reference = run_reference(code, data, gas)
    assert run_py_evm(code, data, gas) == reference
    assert run_py_evm(code, data, gas, lean=True) == reference


def test_the_programs_reach_every_outcome() -> None:
    """The generated shapes do what they are meant to: a signature that verifies, one that
    does not, MODEXP over its bound, a call out of gas, an underflow."""
    valid = p256_input(7, bytes(32))
    cases: list[tuple[list[Any], bool, int | None]] = [
        ([("call", STATICCALL, P256VERIFY, valid, None)], True, 1),
        ([("call", STATICCALL, P256VERIFY, valid[:-1], None)], True, 0),
        ([("call", CALL, MODEXP, (1025).to_bytes(32, "big") + bytes(64), None)], False, None),
        ([("call", CALL, P256VERIFY, valid, 6899)], False, None),
    ]
    for parts, succeeds, verified in cases:
        outcome = run_reference(program(parts, False), b"", 300_000)
        assert outcome == run_py_evm(program(parts, False), b"", 300_000)
        assert outcome.success
        assert outcome.output[31] == int(succeeds)  # the call's success word
        if verified is not None:
            assert outcome.output[96 + 31] == verified
    underflow = run_reference(program([("clz", 1)], True), b"", 300_000)
    assert not underflow.success and underflow.gas_used == 300_000
    assert underflow == run_py_evm(program([("clz", 1)], True), b"", 300_000)
