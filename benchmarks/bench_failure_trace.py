"""What explaining a failure costs inside a test: a test's failing transaction and failing call
through ethread's web3 provider on the pytest plugin's kind of chain (Prague, automine), with
the provider's explainer (a call tree traced for each failure, as the plugin reports it) and
without it (``provider.explainer = None``), in one run: milliseconds per failing operation,
and the share of it the explanation takes.

    .venv/bin/python benchmarks/bench_failure_trace.py [--rounds 200] [--blocks 200]

``--blocks``: blocks mined before (a session's earlier tests leave a chain behind them); each
failing transaction is in a block of its own (automine), so its trace replays nothing before it.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any

from benchlib import report
from web3 import Web3
from web3.exceptions import ContractLogicError

from ethread.backends.memory import MemoryBackend
from ethread.devchain import DevChain, contracts
from ethread.devchain.genesis import PRAGUE_FORKS
from ethread.web3 import EthreadProvider


def _timed(fn: Any, n: int) -> float:
    """CPU seconds of ``fn()`` (all of it runs in this process; the machine is shared)."""
    started = time.process_time()
    with contextlib.suppress(ContractLogicError):
        fn(n)
    return time.process_time() - started


def main() -> None:
    parser = report.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=200)
    report.add_options(parser, __file__)
    args = parser.parse_args()
    with report.recorded(args):
        chain = DevChain(MemoryBackend(), forks=PRAGUE_FORKS, accounts=3, automine=False)
        reverter = chain.deploy_runtime(chain.accounts[0], contracts.REVERTER)
        chain.mine()
        for n in range(args.blocks):
            chain.send(chain.accounts[1], chain.accounts[2].address, value=n + 1)
            chain.mine()
        chain.automine = True
        provider = EthreadProvider(chain)
        w3 = Web3(provider)
        sender = "0x" + chain.accounts[1].address.hex()
        to = Web3.to_checksum_address("0x" + reverter.hex())
        def failing(n: int) -> Any:  # (distinct calldata: no answer is reused)
            return {"from": Web3.to_checksum_address(sender), "to": to,
                    "data": "0x01" + n.to_bytes(4, "big").hex(), "gas": 100_000}

        explainer = provider.explainer
        rows = {}
        for label, operation in (
                ("transaction (status 0)", lambda n: w3.eth.send_transaction(failing(n))),
                ("eth_call (reverts)", lambda n: w3.eth.call(failing(n)))):
            times: dict[str, list[float]] = {"with": [], "without": []}
            for n in range(args.rounds):
                for mode in (("with", "without") if n % 2 else ("without", "with")):
                    provider.explainer = explainer if mode == "with" else None
                    times[mode].append(_timed(operation, 2 * n + (mode == "with")))
            rows[label] = times
        provider.explainer = explainer
        print(f"chain of {chain.head.number} blocks; {args.rounds} rounds each; load average "
              f"{report.load_average()}")
        print(f"{'CPU ms per failing operation (median)':<40}{'without':>10}{'with':>10}"
              f"{'explaining':>12}")
        for label, times in rows.items():
            bare = statistics.median(times["without"]) * 1e3
            explained = statistics.median(times["with"]) * 1e3
            print(f"{label:<40}{bare:>10.2f}{explained:>10.2f}{explained - bare:>9.2f} ms",
                  flush=True)
        assert explainer is not None and explainer.failures, "no failure was explained"


if __name__ == "__main__":
    main()
