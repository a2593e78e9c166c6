"""Fees (``ethread.methods.fees``) against rules computed by hand: fee history exactly as geth
answers it, the next base fee, the blob base fee, the gas price and tip suggestions, and
eth_baseFee before and at London."""

from __future__ import annotations

import json
from typing import Any

import ethread
from ethread import methods
from ethread.devchain import DevChain, Fees
from ethread.methods.fees import get_base_fee, next_base_fee
from ethread.models import Header
from ethread.rpc.dispatcher import Dispatcher
from tests.support.paths import conformance_dir
from tests.support.rescheduled import Rescheduled
from tests.support.rpc_cases import error, result


def test_fee_history_matches_geth_exactly(rpc_compat_memory: ethread.MemoryBackend) -> None:
    """The conformance case is speconly; ethread's answer is geth's to the last digit."""
    assert result(rpc_compat_memory, "eth_feeHistory", "0x1", "0x1b", [95, 99]) == {
        "oldestBlock": "0x1b", "reward": [["0x1", "0x1"]],
        "baseFeePerGas": ["0x3b9aca00", "0x342dc057"], "gasUsedRatio": [0.0016543629259729885],
        "baseFeePerBlobGas": ["0x0", "0x0"], "blobGasUsedRatio": [0],
    }


def header(**fields: Any) -> Header:
    base: dict[str, Any] = dict(parent_hash=b"", uncles_hash=b"", coinbase=b"", state_root=b"",
                                transactions_root=b"", receipts_root=b"", logs_bloom=b"",
                                difficulty=0, number=100, gas_limit=30_000_000, gas_used=15_000_000,
                                timestamp=0, extra_data=b"", mix_hash=b"", nonce=b"",
                                base_fee_per_gas=10**9)
    base.update(fields)
    return Header(**base)


def test_next_base_fee_by_hand(rpc_compat_memory: ethread.MemoryBackend) -> None:
    config = rpc_compat_memory.chain_config()
    assert config is not None
    assert next_base_fee(config, header()) == 10**9  # at target: unchanged
    assert next_base_fee(config, header(gas_used=30_000_000)) == 1_125_000_000  # full: +12.5%
    assert next_base_fee(config, header(gas_used=0)) == 875_000_000  # empty: -12.5%
    assert next_base_fee(config, header(gas_used=15_000_001, base_fee_per_gas=7)) == 8  # at least +1
    assert next_base_fee(config, header(number=0, base_fee_per_gas=None)) == 10**9  # before London


def test_fee_history_ranges_and_errors(rpc_compat_memory: ethread.MemoryBackend) -> None:
    whole = result(rpc_compat_memory, "eth_feeHistory", "0x40", "latest", [])
    assert whole["oldestBlock"] == "0x0" and len(whole["gasUsedRatio"]) == 46
    assert len(whole["baseFeePerGas"]) == 47 and "reward" not in whole
    assert result(rpc_compat_memory, "eth_feeHistory", 10, "latest", None)["oldestBlock"] == "0x24"
    assert result(rpc_compat_memory, "eth_feeHistory", "10", "0x2d", [])["oldestBlock"] == "0x24"
    pending = result(rpc_compat_memory, "eth_feeHistory", "0x2", "pending", [])
    assert pending["oldestBlock"] == "0x2d" and len(pending["gasUsedRatio"]) == 1
    assert result(rpc_compat_memory, "eth_feeHistory", "0x0", "latest", []) == \
        {"oldestBlock": "0x0", "gasUsedRatio": None}
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "0x2e", []) == \
        (-32000, "request beyond head block: requested 46, head 45")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", [99, 95]) == \
        (-32000, "invalid reward percentile: #0:99.000000 >= #1:95.000000")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", [101]) == \
        (-32000, "invalid reward percentile: 101.000000")
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest", list(range(101)))[1] == \
        "invalid reward percentile: over the query limit 100"
    assert error(rpc_compat_memory, "eth_feeHistory", "abc", "latest", []) == \
        (-32602, 'invalid argument 0: invalid hex or decimal integer "abc"')
    assert error(rpc_compat_memory, "eth_feeHistory", "0x1", "latest") == \
        (-32602, "missing value for required argument 2")
    blob_block = result(rpc_compat_memory, "eth_feeHistory", "0x1", "0x2a", [50])
    assert blob_block["blobGasUsedRatio"] == [1 / 6]  # one blob of Cancun's six (block 42 is at 420)
    assert blob_block["baseFeePerBlobGas"] == ["0x1", "0x1"]


def test_blob_base_fee_is_the_heads(rpc_compat_memory: ethread.MemoryBackend) -> None:
    assert result(rpc_compat_memory, "eth_blobBaseFee") == "0x1"
    assert methods.get_blob_base_fee(rpc_compat_memory) == 1


def test_gas_price_is_the_60th_percentile_tip_plus_base_fee(dev: DevChain) -> None:
    sender = dev.accounts[1]
    gwei = 10**9
    # Three blocks with tips 1..9 gwei (three each): the oracle samples the three lowest tips
    # of each, here every tip. Sorted, the 60th percentile of [1..9] is index (9-1)*60//100=4.
    for block in range(3):
        for i in range(3):
            tip = (block * 3 + i + 1) * gwei
            dev.send(sender, dev.accounts[2].address, value=1, fees=Fees(max_fee_per_gas=100 * gwei,
                                                                          max_priority_fee_per_gas=tip))
        dev.mine()
    # Earlier blocks (genesis excluded) have no transactions: each stands for the start price,
    # 0.001 gwei, and the oracle looks further back while blocks give one sample at most.
    tips = methods.suggest_tip_cap(dev.backend)
    samples = sorted([n * gwei for n in range(1, 10)] + [10**6])  # block 1 is empty
    assert tips == samples[(len(samples) - 1) * 60 // 100]
    dispatcher = Dispatcher(dev.backend)
    assert result(None, "eth_maxPriorityFeePerGas", dispatcher=dispatcher) == hex(tips)
    base_fee = dev.head.base_fee_per_gas
    assert base_fee is not None
    assert result(None, "eth_gasPrice", dispatcher=dispatcher) == hex(tips + base_fee)


def test_tips_of_the_miner_and_below_two_wei_are_not_sampled(dev: DevChain) -> None:
    sender = dev.accounts[1]
    dev.send(sender, dev.accounts[2].address, value=1,
             fees=Fees(max_fee_per_gas=10**11, max_priority_fee_per_gas=1))
    dev.mine()
    assert methods.suggest_tip_cap(dev.backend, last_price=777) == 777
    dev.send(sender, dev.accounts[2].address, value=1,
             fees=Fees(max_fee_per_gas=10**11, max_priority_fee_per_gas=5 * 10**9))
    dev.mine(coinbase=sender.address)
    assert methods.suggest_tip_cap(dev.backend, last_price=777) == 777


OSAKA_CONFIG: dict[str, Any] = json.loads(
    (conformance_dir() / "osaka" / "genesis.json").read_text())["config"]


def test_base_fee_of_the_first_london_block_is_the_initial_one(
        osaka_memory: ethread.MemoryBackend) -> None:
    # London at block 27: after block 25 there is none, after block 26 the initial 1 gwei.
    assert get_base_fee(Rescheduled(osaka_memory, OSAKA_CONFIG, head=25)) is None  # type: ignore[arg-type]
    assert get_base_fee(Rescheduled(osaka_memory, OSAKA_CONFIG, head=26)) == 1_000_000_000  # type: ignore[arg-type]
    assert get_base_fee(osaka_memory) == 0x16DFE9B
