"""The fork table (ethread/forks/table.py) and the schedule read from a genesis
(ethread/forks/schedule.py): what each fork changes, the blob schedule through the BPO forks,
the public networks, and a genesis naming a fork ethread does not know refused, naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ethread.errors import GenesisError
from ethread.evm.blobs import BlobParams, excess_blob_gas_after
from ethread.forks import FORKS, ChainConfig, fork_named, network_config
from ethread.forks.table import MAX_RLP_BLOCK_SIZE, TX_GAS_LIMIT_CAP
from tests.support.paths import conformance_dir

OSAKA_GENESIS = conformance_dir() / "osaka" / "genesis.json"


def _osaka_config() -> ChainConfig:
    return ChainConfig.from_genesis_config(json.loads(OSAKA_GENESIS.read_text())["config"])


def test_the_table_is_in_activation_order_with_one_row_per_genesis_key() -> None:
    assert [f.index for f in FORKS] == list(range(len(FORKS)))
    keys = [f.genesis_key for f in FORKS if f.genesis_key]
    assert len(keys) == len(set(keys)) == len(FORKS) - 1
    # scheduled by block number up to the merge, by timestamp after it
    assert [f.by_time for f in FORKS] == sorted(f.by_time for f in FORKS)
    assert fork_named("paris").by_time is False and fork_named("shanghai").by_time is True


@pytest.mark.parametrize(("fork", "types"), [
    ("frontier", {0}), ("berlin", {0, 1}), ("london", {0, 1, 2}), ("cancun", {0, 1, 2, 3}),
    ("prague", {0, 1, 2, 3, 4}), ("bpo2", {0, 1, 2, 3, 4}),
])
def test_transaction_types_by_fork(fork: str, types: set[int]) -> None:
    assert fork_named(fork).transaction_types == types


def test_osaka_rules() -> None:
    prague, osaka = fork_named("prague"), fork_named("osaka")
    assert prague.tx_gas_cap is None and osaka.tx_gas_cap == TX_GAS_LIMIT_CAP == 16_777_216
    assert prague.max_block_rlp_size is None and osaka.max_block_rlp_size == MAX_RLP_BLOCK_SIZE
    assert MAX_RLP_BLOCK_SIZE == 8_388_608
    assert prague.max_blobs_per_tx is None and osaka.max_blobs_per_tx == 6
    assert not prague.blob_reserve_price and osaka.blob_reserve_price
    assert "P256VERIFY" not in dict(prague.precompiles)
    assert dict(osaka.precompiles)["P256VERIFY"] == (0x100).to_bytes(20, "big")
    assert len(osaka.precompiles) == 18
    assert fork_named("bpo1").vm_base == "osaka" and fork_named("BPO2").name == "bpo2"
    assert fork_named("EIP158").name == "spurious_dragon"


def test_the_osaka_chain_schedule_and_its_blob_parameters() -> None:
    config = _osaka_config()
    assert [name for _, name in config.time_forks] == [
        "shanghai", "cancun", "prague", "osaka", "bpo1", "bpo2"]
    assert config.rules(40, 479).name == "prague"
    assert config.rules(45, 480).name == "osaka"
    assert config.rules(50, 539).blob == BlobParams(10, 15, 8346193)
    assert config.rules(54, 540).blob == BlobParams(14, 21, 11684671)
    assert config.rules(30, 0).blob is None
    assert config.time_forks[-1][1] == "bpo2"
    assert config.deposit_contract == bytes(20)
    # the blob base fee follows each fork's update fraction
    assert config.blob_base_fee(54, 540, 10**7) < config.blob_base_fee(50, 510, 10**7) \
        < config.blob_base_fee(45, 480, 10**7)


def _genesis_config(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(OSAKA_GENESIS.read_text())["config"]
    config.update(changes)
    return {k: v for k, v in config.items() if v is not None}


@pytest.mark.parametrize("key", ["amsterdamTime", "verkleTime", "bogotaBlock"])
def test_an_unknown_fork_key_is_refused_naming_it(key: str) -> None:
    with pytest.raises(GenesisError, match=key):
        ChainConfig.from_genesis_config(_genesis_config(**{key: 600}))


def test_keys_that_are_not_forks_are_read_as_before() -> None:
    config = ChainConfig.from_genesis_config(_genesis_config(amsterdamTime=None, ethash={},
                                                             terminalTotalDifficulty=0))
    assert config.time_forks[-1][1] == "bpo2"


def test_a_bpo_fork_needs_its_blob_schedule_entry() -> None:
    config = _genesis_config(bpo3Time=600)
    with pytest.raises(GenesisError, match="bpo3"):
        ChainConfig.from_genesis_config(config)
    config["blobSchedule"]["bpo3"] = {"target": 21, "max": 32, "baseFeeUpdateFraction": 20609697}
    assert ChainConfig.from_genesis_config(config).rules(60, 600).blob == BlobParams(21, 32, 20609697)
    config["blobSchedule"]["bpo3"] = {"target": 21}
    with pytest.raises(GenesisError, match=r"blobSchedule\.bpo3"):
        ChainConfig.from_genesis_config(config)


@pytest.mark.parametrize(("network", "chain_id", "osaka", "bpo2"), [
    ("mainnet", 1, 1764798551, 1767747671),
    ("sepolia", 11155111, 1760427360, 1761607008),
    ("hoodi", 560048, 1761677592, 1762955544),
])
def test_public_networks_run_through_bpo2(network: str, chain_id: int, osaka: int,
                                          bpo2: int) -> None:
    config = network_config(network)
    assert config is not None and config.chain_id == chain_id
    assert config.rules(30_000_000, osaka - 1).name == "prague"
    assert config.rules(30_000_000, osaka).name == "osaka"
    assert config.rules(30_000_000, bpo2).name == "bpo2"
    assert config.rules(30_000_000, bpo2).blob == BlobParams(14, 21, 11684671)


def test_excess_blob_gas_with_and_without_the_reserve_price() -> None:
    blob = BlobParams(6, 9, 5007716)
    gas = 131072
    # below the target: nothing in excess
    assert excess_blob_gas_after(blob, True, 0, 5 * gas, 10**9) == 0
    # a cheap blob under a high base fee: the excess only grows (by used * 3/9)
    assert excess_blob_gas_after(blob, True, 0, 9 * gas, 10**9) == 9 * gas * 3 // 9
    assert excess_blob_gas_after(blob, False, 0, 9 * gas, 10**9) == 3 * gas
    # a blob dearer than the reserve price: EIP-4844's rule
    assert excess_blob_gas_after(blob, True, 100 * 10**6, 9 * gas, 7) == 100 * 10**6 + 3 * gas


def _run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "ethread"
    return subprocess.run([str(command), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("command", ["import", "serve"])
def test_the_cli_refuses_a_genesis_with_an_unknown_fork_key(tmp_path: Path, command: str) -> None:
    document = json.loads(OSAKA_GENESIS.read_text())
    document["config"]["amsterdamTime"] = 600
    genesis = tmp_path / "genesis.json"
    genesis.write_text(json.dumps(document))
    blocks = str(conformance_dir() / "osaka" / "chain.rlp")
    extra = ["--db", str(tmp_path / "db")] if command == "import" else ["--port", "0"]
    done = _run_cli(command, "--genesis", str(genesis), "--blocks", blocks, "--no-verify-seals",
                    *extra, cwd=tmp_path)
    assert done.returncode != 0
    assert "amsterdamTime" in done.stderr and "Traceback" not in done.stderr
    assert "Traceback" not in done.stdout


def test_osaka_runs_pragues_blob_parameters_as_geth_does() -> None:
    config = _genesis_config()
    config["blobSchedule"]["prague"] = {"target": 4, "max": 8, "baseFeeUpdateFraction": 4000000}
    config["blobSchedule"]["osaka"] = {"target": 9, "max": 12, "baseFeeUpdateFraction": 9000000}
    chain = ChainConfig.from_genesis_config(config)
    assert chain.rules(45, 480).blob == BlobParams(4, 8, 4000000) == chain.rules(40, 450).blob


@pytest.mark.parametrize("entry", [
    {"target": 1, "max": 2, "baseFeeUpdateFraction": 0},
    {"target": -1, "max": 2, "baseFeeUpdateFraction": 5},
])
def test_a_blob_schedule_entry_that_cannot_price_blobs_is_refused(entry: dict[str, int]) -> None:
    config = _genesis_config()
    config["blobSchedule"]["bpo1"] = entry
    with pytest.raises(GenesisError, match=r"blobSchedule\.bpo1"):
        ChainConfig.from_genesis_config(config)
