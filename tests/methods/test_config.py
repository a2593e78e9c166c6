"""eth_config (``ethread.methods.config``) beyond the one case of the Osaka suite: other fork
schedules (a next fork, none yet past Shanghai, a fork left out, a fork at genesis), the
rpc-compat chain; and eth_config, eth_baseFee and eth_capabilities through the web3 provider."""

from __future__ import annotations

import json
from typing import Any

from web3 import Web3

import ethread
from ethread.codec.answers import GETH_1_16
from ethread.methods.config import get_config
from ethread.rpc.context import Context
from ethread.web3 import EthreadProvider
from tests.support.paths import conformance_dir
from tests.support.rescheduled import Rescheduled

OSAKA_CONFIG: dict[str, Any] = json.loads(
    (conformance_dir() / "osaka" / "genesis.json").read_text())["config"]


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
