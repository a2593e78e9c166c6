"""Osaka's edge rules one by one (``ethread.evm``): CLZ, P256VERIFY's refusals, MODEXP's
bounds, prices and results (the EIP's vectors as execution-spec-tests fill them), the
transaction gas cap, blobs per transaction and per block, EIP-7918's excess blob gas, the
block size bound, and one VM class per blob parameters."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
import rlp
from eth.vm.forks.berlin.computation import BERLIN_PRECOMPILES
from eth.vm.forks.cancun.constants import BLOB_TX_TYPE
from eth_hash.auto import keccak
from eth_utils import ValidationError

from ethread.evm import (
    GAS_P256VERIFY,
    GAS_PER_BLOB,
    MAX_BLOBS_PER_TX,
    MAX_RLP_BLOCK_SIZE,
    OSAKA_BLOBS,
    P256VERIFY_ADDRESS,
    TX_GAS_LIMIT_CAP,
    BlobParams,
    OsakaVM,
    check_block_size,
    osaka_vm,
    prague_vm,
)
from ethread.evm import modexp as osaka_modexp
from ethread.evm.p256 import P256_N, P256_P, p256_verify
from ethread.forks import FORK_BY_NAME
from ethread.forks.table import BLOB, LEGACY
from ethread.forks.validity import (
    BlobGasLimitReached,
    BlockContext,
    GasCapExceeded,
    TooManyBlobs,
    TxFields,
    check_blob_gas_available,
    check_blobs,
    check_gas_cap,
)
from tests.support.osaka_runs import p256_input, run_py_evm
from tests.support.paths import conformance_dir

# ---------------------------------------------------------------------------------------- CLZ


def clz_code(value: int) -> bytes:
    """PUSH32 value, CLZ, MSTORE at 0, RETURN the word."""
    return b"\x7f" + value.to_bytes(32, "big") + b"\x1e" + b"\x5f\x52" + b"\x60\x20\x5f\xf3"


@pytest.mark.parametrize(("value", "zeros"), [
    (0, 256), (1, 255), (2, 254), (3, 254), (0xFF, 248), (1 << 255, 0), (2**256 - 1, 0),
    (1 << 128, 127), ((1 << 200) - 1, 56),
])
def test_clz_counts_leading_zero_bits(value: int, zeros: int) -> None:
    outcome = run_py_evm(clz_code(value), b"", 100_000)
    assert outcome.success and int.from_bytes(outcome.output, "big") == zeros
    assert run_py_evm(clz_code(value), b"", 100_000, lean=True) == outcome


def test_clz_costs_five_gas_and_is_invalid_before_osaka() -> None:
    push_clz = b"\x7f" + bytes(32) + b"\x1e"
    assert run_py_evm(push_clz, b"", 100).gas_used == 3 + 5
    assert run_py_evm(push_clz, b"", 7).success is False  # out of gas at CLZ
    assert run_py_evm(b"\x1e", b"", 100).success is False  # stack underflow
    before = run_py_evm(push_clz, b"", 100, vm_class=prague_vm())
    assert not before.success and before.gas_used == 100


# -------------------------------------------------------------------------------- P256VERIFY


VALID = p256_input(0xC0FFEE, keccak(b"ethread"))


def with_field(index: int, value: int) -> bytes:
    return VALID[:32 * index] + value.to_bytes(32, "big") + VALID[32 * index + 32:]


def test_p256verify_accepts_a_valid_signature() -> None:
    assert p256_verify(VALID)
    for key in (1, 2, P256_N - 1):
        assert p256_verify(p256_input(key, bytes(32)))


@pytest.mark.parametrize("data", [
    b"", VALID[:-1], VALID + b"\x00", VALID * 2,  # lengths other than 160
    with_field(1, 0), with_field(1, P256_N), with_field(1, P256_N + 1), with_field(1, 2**256 - 1),
    with_field(2, 0), with_field(2, P256_N), with_field(2, 2**256 - 1),  # r, s outside [1, n-1]
    with_field(3, P256_P), with_field(4, P256_P), with_field(3, 2**256 - 1),  # outside the field
    with_field(3, 0)[:128] + bytes(32),  # the point at infinity (0, 0)
    with_field(4, 1),  # not on the curve
    with_field(4, P256_P - int.from_bytes(VALID[128:], "big")),  # on the curve, another key
    bytes([VALID[0] ^ 1]) + VALID[1:],  # another hash
    with_field(2, P256_N - int.from_bytes(VALID[64:96], "big"))[:64]  # s and n - s: the
    + (P256_N - int.from_bytes(VALID[64:96], "big") + 1).to_bytes(32, "big") + VALID[96:],
])
def test_p256verify_refuses(data: bytes) -> None:
    assert not p256_verify(data)


def test_p256verify_accepts_either_s() -> None:
    """No low-s rule: (r, n - s) verifies as (r, s) does."""
    high = P256_N - int.from_bytes(VALID[64:96], "big")
    assert p256_verify(with_field(2, high))


def p256_call(gas: int) -> bytes:
    """Copy 160 bytes of calldata (zeros past its end: the same cost for any input), STATICCALL
    0x100 with ``gas`` and the calldata's length; return (success, return size, returned
    word)."""
    return bytes.fromhex(
        "60a05f5f37"                                      # calldatacopy(0, 0, 160)
        "602060a0365f610100" "62" + gas.to_bytes(3, "big").hex() + "fa"  # staticcall
        "5f52" "3d602052"                                 # success -> 0, size -> 0x20
        "60c05ff3")                                       # return 0..0xc0


def test_p256verify_charges_the_same_gas_whatever_the_input() -> None:
    answers = {}
    for name, data in (("valid", VALID), ("bad s", with_field(2, 0)), ("short", VALID[:100])):
        outcome = run_py_evm(p256_call(GAS_P256VERIFY), data, 100_000)
        assert outcome.success
        success, size = outcome.output[31], int.from_bytes(outcome.output[32:64], "big")
        answers[name] = (success, size, outcome.output[0xA0:0xC0], outcome.gas_used)
    assert answers["valid"][:3] == (1, 32, (1).to_bytes(32, "big"))
    assert answers["bad s"][:2] == answers["short"][:2] == (1, 0)
    assert len({gas for *_, gas in answers.values()}) == 1
    starved = run_py_evm(p256_call(GAS_P256VERIFY - 1), VALID, 100_000)
    assert starved.output[31] == 0  # the call ran out of gas


def test_p256verify_sits_at_0x100_from_osaka_only() -> None:
    assert (0x100).to_bytes(20, "big") == P256VERIFY_ADDRESS
    assert P256VERIFY_ADDRESS in osaka_vm().get_state_class().computation_class.get_precompiles()
    assert P256VERIFY_ADDRESS not in prague_vm().get_state_class().computation_class.get_precompiles()


# ------------------------------------------------------------------------------------ MODEXP


def modexp_input(base: int, exponent: int, modulus: int, body: bytes = b"") -> bytes:
    return b"".join(n.to_bytes(32, "big") for n in (base, exponent, modulus)) + body


def eest_modexp_vectors() -> list[tuple[str, bytes, int, str]]:
    """(name, input, gas, keccak of the output) of every Osaka vector of the EIP's and the
    legacy tests' MODEXP cases that succeeds: the filled contract stores the call's success
    in slot 0, the precompile's gas in slot 2 and the hash of its output in slot 3."""
    folder = (conformance_dir() / "eest-osaka" / "state_tests" / "osaka"
              / "eip7883_modexp_gas_increase" / "modexp_thresholds")
    vectors = []
    for file in ("vectors_from_eip.json", "vectors_from_legacy_tests.json"):
        for name, test in json.loads((folder / file).read_text()).items():
            for entry in test["post"].get("Osaka", []):
                data = test["transaction"]["data"][entry["indexes"]["data"]]
                storage = entry["state"][test["transaction"]["to"]]["storage"]
                if storage.get("0x00") == "0x01":
                    vectors.append((name, bytes.fromhex(data[2:]), int(storage["0x02"], 16),
                                    storage["0x03"]))
    return vectors


def test_modexp_prices_and_answers_the_eips_vectors() -> None:
    vectors = eest_modexp_vectors()
    assert len(vectors) > 50
    for name, data, gas, output_hash in vectors:
        assert osaka_modexp.gas_cost(data) == gas, name
        assert "0x" + keccak(osaka_modexp.result(data)).hex() == output_hash, name


@pytest.mark.parametrize(("data", "gas"), [
    (modexp_input(0, 0, 0), 500),  # the floor
    (modexp_input(1, 1, 1, b"\x02\x03\x05"), 500),  # 16 * 1
    (modexp_input(32, 32, 32, b"\xff" * 32 + bytes(31) + b"\x02" + bytes(32)), 500),  # 16 * 1
    (modexp_input(32, 32, 32, bytes(32) + b"\xff" * 32 + bytes(32)), 16 * 255),
    (modexp_input(33, 1, 1), 2 * 5 * 5),  # words of the longer length: 500 floor
    (modexp_input(64, 32, 64, bytes(64) + b"\x80" + bytes(31)), 2 * 8 * 8 * 255),
    (modexp_input(32, 64, 32, bytes(32) + b"\x80" + bytes(63)), 16 * (16 * 32 + 255)),
    (modexp_input(32, 40, 32, bytes(32) + bytes(40)), 16 * 16 * 8),  # zero head, long exponent
    (modexp_input(1024, 1024, 1024), 2 * 128 * 128 * 16 * 992),
])
def test_modexp_price(data: bytes, gas: int) -> None:
    assert osaka_modexp.gas_cost(data) == max(gas, 500)


@pytest.mark.parametrize(("lengths", "refused"), [
    ((1024, 1024, 1024), False), ((1025, 0, 0), True), ((0, 1025, 0), True),
    ((0, 0, 1025), True), ((2**256 - 1, 0, 0), True), ((0, 0, 2**32), True),
])
def test_modexp_bounds(lengths: tuple[int, int, int], refused: bool) -> None:
    data = modexp_input(*lengths)
    if refused:
        with pytest.raises(osaka_modexp.ModexpInputTooLong):
            osaka_modexp.check_bounds(data)
    else:
        osaka_modexp.check_bounds(data)


def modexp_call(gas: int) -> bytes:
    """CALLDATACOPY the input, CALL 0x05 with ``gas``, return (success, size)."""
    return bytes.fromhex("366000600037" "5f5f" "36" "5f" "5f" "6005" "62"
                         + gas.to_bytes(3, "big").hex() + "f1" "5f52" "3d602052" "60405ff3")


def test_modexp_over_its_bound_fails_with_all_its_gas() -> None:
    over = run_py_evm(modexp_call(200_000), modexp_input(1025, 1, 1, b"\x02\x03\x05"), 1_000_000)
    at = run_py_evm(modexp_call(200_000), modexp_input(1024, 1, 1, b"\x02\x03\x05"), 1_000_000)
    assert over.output[31] == 0 and at.output[31] == 1
    # the failed call kept all 200,000 gas given to it; the bound one paid its price
    assert over.gas_used - at.gas_used == 200_000 - osaka_modexp.gas_cost(
        modexp_input(1024, 1, 1, b"\x02\x03\x05"))
    # before Osaka the same input is priced, not refused
    assert run_py_evm(modexp_call(200_000), modexp_input(1025, 1, 1, b"\x02\x03\x05"),
                      1_000_000, vm_class=prague_vm()).output[31] == 1


@pytest.mark.parametrize(("data", "output"), [
    (modexp_input(0, 0, 0), b""),
    (modexp_input(0, 1, 1, b"\x00\x05"), b"\x01"),  # 0 ** 0 % 5: an empty base is 0
    (modexp_input(0, 0, 33, bytes(32) + b"\x02"), (1).to_bytes(33, "big")),
    (modexp_input(1, 1, 2, b"\x03\x02"), b"\x00\x00"),  # a zero modulus: zeros
    (modexp_input(1, 1, 1, b"\x03\x02\x05"), b"\x04"),  # 3 ** 2 % 5
    (modexp_input(1, 1, 0, b"\x03\x02"), b""),
])
def test_modexp_result(data: bytes, output: bytes) -> None:
    assert osaka_modexp.result(data) == output


def test_prague_modexp_answers_an_empty_base_as_zero() -> None:
    """py-evm's own MODEXP answers 0 for an empty base with a zero exponent; ethread's Prague
    answers 1 % m, as the specs do, and prices as py-evm does."""
    data = modexp_input(0, 0, 33, bytes(32) + b"\x02")
    computation = SimpleNamespace(msg=SimpleNamespace(data_as_bytes=data), output=b"",
                                  consume_gas=lambda gas, reason: charged.append(gas))
    charged: list[int] = []
    osaka_modexp.modexp_eip2565(computation)
    assert computation.output == (1).to_bytes(33, "big")
    py_evm = BERLIN_PRECOMPILES[(5).to_bytes(20, "big")]
    theirs = SimpleNamespace(msg=computation.msg, output=b"",
                             consume_gas=lambda gas, reason: charged.append(gas))
    py_evm(theirs)
    assert theirs.output == bytes(33) and charged[0] == charged[1]


# ------------------------------------------------------------------------ transaction rules


def transaction(gas: int = 21_000, blobs: int | None = None) -> Any:
    """What the checks read of a transaction: its gas, type and blob hashes."""
    if blobs is None:
        return SimpleNamespace(gas=gas, type_id=None)
    return SimpleNamespace(gas=gas, type_id=BLOB_TX_TYPE,
                           blob_versioned_hashes=[b"\x01" + bytes(31)] * blobs)


def header(blob_gas_used: int = 0, gas_limit: int = 60_000_000) -> Any:
    return SimpleNamespace(gas_used=0, gas_limit=gas_limit, blob_gas_used=blob_gas_used)


def validate(vm_class: Any, tx: Any, base: Any) -> None:
    vm_class.validate_transaction_against_header(vm_class.__new__(vm_class), base, tx)


def fields(gas: int = 21_000, blobs: int | None = None) -> TxFields:
    """A call (or a blob transaction) with this gas, as ``ethread.forks.validity`` reads it."""
    hashes = None if blobs is None else (b"\x01" + bytes(31),) * blobs
    return TxFields(kind=LEGACY if blobs is None else BLOB, nonce=0, gas=gas, to=bytes(20),
                    value=0, data=b"", fee_cap=1, tip_cap=1, blob_hashes=hashes)


def test_transaction_gas_cap() -> None:
    osaka, prague = FORK_BY_NAME["osaka"], FORK_BY_NAME["prague"]
    check_gas_cap(osaka, fields(TX_GAS_LIMIT_CAP))
    with pytest.raises(GasCapExceeded, match=r"\(cap: 16777216, tx: 16777217\)"):
        check_gas_cap(osaka, fields(TX_GAS_LIMIT_CAP + 1))
    check_gas_cap(prague, fields(TX_GAS_LIMIT_CAP + 1))  # Prague: no cap


def test_blobs_per_transaction() -> None:
    osaka, prague = FORK_BY_NAME["osaka"], FORK_BY_NAME["prague"]
    check_blobs(osaka, fields(blobs=MAX_BLOBS_PER_TX))
    with pytest.raises(TooManyBlobs, match="too many blobs"):
        check_blobs(osaka, fields(blobs=MAX_BLOBS_PER_TX + 1))
    # a BPO fork with room for 15 blobs a block still allows 6 a transaction
    bpo = replace(FORK_BY_NAME["bpo1"], blob=BlobParams(10, 15, 8346193))
    with pytest.raises(TooManyBlobs):
        check_blobs(bpo, fields(blobs=7))
    check_blobs(prague, fields(blobs=10))  # Prague: only the block's blob gas bounds them
    check_blob_gas_available(prague, fields(blobs=9), BlockContext())
    with pytest.raises(BlobGasLimitReached):
        check_blob_gas_available(prague, fields(blobs=10), BlockContext())


def test_blobs_per_block() -> None:
    vm = osaka_vm()
    validate(vm, transaction(blobs=3), header(blob_gas_used=6 * GAS_PER_BLOB))
    with pytest.raises(ValidationError, match="over the limit 1179648"):
        validate(vm, transaction(blobs=4), header(blob_gas_used=6 * GAS_PER_BLOB))
    bpo = osaka_vm(BlobParams(10, 15, 8346193))
    validate(bpo, transaction(blobs=6), header(blob_gas_used=9 * GAS_PER_BLOB))


# ------------------------------------------------------------------------ blob gas and fees


def parent(excess: int, used: int, base_fee: int) -> Any:
    return SimpleNamespace(excess_blob_gas=excess, blob_gas_used=used, base_fee_per_gas=base_fee)


def test_excess_blob_gas_with_the_reserve_price() -> None:
    target, full = OSAKA_BLOBS.target_gas, OSAKA_BLOBS.max_gas
    # under the target: nothing carried over, whatever the fees
    assert OsakaVM.excess_blob_gas(parent(0, target - 1, 10**12)) == 0
    # blob fee at its floor (1 wei) below BLOB_BASE_COST * base fee / GAS_PER_BLOB: the excess
    # only grows, by the used blob gas times (max - target) / max
    assert OsakaVM.excess_blob_gas(parent(10_000_000, full, 1_000)) == 10_000_000 + full * 3 // 9
    assert OsakaVM.excess_blob_gas(parent(10_000_000, 0, 1_000)) == 10_000_000
    # a cheap base fee: as before Osaka
    assert OsakaVM.excess_blob_gas(parent(10_000_000, full, 1)) == 10_000_000 + full - target
    assert OsakaVM.excess_blob_gas(parent(10_000_000, 0, 1)) == 10_000_000 - target
    assert prague_vm().excess_blob_gas(parent(10_000_000, 0, 1_000)) == 10_000_000 - target
    # the boundary: 2**13 * base fee == GAS_PER_BLOB * blob base fee is not above it
    assert OsakaVM.excess_blob_gas(parent(target, 0, 16)) == 0
    assert OsakaVM.excess_blob_gas(parent(target, 0, 17)) == target


def test_a_header_from_its_parent_carries_the_excess() -> None:
    vm: Any = osaka_vm()
    header_class = dict(vm.get_block_class()._meta.fields)["header"]
    first = header_class(difficulty=0, block_number=1, gas_limit=30_000_000, timestamp=1,
                         excess_blob_gas=10_000_000, blob_gas_used=OSAKA_BLOBS.max_gas,
                         base_fee_per_gas=1_000)
    child = vm.create_header_from_parent(first, timestamp=13)  # type: ignore[call-arg]
    assert child.excess_blob_gas == 10_000_000 + OSAKA_BLOBS.max_gas * 3 // 9


def test_blob_base_fee_follows_the_parameters() -> None:
    excess = 20_000_000
    fees = {}
    for blob in (OSAKA_BLOBS, BlobParams(10, 15, 8346193)):
        state_class = osaka_vm(blob).get_state_class()
        state: Any = state_class.__new__(state_class)
        state.execution_context = SimpleNamespace(excess_blob_gas=excess)
        fees[blob.update_fraction] = state.blob_base_fee
    assert fees == {5007716: 54, 8346193: 10}


# ------------------------------------------------------------------------------ block size


def test_block_rlp_size_bound() -> None:
    vm: Any = osaka_vm()
    block_class = vm.get_block_class()
    header_class = dict(block_class._meta.fields)["header"]
    tx_class = vm.get_transaction_builder().legacy_signed

    def block(size: int) -> Any:
        tx = tx_class(nonce=0, gas_price=1, gas=21_000, to=b"\x11" * 20, value=0,
                      data=bytes(size), v=27, r=1, s=1)
        return block_class(header=header_class(difficulty=0, block_number=1, gas_limit=1,
                                               timestamp=1), transactions=[tx])

    overhead = len(rlp.encode(block(1 << 20))) - (1 << 20)
    at_bound = block(MAX_RLP_BLOCK_SIZE - overhead)
    assert len(rlp.encode(at_bound)) == MAX_RLP_BLOCK_SIZE == 8_388_608
    check_block_size(at_bound)
    with pytest.raises(ValidationError, match="over the limit 8388608"):
        check_block_size(block(MAX_RLP_BLOCK_SIZE - overhead + 1))


# --------------------------------------------------------------------------------- classes


def test_one_vm_class_per_blob_parameters() -> None:
    assert osaka_vm() is osaka_vm(BlobParams(6, 9, 5007716)) is OsakaVM
    bpo1 = osaka_vm(BlobParams(10, 15, 8346193))
    assert bpo1 is osaka_vm(BlobParams(10, 15, 8346193))
    assert issubclass(bpo1, OsakaVM) and bpo1.blob_params == BlobParams(10, 15, 8346193)
    assert bpo1.get_state_class().blob_params == bpo1.blob_params  # type: ignore[attr-defined]
    assert bpo1.fork == "osaka"
    assert prague_vm() is prague_vm(BlobParams(6, 9, 5007716))
