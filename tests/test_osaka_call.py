"""eth_call on an Osaka dev chain: CLZ, P256VERIFY and MODEXP's new rules run through
ethread's lean message classes (``ethread.methods.call_vm``) exactly as through py-evm's own
loop with ethread's Osaka classes, and answer what the EIPs say."""

from __future__ import annotations

from typing import Any

import pytest

from ethread import MemoryBackend
from ethread.devchain import DevChain
from ethread.devchain.builder import ForkSchedule
from ethread.devchain.contracts import assemble
from ethread.methods import message as message_module
from ethread.methods.message import CallStates, execution, gas_for
from ethread.models import CallRequest
from tests.support.call_outcomes import outcome_of
from tests.support.osaka_runs import p256_input


def staticcall(address: int, data: bytes, gas: int | str = "GAS") -> bytes:
    """Creation code that stores ``data`` in memory, STATICCALLs ``address`` with it and
    returns (success, return data size, first returned word)."""
    code: list[Any] = []
    for start in range(0, len(data), 32):
        code += [int.from_bytes(data[start:start + 32].ljust(32, b"\x00"), "big"), 0x400 + start,
                 "MSTORE"]
    code += [32, 64, len(data), 0x400, address, gas, "STATICCALL", 0, "MSTORE",
             "RETURNDATASIZE", 32, "MSTORE", 96, 0, "RETURN"]
    return assemble(*code)


def modexp_input(base: int, exponent: int, modulus: int, body: bytes) -> bytes:
    return b"".join(n.to_bytes(32, "big") for n in (base, exponent, modulus)) + body


CLZ = b"\x1e"  # (the dev chain's assembler predates it)
VALID = p256_input(0xBEEF, b"\x42" * 32)
REQUESTS = [
    assemble(1) + CLZ + assemble(0, "MSTORE", 32, 0, "RETURN"),  # 255
    assemble(0) + CLZ + assemble(0, "MSTORE", 32, 0, "RETURN"),  # 256
    CLZ,                                                         # an empty stack
    staticcall(0x100, VALID),                                    # verifies: 1
    staticcall(0x100, VALID[:-1]),                               # no output
    staticcall(0x100, VALID, 6899),                              # out of gas
    staticcall(0x05, modexp_input(1, 1, 1, b"\x03\x02\x05")),    # 9 % 5 = 4
    staticcall(0x05, modexp_input(1025, 1, 1, b"\x03\x02\x05")),  # over EIP-7823's bound
    staticcall(0x05, modexp_input(0, 0, 1, b"\x05")),            # 0 ** 0 % 5 = 1
]


def answers(backend: Any, gas_limit: int) -> list[tuple[Any, ...]]:
    found = []
    for data in REQUESTS:
        request = CallRequest(data=data)
        with execution(backend, request, "latest", states=CallStates()) as run:
            gas = gas_for(request, gas_limit)
            found.append((type(run.vm).get_state_class().account_db_class.__name__,
                          outcome_of(run, gas, False), outcome_of(run, gas, True)))
    return found


def test_osaka_messages_answer_the_same_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = MemoryBackend()
    chain = DevChain(backend, forks=ForkSchedule.from_genesis("osaka"), accounts=1)
    chain.mine()
    header = backend.header_by_hash(backend.canonical_hash(1))  # type: ignore[arg-type]
    assert header is not None
    lean = answers(backend, header.gas_limit)
    monkeypatch.setattr(message_module, "lean_vm_class", lambda vm_class: vm_class)
    reference = answers(backend, header.gas_limit)
    assert {a[0] for a in lean} == {"LeanAccountDB"}
    assert {a[0] for a in reference} == {"AccountDB"}
    assert [a[1:] for a in lean] == [a[1:] for a in reference]

    def words(index: int) -> list[int]:
        output = bytes.fromhex(lean[index][1][0])
        return [int.from_bytes(output[i:i + 32], "big") for i in range(0, len(output), 32)]

    assert words(0) == [255] and words(1) == [256]
    assert lean[2][1][3] == "InsufficientStack"
    assert words(3) == [1, 32, 1]  # success, 32 bytes, the word 1
    assert words(4) == [1, 0, 0]   # success, nothing returned
    assert words(5) == [0, 0, 0]   # the call ran out of gas
    assert words(6) == [1, 1, 4 << 248]
    assert words(7) == [0, 0, 0]
    assert words(8) == [1, 1, 1 << 248]


@pytest.mark.parametrize(("fork", "refused"), [("prague", False), ("osaka", True)])
def test_eth_call_refuses_more_than_six_blobs_from_osaka_on(fork: str, refused: bool) -> None:
    """EIP-7594: geth's pre-check refuses a message with seven blob hashes on Osaka (eth_call
    included: it is not one of the checks a call skips); Prague takes them."""
    import ethread
    from ethread.errors import ExecutionFailed

    chain = DevChain(MemoryBackend(), forks=ForkSchedule.from_genesis(fork))
    target = chain.accounts[1].address
    hashes = tuple(b"\x01" + bytes([i]) * 31 for i in range(7))
    request = CallRequest(to=target, blob_versioned_hashes=hashes)
    if refused:
        with pytest.raises(ExecutionFailed, match="blob transaction has too many blobs"):
            ethread.methods.call(chain.backend, request, "latest")
    else:
        assert ethread.methods.call(chain.backend, request, "latest") == b""
    six = CallRequest(to=target, blob_versioned_hashes=hashes[:6])
    assert ethread.methods.call(chain.backend, six, "latest") == b""
