"""Embed ethread over your own storage: implement the small protocols of ``ethread.backend``
for what you hold, and the methods and the codec work unchanged.

This one serves a read-only view of blocks kept in plain dictionaries (say, loaded from your
own database) and holds no state, so eth_call and eth_getProof answer a clear error.

    python examples/custom_backend.py
"""

from __future__ import annotations

import json
from typing import Any

import ethread
from ethread.backend import LogQuery, Pointer
from ethread.devchain.demo import demo_chain
from ethread.errors import StateUnavailable
from ethread.models import Block, Hash32, Header, Log, Receipt


class DictBackend:
    """Blocks and receipts in dictionaries; logs found by a plain scan (fine for small data)."""

    def __init__(self, blocks: list[Block], receipts: dict[Hash32, tuple[Receipt, ...]]) -> None:
        self.blocks = {b.hash: b for b in blocks}
        self.by_number = [b.hash for b in sorted(blocks, key=lambda b: b.number)]
        self.receipts_by_block = receipts
        self.tx_index = {t.hash: (b.hash, t.index) for b in blocks for t in b.transactions}

    def header_by_hash(self, block_hash: Hash32) -> Header | None:
        block = self.blocks.get(block_hash)
        return block.header if block else None

    def canonical_hash(self, number: int) -> Hash32 | None:
        return self.by_number[number] if 0 <= number < len(self.by_number) else None

    def block_by_hash(self, block_hash: Hash32) -> Block | None:
        return self.blocks.get(block_hash)

    def transaction_location(self, tx_hash: Hash32) -> tuple[Hash32, int] | None:
        return self.tx_index.get(tx_hash)

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        return self.receipts_by_block.get(block_hash)

    def logs(self, query: LogQuery) -> list[Log]:
        out: list[Log] = []
        for number in range(query.from_number, query.to_number + 1):
            query.deadline.check()
            for receipt in self.receipts_by_block[self.by_number[number]]:
                out.extend(log for log in receipt.logs if query.matches(log.address, log.topics))
        return out

    def pointer(self, name: Pointer) -> int | None:
        return 0 if name == "earliest" else len(self.by_number) - 1

    def evm_database(self) -> Any:
        raise StateUnavailable("this backend holds history only")

    def chain_config(self) -> None:
        return None

    def generation(self) -> int:
        return 0  # never changes: a fixed archive


def main() -> None:
    source = ethread.MemoryBackend()
    demo_chain(source)
    blocks = [source.block_by_hash(source.canonical_hash(n)) for n in range(source.pointer("latest") + 1)]  # type: ignore[arg-type, operator]
    mine = DictBackend([b for b in blocks if b], {b.hash: source.receipts(b.hash) or () for b in blocks if b})

    for body in (
        b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}',
        b'{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x3"}]}',
        b'{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001"}]}',
    ):
        answer = json.loads(ethread.handle(mine, body) or b"null")
        summary = answer.get("error") or (answer["result"] if isinstance(answer["result"], str)
                                          else f"{len(answer['result'])} logs")
        print(json.loads(body)["method"], "->", summary)


if __name__ == "__main__":
    main()
