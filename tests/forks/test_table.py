"""The fork table (ethread/forks/table.py): what each fork changes, fork names, the public
networks through the BPO forks, and the excess blob gas rule. The schedule read from a genesis
is tested in test_schedule."""

from __future__ import annotations

import pytest

from ethread.evm.blobs import BlobParams, excess_blob_gas_after
from ethread.forks import FORKS, fork_named, network_config
from ethread.forks.table import MAX_RLP_BLOCK_SIZE, TX_GAS_LIMIT_CAP


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


