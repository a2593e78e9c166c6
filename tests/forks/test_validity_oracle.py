"""Transaction validity and the EVM rules it meets, fork by fork, against execution-specs.

Each test names the rule (its EIP) and the forks it spans; it fills a state test with
execution-specs as the oracle (:mod:`tests.support.spec_oracle`: post-state root, logs and
whether the transaction is refused), then runs it through ``ethread statetest``'s runner,
which executes on the VM classes every other caller of the fork table gets (block import,
eth_call at old blocks, the dev chain). A vector passes when ethread refuses exactly what
execution-specs refuses and otherwise reaches the same state root and logs.

The tests also check that each case says something: the vectors are not all refused, nor
all accepted, where the rule draws a line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eth._utils.address import generate_contract_address
from eth_typing import Address as EvmAddress

from ethread.chain.statetest import run_test
from ethread.cli import main
from ethread.forks.table import FORKS
from tests.support.spec_oracle import SENDER, account, blob, dynamic, fill, legacy

ETHER = 10**18
ALL_FORKS = tuple(f.title for f in FORKS if f.title in (
    "Frontier", "Homestead", "EIP150", "EIP158", "Byzantium",
    "ConstantinopleFix", "Istanbul", "Berlin", "London", "Paris", "Shanghai", "Cancun", "Prague",
    "Osaka"))
"""Every fork execution-specs runs state tests for (not Constantinople, replaced by
Petersburg before it ran; the glacier forks change no execution rule)."""
SINCE_BYZANTIUM = ALL_FORKS[ALL_FORKS.index("Byzantium"):]
BLOB_FORKS = ("Cancun", "Prague", "Osaka")
CREATED = bytes(generate_contract_address(EvmAddress(SENDER.address), 0))
"""Where the sender's first creation lands."""
CALLEE = b"\x11" * 20


def funded(extra: dict[str, Any] | None = None, balance: int = ETHER,
           code: bytes = b"") -> dict[str, Any]:
    """A pre-state with the sender (``balance``, ``code``) and ``extra`` accounts."""
    pre = {"0x" + SENDER.address.hex(): account(balance, code=code)}
    pre.update(extra or {})
    return pre


def check(name: str, test: dict[str, Any]) -> list[bool]:
    """Run a filled test with ethread; fail on any vector that differs from execution-specs.
    Whether execution-specs refused each vector."""
    results = list(run_test(name, test))
    failures = [f"{r.fork}: {r.error}" for r in results if not r.passed]
    assert failures == []
    entries = [entry for entries in test["post"].values() for entry in entries]
    assert len(results) == len(entries)
    return ["expectException" in entry for entry in entries]


def test_blob_upfront_cost_includes_value_and_blob_fee_cap_eip4844() -> None:
    """EIP-4844: the balance must cover gas x fee cap + blob gas x blob fee cap + value."""
    tx = blob(value=1, max_fee_per_blob_gas=3)
    cost = tx.gas * tx.max_fee_per_gas + 131_072 * tx.max_fee_per_blob_gas + tx.value
    short = check("blob_one_wei_short", fill(funded(balance=cost - 1), tx, BLOB_FORKS))
    exact = check("blob_exact_cost", fill(funded(balance=cost), tx, BLOB_FORKS))
    assert short == [True] * 3 and exact == [False] * 3


def test_sender_with_code_is_invalid_on_every_fork_eip3607() -> None:
    """EIP-3607 (applied to every fork): a sender holding code cannot send."""
    refused = check("sender_has_code", fill(funded(code=b"\x00"), legacy(), ALL_FORKS))
    assert refused == [True] * len(ALL_FORKS)


def test_sender_with_a_delegation_may_send_eip7702() -> None:
    """EIP-7702: a delegation designator is not code to EIP-3607 (Prague on); before Prague
    it is code like any other."""
    designator = b"\xef\x01\x00" + CALLEE
    forks = ("Cancun", "Prague", "Osaka")
    refused = check("sender_delegated", fill(funded(code=designator), legacy(), forks))
    assert refused == [True, False, False]


def test_initcode_over_the_limit_is_invalid_from_shanghai_eip3860() -> None:
    """EIP-3860: a creation with more than 49,152 bytes of initcode is invalid from Shanghai
    (before it, it runs)."""
    forks = ("London", "Paris", "Shanghai", "Cancun", "Prague", "Osaka")
    # (gas above EIP-7623's floor for 48 KiB of zeros, 512,520 from Prague)
    over = legacy(to=None, data=bytes(49_153), gas=600_000)
    at = legacy(to=None, data=bytes(49_152), gas=600_000)
    assert check("initcode_over", fill(funded(), over, forks)) == [False, False, True, True,
                                                                    True, True]
    assert check("initcode_at_limit", fill(funded(), at, forks)) == [False] * 6


def test_initcode_words_count_in_the_intrinsic_gas_eip3860() -> None:
    """EIP-3860: from Shanghai a creation's intrinsic gas counts 2 per initcode word, so a
    gas limit one short of it is invalid (not a creation that runs out of gas)."""
    data = bytes(64)
    intrinsic = 21_000 + 32_000 + 4 * 64 + 2 * 2
    forks = ("Paris", "Shanghai", "Cancun", "Prague")
    refused = check("initcode_words", fill(funded(), legacy(to=None, data=data,
                                                           gas=intrinsic - 1), forks))
    assert refused == [False, True, True, True]


def test_blob_transaction_before_cancun_is_invalid_eip4844() -> None:
    """EIP-4844: no fork before Cancun carries type-3 transactions (refused, not a crash)."""
    refused = check("blob_before_cancun", fill(funded(), blob(), ("London", "Shanghai",
                                                                 "Cancun")))
    assert refused == [True, True, False]


def test_too_many_blobs_are_invalid_eip4844() -> None:
    """EIP-4844 (and EIP-7594 from Osaka): no more blobs in a transaction than a block may
    hold (6 in Cancun, 9 in Prague) or, from Osaka, than a transaction may carry (6)."""
    hashes = lambda n: tuple(bytes([1, i]) + bytes(30) for i in range(n))  # noqa: E731
    seven = check("seven_blobs", fill(funded(), blob(blob_versioned_hashes=hashes(7)),
                                      BLOB_FORKS))
    ten = check("ten_blobs", fill(funded(), blob(blob_versioned_hashes=hashes(10)),
                                  BLOB_FORKS))
    assert seven == [True, False, True] and ten == [True] * 3


MODEXP_ZERO_POWER = bytes.fromhex(
    "6001602052"  # exponent length 1 at 32
    "6001604052"  # modulus length 1 at 64 (base length 0 at 0)
    "6005606153"  # modulus 5 at byte 97 (exponent 0 at byte 96)
    "6001608060626000600060055af1"  # CALL(gas, 5, 0, in 0..98, out 128..129)
    "600155"  # success at slot 1
    "608051600055"  # the output word at slot 0
    "00")
"""Code calling MODEXP with an empty base, exponent 0 and modulus 5, storing the answer."""


def test_modexp_of_an_empty_base_to_the_power_zero_eip198() -> None:
    """EIP-198 (and EIP-2565's prices): an empty base is 0, and 0 ** 0 % 5 is 1, on every
    fork with the precompile."""
    pre = funded({"0x" + CALLEE.hex(): account(code=MODEXP_ZERO_POWER)})
    test = fill(pre, legacy(gas=200_000), SINCE_BYZANTIUM)
    assert check("modexp_zero_power", test) == [False] * len(SINCE_BYZANTIUM)


def test_creation_over_an_account_with_storage_collides_eip7610() -> None:
    """EIP-7610 (applied to every fork): creating at an address that holds storage fails as
    a collision (all gas taken, nothing created). (The account holds a wei too: execution-
    specs will not hold an empty account in a pre-state.)"""
    initcode = bytes.fromhex("600160005500")  # SSTORE(0, 1): visible if the creation ran
    pre = funded({"0x" + CREATED.hex(): account(1, storage={1: 1})})
    test = fill(pre, legacy(to=None, data=initcode, gas=100_000), ALL_FORKS)
    assert check("create_over_storage", test) == [False] * len(ALL_FORKS)


def test_creation_over_an_empty_account_succeeds() -> None:
    """The control for EIP-7610: the same creation over an account with a balance only runs."""
    initcode = bytes.fromhex("600160005500")
    pre = funded({"0x" + CREATED.hex(): account(balance=1)})
    test = fill(pre, legacy(to=None, data=initcode, gas=100_000), ALL_FORKS)
    assert check("create_over_balance", test) == [False] * len(ALL_FORKS)


def test_fee_cap_below_the_base_fee_and_tip_above_the_fee_cap_eip1559() -> None:
    """EIP-1559: a fee cap below the base fee (7) or a tip above the fee cap is invalid."""
    below = check("fee_cap_below_base_fee", fill(funded(), dynamic(max_fee_per_gas=6,
                                                                   max_priority_fee_per_gas=1),
                                                 ("London", "Cancun", "Osaka")))
    tip = check("tip_above_fee_cap", fill(funded(), dynamic(max_fee_per_gas=10,
                                                            max_priority_fee_per_gas=11),
                                          ("London", "Cancun", "Osaka")))
    assert below == [True] * 3 and tip == [True] * 3


def test_nonce_at_the_cap_is_invalid_eip2681() -> None:
    """EIP-2681: a nonce of 2^64 - 1 cannot be used (its sender's nonce is that too)."""
    pre = {"0x" + SENDER.address.hex(): account(ETHER, nonce=2**64 - 1)}
    refused = check("nonce_cap", fill(pre, legacy(nonce=2**64 - 1), ("Frontier", "Cancun")))
    assert refused == [True, True]


def test_filled_tests_run_from_the_command(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A filled test is a state test file like any: ``ethread statetest`` passes it."""
    pre = funded({"0x" + CREATED.hex(): account(1, storage={1: 1})})
    test = fill(pre, legacy(to=None, data=b"\x00", gas=100_000), ("Frontier", "Cancun"))
    path = tmp_path / "eip7610.json"
    path.write_text(json.dumps({"create_over_storage": test}))
    assert main(["statetest", str(path)]) == 0
    assert [r["pass"] for r in json.loads(capsys.readouterr().out)] == [True, True]
