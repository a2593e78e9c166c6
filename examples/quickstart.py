"""Build a small chain in memory, then read it the way a test suite or a notebook would.

    python examples/quickstart.py
"""

from __future__ import annotations

import json

import ethread
from ethread.devchain.demo import demo_chain
from ethread.models import LogFilter


def main() -> None:
    backend = ethread.MemoryBackend()
    demo = demo_chain(backend)  # 50 blocks: every transaction type, logs, uncles, withdrawals

    head = ethread.methods.get_block_by_number(backend, "latest")
    assert head is not None
    print(f"head: block {head.number}, {len(head.transactions)} transactions, hash 0x{head.hash.hex()}")

    logs = ethread.methods.get_logs(backend, LogFilter(from_block=0, to_block="latest",
                                                       addresses=(demo.log_emitter,)))
    print(f"{len(logs)} logs from the log emitter, first in block {logs[0].block_number}")

    proof = ethread.methods.get_proof(backend, demo.storage, [b"\x00"], "latest")
    ethread.verify_account_proof(head.header.state_root, proof)
    print(f"storage slot 0 of the storage contract: {proof.storage_proof[0].value} (proof verified)")

    # The same through the JSON-RPC codec, as a server would answer it.
    answer = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockReceipts","params":["latest"]}')
    receipts = json.loads(answer or b"null")["result"]
    print(f"eth_getBlockReceipts(latest): {len(receipts)} receipts, statuses {[r['status'] for r in receipts]}")


if __name__ == "__main__":
    main()
