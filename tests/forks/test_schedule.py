"""The chain id and fork schedule read from a genesis ``config`` (ethread/forks/schedule.py):
forks by block number then by timestamp, the merge of a chain that merged on difficulty, the
DAO fork only where supported, the blob schedule through the BPO forks (Osaka running Prague's
parameters, as geth), schedules for state tests, and a genesis that schedules a fork ethread
does not know (or is malformed) refused, naming what is wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ethread.errors import GenesisError
from ethread.evm.blobs import BlobParams
from ethread.forks import FORK_BY_NAME, ChainConfig
from tests.support.paths import conformance_dir

OSAKA_GENESIS = conformance_dir() / "osaka" / "genesis.json"


def _osaka_config() -> ChainConfig:
    return ChainConfig.from_genesis_config(json.loads(OSAKA_GENESIS.read_text())["config"])


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



def test_block_forks_then_time_forks() -> None:
    config = ChainConfig.from_genesis_config({
        "chainId": 5, "homesteadBlock": 2, "byzantiumBlock": 4, "londonBlock": 6,
        "mergeNetsplitBlock": 8, "shanghaiTime": 100, "cancunTime": 200})
    assert [name for _, name in config.block_forks] == [
        "frontier", "homestead", "byzantium", "london", "paris"]
    assert [config.fork_at(n, 0) for n in (0, 1, 2, 3, 4, 6, 8)] == [
        "frontier", "frontier", "homestead", "homestead", "byzantium", "london", "paris"]
    assert config.fork_at(9, 99) == "paris" and config.fork_at(9, 100) == "shanghai"
    assert config.fork_at(9, 250) == "cancun" and config.time_forks[-1][1] == "cancun"
    assert config.rules(9, 250).blob == FORK_BY_NAME["cancun"].blob
    assert config.blob_fractions == {"cancun": FORK_BY_NAME["cancun"].blob.update_fraction,  # type: ignore[union-attr]
                                     "prague": FORK_BY_NAME["prague"].blob.update_fraction}  # type: ignore[union-attr]
    assert config.vm_class(9, 250).fork == "cancun"
    assert config.chain_id == 5 and config.dao_fork_block is None and config.deposit_contract is None


def test_mainnet_merged_on_difficulty_at_its_first_proof_of_stake_block() -> None:
    config = ChainConfig.from_genesis_config({
        "chainId": 1, "londonBlock": 12_965_000, "terminalTotalDifficulty": 58_750_000_000_000_000_000_000,
        "daoForkBlock": 1_920_000, "daoForkSupport": True})
    assert config.fork_at(15_537_393, 0) == "london" and config.fork_at(15_537_394, 0) == "paris"
    assert config.dao_fork_block == 1_920_000
    other = ChainConfig.from_genesis_config({"chainId": 7, "terminalTotalDifficulty": 0,
                                             "daoForkBlock": 5})
    assert other.fork_at(10**9, 0) == "frontier", "another chain names its merge block"
    assert other.dao_fork_block is None, "a DAO block without daoForkSupport is not forked"


def test_configs_are_equal_and_hash_by_their_schedule() -> None:
    one = ChainConfig.from_genesis_config({"chainId": 3, "londonBlock": 0, "extra": 1})
    two = ChainConfig.from_genesis_config({"chainId": 3, "londonBlock": 0})
    assert one == two and hash(one) == hash(two) and one.source != two.source
    assert one != ChainConfig.from_genesis_config({"chainId": 4, "londonBlock": 0})


@pytest.mark.parametrize(("config", "message"), [
    ([], "must be an object with a chainId"),
    ({"londonBlock": 0}, "must be an object with a chainId"),
    ({"chainId": "one"}, "genesis config: invalid literal"),
    ({"chainId": 1, "londonBlock": "soon"}, "genesis config: invalid literal"),
    ({"chainId": 1, "cancunTime": 0, "blobSchedule": [1]}, "blobSchedule must be an object"),
    ({"chainId": 1, "cancunTime": 0, "blobSchedule": {"cancun": 3}}, r"blobSchedule\.cancun must be an object"),
])
def test_a_malformed_config_is_refused(config: Any, message: str) -> None:
    with pytest.raises(GenesisError, match=message):
        ChainConfig.from_genesis_config(config)
