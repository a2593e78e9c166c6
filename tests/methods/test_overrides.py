"""eth_call's state and block overrides, against results worked out by hand.

The probe contract below is written into an account by a code override; it returns, one
32-byte word each, the values the overrides are meant to change. Every expected value is
known before the call runs: the override's own value or the block's header field.
"""

from __future__ import annotations

import json

import pytest
from eth_utils import to_checksum_address

import ethread
from ethread import methods
from ethread.errors import ExecutionFailed
from ethread.methods.message import CallStates
from ethread.models import AccountOverride, BlockOverrides, CallRequest

PROBE = bytes.fromhex("00000000000000000000000000000000000abcde")
OTHER = bytes.fromhex("1111111111111111111111111111111111111111")
STORED = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")  # holds 42 in slot 0 on this chain


def _probe_code() -> bytes:
    """BALANCE(OTHER), NUMBER, TIMESTAMP, SLOAD(0), SLOAD(1), COINBASE, GASLIMIT, BASEFEE,
    PREVRANDAO, BLOBBASEFEE, SELFBALANCE: eleven words."""
    code = b"\x73" + OTHER + b"\x31"  # PUSH20 OTHER, BALANCE
    steps = [b"\x43", b"\x42", b"\x60\x00\x54", b"\x60\x01\x54", b"\x41", b"\x45", b"\x48", b"\x44", b"\x4a",
             b"\x47"]
    words = [code, *steps]
    out = b""
    for index, step in enumerate(words):
        out += step + b"\x61" + (32 * index).to_bytes(2, "big") + b"\x52"  # PUSH2 offset, MSTORE
    return out + b"\x61" + (32 * len(words)).to_bytes(2, "big") + b"\x60\x00\xf3"  # RETURN(0, n)


FIELDS = ("balance", "number", "timestamp", "slot0", "slot1", "coinbase", "gaslimit", "basefee",
          "prevrandao", "blobbasefee", "selfbalance")


def _words(output: bytes) -> dict[str, int]:
    assert len(output) == 32 * len(FIELDS)
    return {name: int.from_bytes(output[32 * i:32 * i + 32], "big") for i, name in enumerate(FIELDS)}


def _probe(backend: ethread.MemoryBackend, at: bytes = PROBE, block: object = "latest",
           **kwargs: object) -> dict[str, int]:
    overrides = tuple(kwargs.pop("state_override", ()))  # type: ignore[call-overload]
    code = AccountOverride(address=at, code=_probe_code())
    merged = {o.address: o for o in overrides}
    base = merged.pop(at, None)
    if base is not None:
        code = AccountOverride(address=at, code=_probe_code(), balance=base.balance, nonce=base.nonce,
                               state=base.state, state_diff=base.state_diff)
    accounts = tuple(sorted((code, *merged.values()), key=lambda o: o.address))
    output = methods.call(backend, CallRequest(to=at), block, state_override=accounts, **kwargs)  # type: ignore[arg-type]
    return _words(output)


def test_the_probe_reads_the_block_it_runs_on(rpc_compat_memory: ethread.MemoryBackend) -> None:
    header = methods.get_block_by_number(rpc_compat_memory, "latest").header  # type: ignore[union-attr]
    seen = _probe(rpc_compat_memory)
    assert seen["number"] == header.number == 45
    assert seen["timestamp"] == header.timestamp == 450
    assert seen["gaslimit"] == header.gas_limit
    assert seen["coinbase"] == int.from_bytes(header.coinbase, "big")
    assert seen["basefee"] == 0  # a call that pays nothing runs with a zero base fee (geth)
    assert seen["blobbasefee"] == 1  # excess blob gas 0: the minimum blob base fee
    assert seen["balance"] == seen["selfbalance"] == seen["slot0"] == seen["slot1"] == 0


def test_balance_nonce_and_storage_overrides(rpc_compat_memory: ethread.MemoryBackend) -> None:
    seen = _probe(rpc_compat_memory, state_override=(
        AccountOverride(address=OTHER, balance=123_456_789),
        AccountOverride(address=PROBE, balance=7, state_diff=((b"\x00" * 31 + b"\x01", (5).to_bytes(32, "big")),)),
    ))
    assert seen["balance"] == 123_456_789
    assert seen["selfbalance"] == 7
    assert (seen["slot0"], seen["slot1"]) == (0, 5)


def test_state_replaces_all_storage_and_state_diff_only_what_it_names(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    one = (b"\x00" * 31 + b"\x01", (9).to_bytes(32, "big"))
    kept = _probe(rpc_compat_memory, at=STORED, state_override=(AccountOverride(address=STORED, state_diff=(one,)),))
    assert (kept["slot0"], kept["slot1"]) == (42, 9)
    replaced = _probe(rpc_compat_memory, at=STORED, state_override=(AccountOverride(address=STORED, state=(one,)),))
    assert (replaced["slot0"], replaced["slot1"]) == (0, 9)
    # The stored value is back for the next call: the override reached no shared state.
    assert _probe(rpc_compat_memory, at=STORED)["slot0"] == 42


def test_block_overrides(rpc_compat_memory: ethread.MemoryBackend) -> None:
    randao = bytes(range(32))
    seen = _probe(rpc_compat_memory, block_overrides=BlockOverrides(
        number=1_000, time=1_000_000, gas_limit=12_345_678, fee_recipient=OTHER, prev_randao=randao,
        blob_base_fee=77))
    assert (seen["number"], seen["timestamp"], seen["gaslimit"]) == (1_000, 1_000_000, 12_345_678)
    assert seen["coinbase"] == int.from_bytes(OTHER, "big")
    assert seen["prevrandao"] == int.from_bytes(randao, "big")
    assert seen["blobbasefee"] == 77


def test_base_fee_override_shows_when_the_call_pays(rpc_compat_memory: ethread.MemoryBackend) -> None:
    rich = AccountOverride(address=OTHER, balance=10**24)
    code = AccountOverride(address=PROBE, code=_probe_code())
    request = CallRequest(sender=OTHER, to=PROBE, max_fee_per_gas=10**10, max_priority_fee_per_gas=0)
    output = methods.call(rpc_compat_memory, request, "latest", state_override=(code, rich),
                          block_overrides=BlockOverrides(base_fee_per_gas=12_345))
    assert _words(output)["basefee"] == 12_345
    # Without the override the block's own base fee is in force.
    output = methods.call(rpc_compat_memory, request, "latest", state_override=(code, rich))
    assert _words(output)["basefee"] == 91_635_044


def test_overrides_never_reach_the_shared_states(rpc_compat_memory: ethread.MemoryBackend) -> None:
    states = CallStates()
    plain = CallRequest(to=PROBE)
    assert methods.call(rpc_compat_memory, plain, "latest", states) == b""  # no code there
    overridden = methods.call(rpc_compat_memory, plain, "latest", states,
                              state_override=(AccountOverride(address=PROBE, code=_probe_code(), balance=3),),
                              block_overrides=BlockOverrides(number=7))
    assert _words(overridden)["number"] == 7
    assert methods.call(rpc_compat_memory, plain, "latest", states) == b""
    assert len(states._states) == 1  # only the plain calls used (and share) a cached state


def test_override_refusals_in_geths_words(rpc_compat_memory: ethread.MemoryBackend) -> None:
    slot = (b"\x00" * 32, b"\x00" * 32)
    both = f"account {to_checksum_address(PROBE)} has both 'state' and 'stateDiff'"
    with pytest.raises(ExecutionFailed, match=rf"^{both}$"):
        methods.call(rpc_compat_memory, CallRequest(to=PROBE), "latest",
                     state_override=(AccountOverride(address=PROBE, state=(slot,), state_diff=(slot,)),))
    with pytest.raises(ExecutionFailed, match=r'^block override "beaconRoot" is not supported for this RPC method$'):
        methods.call(rpc_compat_memory, CallRequest(to=PROBE), "latest",
                     block_overrides=BlockOverrides(beacon_root=b"\x01" * 32))
    with pytest.raises(ExecutionFailed, match=r"is not a precompile$"):
        methods.call(rpc_compat_memory, CallRequest(to=PROBE), "latest",
                     state_override=(AccountOverride(address=PROBE, move_precompile_to=OTHER),))


def test_a_precompile_moves(rpc_compat_memory: ethread.MemoryBackend) -> None:
    identity = b"\x00" * 19 + b"\x04"
    moved = methods.call(rpc_compat_memory, CallRequest(to=OTHER, data=b"echo"), "latest",
                         state_override=(AccountOverride(address=identity, move_precompile_to=OTHER),))
    assert moved == b"echo"
    # The identity's old address is now an empty account: a call there returns nothing.
    assert methods.call(rpc_compat_memory, CallRequest(to=identity, data=b"echo"), "latest",
                        state_override=(AccountOverride(address=identity, move_precompile_to=OTHER),)) == b""


def test_overrides_over_json_rpc(rpc_compat_memory: ethread.MemoryBackend) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [
        {"to": "0x" + PROBE.hex()}, "latest",
        {"0x" + PROBE.hex(): {"code": "0x" + _probe_code().hex(), "balance": "0x2a",
                              "stateDiff": {"0x" + "00" * 32: "0x" + "00" * 31 + "11"}}},
        {"number": "0x99", "time": "0x1234", "feeRecipient": "0x" + OTHER.hex()},
    ]}
    answer = json.loads(ethread.handle(rpc_compat_memory, json.dumps(body).encode()))  # type: ignore[arg-type]
    seen = _words(bytes.fromhex(answer["result"][2:]))
    assert (seen["selfbalance"], seen["slot0"], seen["number"], seen["timestamp"]) == (42, 0x11, 0x99, 0x1234)
    assert seen["coinbase"] == int.from_bytes(OTHER, "big")
    body["params"][2] = {"0x" + PROBE.hex(): {"nonce": "0x01x"}}  # type: ignore[index]
    error = json.loads(ethread.handle(rpc_compat_memory, json.dumps(body).encode()))["error"]  # type: ignore[arg-type]
    assert error["code"] == -32602 and error["message"].startswith("invalid argument 2: ")
