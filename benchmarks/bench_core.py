"""Core figures: import time, in-process latency per method, eth_getLogs over a large
synthetic history, and the peer benchmark's history reads on every backend. Prints a table;
asserts nothing.

    .venv/bin/python benchmarks/bench_core.py [--conformance DIR] [--skip-million]
        [--peer-blocks N] [--peer-dir DIR] [--only-peer] [--peer-engines memory,leveldb,lmdb]
        [--served N]

The peer rows read the chain of ``bench_vs_anvil.py`` (``benchlib/peer_chain.py``: one Ping call
and one log a block), imported into memory and into a LevelDB and an LMDB store (kept under
``--peer-dir`` for the next run): a random block's receipts, a 100-block log window by
address, a full block and a transaction by hash, each in µs a call (median), **cold** (a
block that backend and dispatcher have never read: decoded records and JSON fragments not
cached) and **warm** (the same blocks again: both cached); the answer cache is off in both.
Then, per backend, the HTTP bench's receipts row in process: ``--served`` requests for random
blocks (bodies that differ) through a dispatcher with its default caches, as a server process
answers them from its start, in CPU µs per request (the first quarter, mostly never-read
blocks, and the rest), beside eth_chainId's through the same dispatcher. For the stores, the
cold receipts row (and a transaction's receipt of such a block) once more in CPU µs per
request, on the plain path (the block's records decoded and its receipts encoded) and from the
answer the store keeps beside each block (``ethread.codec.stored_answers``), side by side:
bench_vs_anvil's ``--requests`` rows ask for such blocks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from benchlib import conformance, report
from benchlib.peer_chain import PeerChain, build
from benchlib.synthetic_history import synthetic_history

import ethread
from ethread.backends.open import Engine, open_store
from ethread.codec.response_cache import ResponseCache
from ethread.codec.stored_answers import add_answers
from ethread.errors import StoreError
from ethread.rpc.context import DEFAULT_CONTEXT
from ethread.rpc.dispatcher import Dispatcher


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def show(label: str, samples: list[float], unit: str = "ms") -> None:
    scale = 1e3 if unit == "ms" else 1e6
    p50 = statistics.median(samples) * scale
    p99 = sorted(samples)[max(0, int(len(samples) * 0.99) - 1)] * scale
    print(f"  {label:<58} p50 {p50:9.3f} {unit}   p99 {p99:9.3f} {unit}   n={len(samples)}")


def bench_import(rpc: Path) -> ethread.MemoryBackend:
    print("import of the rpc-compat chain (45 blocks, every block executed and validated)")
    backend = ethread.MemoryBackend()

    def run() -> None:
        nonlocal backend
        backend = ethread.MemoryBackend()
        ethread.import_chain(backend, rpc / "genesis.json", rpc / "chain.rlp", verify_seals=False)

    samples = timed(run, 5)
    print(f"  best {min(samples):.3f} s   median {statistics.median(samples):.3f} s   (goal < 1 s)")
    return backend


EMITTER = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"


def bench_methods(backend: ethread.MemoryBackend) -> None:
    head = backend.block_by_hash(backend.canonical_hash(45))  # type: ignore[arg-type]
    assert head is not None
    tx = "0x" + head.transactions[0].hash.hex()
    requests = {
        "eth_blockNumber": [],
        "eth_getBlockByNumber (full)": ["0x2d", True],
        "eth_getBlockByHash": ["0x" + head.hash.hex(), False],
        "eth_getTransactionByHash": [tx],
        "eth_getTransactionByBlockNumberAndIndex": ["0x2d", "0x0"],
        "eth_getUncleByBlockNumberAndIndex": ["0x3", "0x0"],
        "eth_getBlockReceipts": ["0x2d"],
        "eth_getLogs (whole chain)": [{"fromBlock": "earliest", "toBlock": "latest"}],
        "eth_call": [{"to": "0x9344b07175800259691961298ca11c824e65032d"}, "latest"],
        "eth_call (state and block overrides)": [
            {"to": "0x9344b07175800259691961298ca11c824e65032d"}, "latest",
            {"0x9344b07175800259691961298ca11c824e65032d": {"balance": "0x1"}}, {"number": "0x99"}],
        "eth_estimateGas": [{"from": "0x0102030000000000000000000000000000000000", "input": "0xff01",
                             "to": "0x17e7eedce4ac02ef114a7ed9fe6e2f33feba1667"}],
        "eth_createAccessList": [{"from": "0x0c2c51a0990aee1d73c1228de158688341557508", "gas": "0xea60",
                                  "gasPrice": "0x5763d64", "input": "0x010203040506",
                                  "to": "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"}, "latest"],
        "eth_getProof": ["0x7dcd17433742f4c0ca53122ab541d0ba67fc27df", ["0x00"], "latest"],
        "eth_getTransactionReceipt": [tx],
        "eth_getBalance": [EMITTER, "latest"],
        "eth_getTransactionCount": [EMITTER, "latest"],
        "eth_getCode": [EMITTER, "latest"],
        "eth_getStorageAt": [EMITTER, "0x0", "latest"],
        "eth_getStorageValues (8 slots)": [{EMITTER: ["0x" + i.to_bytes(32, "big").hex() for i in range(8)]},
                                           "latest"],
        "eth_getBlockTransactionCountByNumber": ["0x2d"],
        "eth_feeHistory (46 blocks, 3 percentiles)": ["0x2e", "latest", [25, 50, 75]],
        "eth_gasPrice": [],
        "eth_blobBaseFee": [],
        "debug_getRawBlock": ["0x2d"],
        "debug_getRawReceipts": ["0x2d"],
    }
    cached = Dispatcher(backend)
    uncached = Dispatcher(backend, cache=ResponseCache(max_entries=0))
    print("in-process latency through ethread.handle's dispatcher")
    for label, params in requests.items():
        method = label.split()[0]
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        answer = json.loads(uncached.handle(body))  # type: ignore[arg-type]
        assert "result" in answer, (label, answer)
        repeat = 50 if method in ("eth_call", "eth_getProof", "eth_feeHistory", "eth_estimateGas",
                                  "eth_createAccessList") else 500
        show(f"{label}, computed each time", timed(lambda b=body: uncached.handle(b), repeat), "us")
        cached.handle(body)
        show(f"{label}, answer cached", timed(lambda b=body: cached.handle(b), 2000), "us")


def bench_logs(blocks: int, emitters: int) -> None:
    backend = ethread.MemoryBackend()
    start = time.perf_counter()
    history = synthetic_history(backend, blocks, emitters=emitters)
    built = time.perf_counter() - start
    address = "0x" + history.emitters[emitters // 2].hex()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": "earliest", "toBlock": "latest", "address": address}]}).encode()
    uncached = Dispatcher(backend, cache=ResponseCache(max_entries=0))
    found = len(json.loads(uncached.handle(body))["result"])  # type: ignore[arg-type]
    print(f"eth_getLogs by one address over {blocks:,} synthetic blocks "
          f"({found} matching logs; history built in {built:.1f} s)")
    show("whole range, one address, computed each time", timed(lambda: uncached.handle(body), 200))
    narrow = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_getLogs", "params": [
        {"fromBlock": hex(blocks - 1000), "toBlock": "latest", "address": address}]}).encode()
    show("last 1,000 blocks, one address, computed each time", timed(lambda: uncached.handle(narrow), 200))


def peer_rows(head: int, ping: str, tx_hashes: tuple[str, ...], count: int
              ) -> list[tuple[str, list[bytes]]]:
    """(label, request bodies) of the peer rows: ``count`` distinct blocks (or windows) each."""
    def body(method: str, params: list[object]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()

    blocks = range(2, min(head, 2 + count))
    windows = range(2, head - 99, 100)[:count]
    return [
        ("eth_getBlockReceipts", [body("eth_getBlockReceipts", [hex(n)]) for n in blocks]),
        ("eth_getLogs, 100-block window by address",
         [body("eth_getLogs", [{"fromBlock": hex(n), "toBlock": hex(n + 99), "address": ping}])
          for n in windows]),
        ("eth_getBlockByNumber (full)", [body("eth_getBlockByNumber", [hex(n), True]) for n in blocks]),
        ("eth_getTransactionByHash", [body("eth_getTransactionByHash", [h]) for h in tx_hashes[:count]]),
    ]


def peer_backends(engine: str, chain: PeerChain, folder: Path) -> Callable[[], Any] | None:
    """What opens a backend of ``engine`` holding the peer chain afresh (its caches empty), the
    chain imported first where needed; None when the engine's extra is not installed."""
    if engine == "memory":
        memory = ethread.MemoryBackend()
        ethread.import_chain(memory, chain.genesis, chain.blocks, verify_seals=False)
        return lambda: memory  # its history is decoded at import: nothing more to empty
    path = folder / f"store-{engine}"
    try:
        if not path.exists():
            started = time.perf_counter()
            store = open_store(path, engine=cast(Engine, engine), create=True)
            ethread.import_chain(store, chain.genesis, chain.blocks, verify_seals=False)
            store.close()
            print(f"  ({engine} store imported in {time.perf_counter() - started:.0f} s)")
    except StoreError as exc:
        print(f"  {engine}: skipped ({exc})")
        return None
    return lambda: open_store(path)


def bench_peer_reads(blocks: int, folder: Path, engines: list[str], served: int) -> None:
    chain = build(folder / "chain", blocks)
    print(f"history reads of the peer chain ({chain.head} blocks, one log each), µs a call, "
          "median; cold: never read by this backend and dispatcher, warm: read once before; "
          "no answer cache")
    for engine in engines:
        make = peer_backends(engine, chain, folder)
        if make is None:
            continue
        for label, bodies in peer_rows(chain.head, chain.ping, chain.tx_hashes, 500):
            backend = make()
            dispatcher = Dispatcher(backend, cache=ResponseCache(max_entries=0))
            cold = timed_each(dispatcher.handle, bodies)
            warm = timed_each(dispatcher.handle, bodies)
            print(f"  {engine:<8} {label:<42} cold {statistics.median(cold) * 1e6:8.1f} µs "
                  f"(best {min(cold) * 1e6:7.1f})   warm {statistics.median(warm) * 1e6:7.1f} µs "
                  f"(best {min(warm) * 1e6:7.1f})   n={len(bodies)}")
            if engine != "memory":
                backend.close()
        if engine != "memory":
            for method, plain, kept in cold_receipts_cpu(make, chain):
                print(f"  {engine:<8} {method + ', cold, CPU a request':<42} plain path "
                      f"{plain:6.1f} µs   kept answer {kept:6.1f} µs   (best of 3, "
                      f"{min(chain.head, COLD_BLOCKS)} blocks never read)")
        backend = make()
        first, rest, floor = served_receipts(backend, chain.head, served)
        print(f"  {engine:<8} {'eth_getBlockReceipts, random, answer cache on':<42} first quarter "
              f"{first:6.1f} µs   rest {rest:6.1f} µs   eth_chainId {floor:5.1f} µs CPU a request   "
              f"n={served}")
        if engine != "memory":
            backend.close()


COLD_BLOCKS = 2_000
"""Blocks the cold receipts row reads, each once, through a store opened afresh."""


def cold_receipts_cpu(make: Callable[[], Any], chain: PeerChain
                      ) -> list[tuple[str, float, float]]:
    """CPU µs per eth_getBlockReceipts (by number) and eth_getTransactionReceipt (of each
    block's transaction) of blocks the process has never read (a store opened afresh, a
    dispatcher with its default caches, code warmed on other blocks first; distinct blocks in
    random order, bodies with ids that differ), on the plain path (the block's records decoded
    and encoded: ``stored_answers`` off) and from the answer the store keeps beside the
    block; the best of three rounds each, taking turns."""
    backend = make()
    if add_answers(backend):  # a store kept from a run before the importer kept answers
        print("  (the kept store lacked the answers the importer now keeps: added them)")
    backend.close()
    numbers = list(range(2, chain.head + 1))  # (block 1 deploys Ping: its transaction is not listed)
    random.Random(11).shuffle(numbers)
    cold, warm = numbers[:COLD_BLOCKS], numbers[COLD_BLOCKS:][:500] or numbers[:50]

    def by_number(n: int, number: int) -> bytes:
        return (b'{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockReceipts","params":["%s"]}'
                % (n, hex(number).encode()))

    def by_transaction(n: int, number: int) -> bytes:
        return (b'{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt",'
                b'"params":["%s"]}' % (n, chain.tx_hashes[number - 2].encode()))

    rows = []
    for method, body in (("eth_getBlockReceipts", by_number),
                         ("eth_getTransactionReceipt", by_transaction)):
        best: dict[bool, float] = {}
        for _ in range(3):
            for stored in (False, True):
                backend = make()
                dispatcher = Dispatcher(backend, replace(DEFAULT_CONTEXT, stored_answers=stored))
                for n, number in enumerate(warm):
                    dispatcher.handle(body(n, number))
                bodies = [body(100_000 + n, number) for n, number in enumerate(cold)]
                started = time.process_time()
                for request in bodies:
                    dispatcher.handle(request)
                spent = (time.process_time() - started) / len(bodies) * 1e6
                best[stored] = min(best.get(stored, spent), spent)
                backend.close()
        rows.append((method, best[False], best[True]))
    return rows


def served_receipts(backend: Any, head: int, count: int) -> tuple[float, float, float]:
    """CPU µs per request of ``count`` random-block eth_getBlockReceipts through a fresh
    dispatcher with its default caches (first quarter, rest), and of eth_chainId after them."""
    rng = random.Random(7)
    bodies = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "eth_getBlockReceipts",
                          "params": [hex(rng.randint(1, head))]}).encode() for n in range(count)]
    dispatcher = Dispatcher(backend)
    quarter = count // 4
    started = time.process_time()
    for body in bodies[:quarter]:
        dispatcher.handle(body)
    middle = time.process_time()
    for body in bodies[quarter:]:
        dispatcher.handle(body)
    done = time.process_time()
    chain_id = b'{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
    for _ in range(quarter):
        dispatcher.handle(chain_id)
    floor = time.process_time() - done
    return ((middle - started) / quarter * 1e6, (done - middle) / (count - quarter) * 1e6,
            floor / quarter * 1e6)


def timed_each(fn: Callable[[bytes], object], bodies: list[bytes]) -> list[float]:
    """Seconds each call of ``fn`` took, one body each; every answer must carry a result."""
    samples = []
    for body in bodies:
        start = time.perf_counter()
        answer = fn(body)
        samples.append(time.perf_counter() - start)
        assert isinstance(answer, bytes) and b'"result"' in answer, answer
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conformance", type=Path, default=conformance())
    parser.add_argument("--skip-million", action="store_true", help="only 100,000 blocks for eth_getLogs")
    parser.add_argument("--peer-blocks", type=int, default=1001,
                        help="blocks of the peer chain (bench_vs_anvil uses 5001)")
    parser.add_argument("--peer-dir", type=Path, default=None,
                        help="where the peer chain and its stores are kept between runs")
    parser.add_argument("--peer-engines", default="memory,leveldb,lmdb")
    parser.add_argument("--only-peer", action="store_true", help="only the peer rows")
    parser.add_argument("--served", type=int, default=30_000,
                        help="requests of the in-process receipts row with the answer cache on")
    report.run(parser, __file__, run_benchmark)


def run_benchmark(args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        folder = args.peer_dir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ethread-core-")))
        bench_peer_reads(args.peer_blocks, folder, args.peer_engines.split(","), args.served)
    if args.only_peer:
        return
    backend = bench_import(args.conformance / "rpc-compat")
    bench_methods(backend)
    # The same number of matches (800) at both sizes: only the history grows.
    bench_logs(100_000, 1_000)
    if not args.skip_million:
        bench_logs(1_000_000, 10_000)


if __name__ == "__main__":
    main()
