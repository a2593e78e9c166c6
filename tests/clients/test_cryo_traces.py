"""cryo's trace datasets (traces, native_transfers, contracts, balance_diffs, storage_diffs,
geth_calls) extracted from ``ethread serve`` on the rpc-compat chain, checked against
ethread's own answers and against values known from the chain.

cryo reads trace_block (traces, native_transfers, contracts), trace_replayBlockTransactions
with stateDiff (balance_diffs, storage_diffs) and debug_traceBlockByNumber with callTracer
(geth_calls). The range starts at block 1: geth (and ethread) refuse to trace the genesis."""

from __future__ import annotations

import glob
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ethread
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import answer_of
from tests.support.server_harness import ServeProcess

pytestmark = pytest.mark.cryo

cryo = pytest.importorskip("cryo", reason="cryo has wheels for CPython 3.11 on x86-64 Linux only")
pq = pytest.importorskip("pyarrow.parquet")

DATASETS = ["traces", "native_transfers", "contracts", "balance_diffs", "storage_diffs", "geth_calls"]
HEAD = 45


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ethread.MemoryBackend]]:
    folder = conformance_dir() / "rpc-compat"
    chain = [str(folder / "genesis.json"), str(folder / "chain.rlp")]
    out = tmp_path_factory.mktemp("cryo-traces")
    with ServeProcess(["--genesis", chain[0], "--blocks", chain[1], "--no-verify-seals",
                       "--no-access-log"], cwd=out) as server:
        rpc = f"http://{server.host}:{server.port}/v3/ethread-demo-key"
        for dataset in DATASETS:
            cryo.freeze(dataset, blocks=["1:"], rpc=rpc, output_dir=str(out), verbose=False,
                        no_report=True)
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, chain[0], chain[1], verify_seals=False)
    yield out, backend


def _table(out: Path, dataset: str) -> Any:
    (path,) = glob.glob(str(out / f"*__{dataset}__*.parquet"))
    return pq.read_table(path)


def _ours(backend: ethread.MemoryBackend, method: str, *params: Any) -> list[Any]:
    return [item for n in range(1, HEAD + 1)
            for item in answer_of(backend, method, hex(n), *params)["result"]]


def test_traces(extracted: tuple[Path, ethread.MemoryBackend]) -> None:
    out, backend = extracted
    table = _table(out, "traces")
    ours = _ours(backend, "trace_block")
    kinds = Counter(table.column("action_type").to_pylist())
    # 35 proof-of-work blocks (the merge comes at block 36), 19 uncles among them
    assert table.num_rows == len(ours) == 214
    assert kinds == Counter(t["type"] for t in ours) == {"call": 85, "create": 75, "reward": 54}
    rewards = sorted((row["block_number"], int(row["action_value"])) for row in table.to_pylist()
                     if row["action_type"] == "reward" and row["block_number"] in (1, 9, 11, 14))
    # 5 ether before Byzantium (block 9), 3 until Constantinople (block 12), then 2; block 9
    # includes an uncle of block 8: 1/32 more for its miner, 7/8 of the reward for the uncle's
    assert rewards == [(1, 5 * 10**18), (9, 3 * 10**18 * 7 // 8), (9, 3 * 10**18 * 33 // 32),
                       (11, 3 * 10**18), (14, 2 * 10**18)]
    assert Counter(r.hex() if r else None for r in table.column("transaction_hash").to_pylist()) == \
        Counter(t["transactionHash"] and t["transactionHash"][2:] for t in ours)


def test_native_transfers(extracted: tuple[Path, ethread.MemoryBackend]) -> None:
    out, _ = extracted
    rows = _table(out, "native_transfers").to_pylist()
    assert len(rows) == 214 and sum(int(r["value_string"]) > 0 for r in rows) == 137
    known = [r for r in rows if r["transaction_hash"] and r["transaction_hash"].hex()
             == "5bc704d4eb4ce7fe319705d2f888516961426a177f2799c9f934b5df7466dd33"]
    assert [(r["block_number"], r["transaction_index"], r["from_address"].hex(),
             r["to_address"].hex(), r["value_string"]) for r in known] == \
        [(2, 2, "7435ed30a8b4aeb0877cef0c6e8cffe834eb865f", "7dcd17433742f4c0ca53122ab541d0ba67fc27df", "2")]


def test_contracts(extracted: tuple[Path, ethread.MemoryBackend]) -> None:
    out, backend = extracted
    table = _table(out, "contracts")
    creates = [t for t in _ours(backend, "trace_block") if t["type"] == "create" and t.get("result")]
    assert table.num_rows == len(creates) == 75
    assert sorted(a.hex() for a in table.column("contract_address").to_pylist()) == \
        sorted(t["result"]["address"][2:] for t in creates)
    first = table.to_pylist()[0]
    code = answer_of(backend, "eth_getCode", "0x" + first["contract_address"].hex(), "latest")["result"]
    assert "0x" + first["code"].hex() == code


def test_state_diffs(extracted: tuple[Path, ethread.MemoryBackend]) -> None:
    out, backend = extracted
    balances, slots = _table(out, "balance_diffs"), _table(out, "storage_diffs")
    replays = _ours(backend, "trace_replayBlockTransactions", ["stateDiff"])
    assert balances.num_rows == 464 == sum(
        d["balance"] != "=" for r in replays for d in r["stateDiff"].values())
    assert slots.num_rows == 158 == sum(len(d["storage"]) for r in replays for d in r["stateDiff"].values())
    first = balances.to_pylist()[0]  # block 1's first transaction pays the (zero-address) miner
    assert (first["block_number"], first["address"], first["from_value_string"],
            first["to_value_string"]) == (1, b"\x00" * 20, "0", "66259")


def test_geth_calls(extracted: tuple[Path, ethread.MemoryBackend]) -> None:
    out, backend = extracted
    table = _table(out, "geth_calls")

    def frames(frame: dict[str, Any]) -> int:
        return 1 + sum(frames(call) for call in frame.get("calls", ()))

    ours = _ours(backend, "debug_traceBlockByNumber", {"tracer": "callTracer"})
    assert table.num_rows == sum(frames(t["result"]) for t in ours) == 160
    first = table.to_pylist()[0]
    assert (first["typ"], first["gas_used_string"]) == ("CREATE", "66259")
