"""The servers a load runs against, each a :class:`Target` (a process and the URL path that
answers JSON-RPC): anvil with a peer chain replayed into it, ``ethread serve`` (any flags, any
number of workers, optionally through another ``python -c`` program), and the bare ASGI app of
:mod:`benchlib.bare`."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import BENCHMARKS
from benchlib.anvil import Anvil
from benchlib.chain_files import ChainFiles
from benchlib.peer_chain import PeerChain
from benchlib.processes import free_port, stop_process
from benchlib.serve import KEY, MAIN, ethread_command

CHAIN_ID = b'{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'


@dataclass
class Target:
    name: str
    port: int
    path: str
    process: subprocess.Popen[bytes]
    scratch: Path | None = None
    """A folder of the process's own, removed when it stops."""

    def post(self, body: bytes, timeout: float = 60) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("POST", self.path, body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read())
        finally:
            conn.close()

    def stop(self) -> None:
        stop_process(self.process, signal.SIGINT, 30)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


@contextlib.contextmanager
def running(start: Callable[[], Target]) -> Iterator[Target]:
    target = start()
    try:
        yield target
    finally:
        target.stop()


def wait_until_up(target: Target, timeout: float, workers: int = 1) -> None:
    """Until ``target`` answers eth_chainId (and, with several workers, its /health counts
    them all up); SystemExit, the target stopped, when it exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if target.process.poll() is not None:
            raise SystemExit(f"{target.name} exited with {target.process.returncode}")
        try:
            status, answer = target.post(CHAIN_ID, timeout=5)
            if status == 200 and "result" in answer:
                if workers <= 1:
                    return
                conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=5)
                conn.request("GET", "/health")
                report = json.loads(conn.getresponse().read())
                conn.close()
                if report.get("workers", {}).get("up") == workers:
                    return
        except (OSError, ValueError, http.client.HTTPException):
            pass
        time.sleep(0.2)
    target.stop()
    raise SystemExit(f"{target.name} did not come up within {timeout:.0f} s")


# -- anvil -----------------------------------------------------------------------------------


def start_anvil(chain: ChainFiles, *, name: str = "anvil", flags: tuple[str, ...] = ()) -> Target:
    """anvil 1.7.1 (from tests/js) on a free port with ``chain`` replayed into it; ``flags``
    added to its command line."""
    anvil = Anvil("--init", str(chain.genesis), "--no-mining", "--order", "fifo", "--hardfork",
                  "prague", "--accounts", "0", "--disable-default-create2-deployer", *flags)
    target = Target(name, anvil.port, "/", anvil.process, anvil.home)
    try:
        wait_until_up(target, 30)
        replay(target, chain)
    except BaseException:
        target.stop()
        raise
    return target


def replay(target: Target, chain: ChainFiles) -> None:
    """The chain's blocks on anvil: each block's signed transactions at its timestamp."""
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=60)

    def call(method: str, *params: Any) -> Any:
        conn.request("POST", "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                             "params": list(params)}),
                     {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        if "error" in answer:
            raise SystemExit(f"anvil refused {method}: {answer['error']}")
        return answer["result"]

    started = time.perf_counter()
    call("anvil_setNextBlockBaseFeePerGas", hex(chain.block1_base_fee))
    for timestamp, txs in chain.raw_blocks:
        call("evm_setNextBlockTimestamp", timestamp)
        for raw in txs:
            call("eth_sendRawTransaction", raw)
        call("evm_mine")
    head = int(call("eth_blockNumber"), 16)
    conn.close()
    if head != chain.head:
        raise SystemExit(f"anvil's head is {head} after the replay, not {chain.head}")
    print(f"anvil: {head} blocks replayed in {time.perf_counter() - started:.1f} s", flush=True)


# -- ethread ---------------------------------------------------------------------------------


def start_ethread(name: str, chain_args: list[str], workdir: Path, *, workers: int = 1,
                  access_log: bool = False, timeout: float = 600,
                  env: dict[str, str] | None = None, code: str = MAIN,
                  announce: bool = True, ledger_suffix: str = ".ledger") -> Target:
    """``ethread serve CHAIN_ARGS`` on a free port with ``workers`` processes, key
    :data:`~benchlib.serve.KEY` with credits for any run, a ``*.ledger`` ledger of its own in
    ``workdir`` (its stderr there too, printed if it fails to come up); ``code``: the
    ``python -c`` program that is the ``ethread`` command (another one patches ethread first);
    ``announce``: print how long it took to come up; ``ledger_suffix``: ``.sqlite3`` for a
    SQLite ledger instead of the mapped file."""
    port = free_port()
    ledger = workdir / f"credits-{name}{ledger_suffix}"
    for leftover in (ledger, ledger.with_name(ledger.name + "-wal"),
                     ledger.with_name(ledger.name + "-shm")):
        leftover.unlink(missing_ok=True)
    command = [sys.executable, "-c", code,
               "serve", *chain_args, "--port", str(port), "--api-key", KEY,
               "--daily-credits", str(10**15), "--ledger", str(ledger), "--workers", str(workers),
               "--log-level", "warning"]
    if not access_log:
        command.append("--no-access-log")
    errors = workdir / f"serve-{name}.stderr"  # the import's progress bar, warnings, failures
    with errors.open("wb") as sink:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink,
                                   env={**os.environ, **(env or {})})
    target = Target(name, port, f"/v3/{KEY}", process)
    started = time.perf_counter()
    try:
        wait_until_up(target, timeout, workers)
    except SystemExit:
        print(errors.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    if announce:
        print(f"{name}: up in {time.perf_counter() - started:.1f} s", flush=True)
    return target


def ensure_store(chain: PeerChain, workdir: Path, engine: str) -> Path:
    """The chain imported into a store of ``engine`` in ``workdir`` (kept for later runs, and
    brought up to date by ``ethread upgrade`` when reused)."""
    store = workdir / f"store-{engine}"
    done = store / ".imported"
    if done.exists() and done.read_text() == str(chain.head):
        # a store kept from an older ethread gets what this one keeps beside each block (a
        # few seconds when it lacks them, nothing to do when it has them)
        subprocess.run(ethread_command("upgrade", "--db", str(store)), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return store
    if store.exists():
        shutil.rmtree(store)
    started = time.perf_counter()
    subprocess.run(ethread_command("import", "--engine", engine, "--db", str(store), "--genesis",
                                   str(chain.genesis), "--blocks", str(chain.blocks),
                                   "--no-verify-seals"),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done.write_text(str(chain.head))
    print(f"store: {engine} import of {chain.head} blocks in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return store


# -- the floor -------------------------------------------------------------------------------


def start_bare(workers: int) -> Target:
    """:mod:`benchlib.bare` with ``workers`` processes on a free port."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "benchlib.bare", str(port), str(workers)],
                               cwd=BENCHMARKS, stdout=subprocess.DEVNULL)
    target = Target("bare ASGI", port, "/", process)
    wait_until_up(target, 30)
    return target
