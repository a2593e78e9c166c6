"""eth_config, eth_capabilities and eth_baseFee beyond the one case each of the Osaka suite:
other fork schedules (a next fork, none yet past Shanghai, a fork left out), a store of
history only, the block before London; the answer styles; the web3 provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from web3 import Web3

import ethread
from ethread.codec.answers import ANSWER_STYLES, GETH_1_16, GETH_1_17, answer_style
from ethread.codec.dispatch import Context
from ethread.forks import ChainConfig
from ethread.methods.capabilities import get_capabilities
from ethread.methods.config import get_config
from ethread.methods.fees import get_base_fee
from ethread.models import Hash32, Header
from ethread.web3 import EthreadProvider
from tests.support.paths import conformance_dir
from tests.support.storage_backends import era_from

OSAKA_CONFIG: dict[str, Any] = json.loads(
    (conformance_dir() / "osaka" / "genesis.json").read_text())["config"]


class Rescheduled:
    """A chain's headers and pointers under another fork schedule (and, optionally, another
    head): what eth_config and eth_baseFee read."""

    def __init__(self, backend: ethread.MemoryBackend, config: dict[str, Any],
                 head: int | None = None) -> None:
        self.backend = backend
        self.config = ChainConfig.from_genesis_config(config)
        self.head = head

    def chain_config(self) -> ChainConfig:
        return self.config

    def canonical_hash(self, number: int) -> Hash32 | None:
        return self.backend.canonical_hash(number)

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        return self.backend.header_by_hash(block_hash)

    def pointer(self, name: Any) -> int | None:
        return self.head if self.head is not None and name == "latest" else self.backend.pointer(name)


def _names(fork: Any) -> tuple[int, str] | None:
    return None if fork is None else (fork.activation_time, fork.fork_id.hex())


def test_osaka_chain_at_its_head_runs_its_last_fork(osaka_memory: ethread.MemoryBackend) -> None:
    forks = get_config(osaka_memory)
    assert forks is not None and forks.next is None and forks.last is None
    assert forks.current is not None and forks.current.activation_time == 540


def test_a_later_fork_is_next_and_the_latest_scheduled_is_last(
        osaka_memory: ethread.MemoryBackend) -> None:
    later = {**OSAKA_CONFIG, "bpo1Time": 10_000, "bpo2Time": 20_000}
    forks = get_config(Rescheduled(osaka_memory, later))  # type: ignore[arg-type]
    assert forks is not None and forks.current is not None
    assert forks.current.activation_time == 480
    assert [f.activation_time for f in (forks.next, forks.last) if f is not None] == [10_000, 20_000]
    assert forks.next is not None and forks.next.blob_schedule is not None
    assert (forks.next.blob_schedule.target, forks.next.blob_schedule.max) == (10, 15)
    # Each fork has its own id; the current one is the one a node has at the head.
    ids = {f.fork_id for f in (forks.current, forks.next, forks.last) if f is not None}
    assert len(ids) == 3
    names = {name for name, _ in forks.current.precompiles}
    assert "P256VERIFY" in names and "BLS12_G1ADD" in names


def test_a_fork_left_out_ends_the_list(osaka_memory: ethread.MemoryBackend) -> None:
    """geth's next is the fork right after the current one: with Osaka not scheduled, a
    Prague chain has no next (nor last), BPO forks scheduled or not."""
    without_osaka = {k: v for k, v in OSAKA_CONFIG.items() if k != "osakaTime"}
    without_osaka.update(bpo1Time=10_000, bpo2Time=20_000)
    forks = get_config(Rescheduled(osaka_memory, without_osaka, head=45))  # type: ignore[arg-type]
    assert forks is not None and forks.current is not None
    assert forks.current.activation_time == 450 and forks.next is None and forks.last is None
    assert "P256VERIFY" not in {name for name, _ in forks.current.precompiles}


def test_before_shanghai_there_is_no_current_fork(osaka_memory: ethread.MemoryBackend) -> None:
    forks = get_config(Rescheduled(osaka_memory, OSAKA_CONFIG, head=10))  # type: ignore[arg-type]
    assert forks is not None and forks.current is None
    assert forks.next is not None and forks.next.activation_time == 390
    assert forks.next.blob_schedule is None
    assert forks.last is not None and forks.last.activation_time == 540


def test_a_fork_at_genesis_is_active_from_time_zero(osaka_memory: ethread.MemoryBackend) -> None:
    at_genesis = {**OSAKA_CONFIG, "shanghaiTime": 0}
    forks = get_config(Rescheduled(osaka_memory, at_genesis, head=10))  # type: ignore[arg-type]
    assert forks is not None and forks.current is not None
    assert forks.current.activation_time == 0


def test_rpc_compat_chain_config(rpc_compat_memory: ethread.MemoryBackend) -> None:
    answer = json.loads(ethread.handle(  # type: ignore[arg-type]
        rpc_compat_memory, b'{"jsonrpc":"2.0","id":1,"method":"eth_config"}'))["result"]
    assert answer["next"] is None and answer["last"] is None
    current = answer["current"]
    assert current["activationTime"] == 450 and current["chainId"] == "0xc72dd9d5e883e"
    assert current["blobSchedule"] == {"target": 6, "max": 9, "baseFeeUpdateFraction": 5007716}
    assert "P256VERIFY" not in current["precompiles"] and len(current["precompiles"]) == 17
    assert len(current["systemContracts"]) == 5


def test_base_fee_of_the_first_london_block_is_the_initial_one(
        osaka_memory: ethread.MemoryBackend) -> None:
    # London at block 27: after block 25 there is none, after block 26 the initial 1 gwei.
    assert get_base_fee(Rescheduled(osaka_memory, OSAKA_CONFIG, head=25)) is None  # type: ignore[arg-type]
    assert get_base_fee(Rescheduled(osaka_memory, OSAKA_CONFIG, head=26)) == 1_000_000_000  # type: ignore[arg-type]
    assert get_base_fee(osaka_memory) == 0x16DFE9B


def test_a_store_of_history_only_serves_no_state(rpc_compat_memory: ethread.MemoryBackend,
                                                 tmp_path: Path) -> None:
    era = era_from(rpc_compat_memory, tmp_path / "era")
    try:
        capabilities = get_capabilities(era)
        assert capabilities is not None and capabilities.head_number == 35
        assert capabilities.state.disabled and capabilities.state.oldest_block is None
        assert capabilities.state_proofs == capabilities.state
        assert not capabilities.logs.disabled and capabilities.logs.oldest_block == 0
        answer = json.loads(ethread.handle(  # type: ignore[arg-type]
            era, b'{"jsonrpc":"2.0","id":1,"method":"eth_capabilities"}'))["result"]
        assert answer["state"] == {"disabled": True}
        assert answer["blocks"] == {"disabled": False, "oldestBlock": "0x0"}
    finally:
        era.close()


def test_answer_styles_are_named_once() -> None:
    assert list(ANSWER_STYLES) == ["geth-1.17", "geth-1.16"]
    assert answer_style("geth-1.16") is GETH_1_16 and GETH_1_17.withheld == frozenset()
    with pytest.raises(ValueError, match=r"known: geth-1\.17, geth-1\.16"):
        answer_style("geth-1.15")


def test_a_dispatcher_keeps_one_style(osaka_memory: ethread.MemoryBackend) -> None:
    """Both styles over one backend, asked in turns: each answer cache and fragment cache
    holds its own style's answers."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x1e",true]}'
    for _ in range(2):
        new = json.loads(ethread.handle(osaka_memory, body))["result"]  # type: ignore[arg-type]
        old = json.loads(ethread.handle(osaka_memory, body, answers=GETH_1_16))["result"]  # type: ignore[arg-type]
        assert new["transactions"] and all("blockTimestamp" in t for t in new["transactions"])
        assert not any("blockTimestamp" in t for t in old["transactions"])
        assert [{k: v for k, v in t.items() if k != "blockTimestamp"}
                for t in new["transactions"]] == old["transactions"]


def test_web3_provider_answers_the_new_methods(osaka_memory: ethread.MemoryBackend) -> None:
    w3 = Web3(EthreadProvider(osaka_memory))
    config = w3.provider.make_request("eth_config", [])["result"]  # type: ignore[arg-type]
    assert config["current"]["forkId"] == "0xe272ecbe"
    assert w3.provider.make_request("eth_baseFee", [])["result"] == "0x16dfe9b"  # type: ignore[arg-type]
    capabilities = w3.provider.make_request("eth_capabilities", [])["result"]  # type: ignore[arg-type]
    assert capabilities["head"]["number"] == "0x36"
    block = w3.eth.get_block(30, full_transactions=True)
    first: Any = block["transactions"][0]
    # web3.py's formatters do not know the key yet: it stays a hex quantity.
    assert int(first["blockTimestamp"], 16) == block["timestamp"]
    old = Web3(EthreadProvider(osaka_memory, Context(answers=GETH_1_16)))
    old_first: Any = old.eth.get_block(30, full_transactions=True)["transactions"][0]
    assert "blockTimestamp" not in old_first
