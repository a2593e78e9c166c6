"""The forked node's chain at and below the fork block, answered as the node answers (as anvil
does), each answer checked to belong to the fork's chain and kept in the fork's cache.

The hash at every height is learnt by walking parent hashes down from the fork block; an answer
naming another block there (a reorganisation, a proxy mixing nodes) is refused. Cache keys: ``r``
+ method and parameters (the answer as JSON), ``v`` + number (hash and parent hash).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ...models import Hash32
from .remote import RemoteError
from .source import ForkSource, _header_key, _hex_bytes, _hex_int, _kept, header_from_json

LOG_SPAN = 2000
"""Blocks one eth_getLogs to the node covers at most."""
WALK_CHUNK = 1024
"""Headers asked for in one step of a walk down the chain."""


class ForkHistory:
    """Blocks at and below the fork block, read from the node that was forked."""

    def __init__(self, source: ForkSource) -> None:
        self.source = source
        point = source.point
        self.fork_number = point.number
        self._prefix = point.chain_id.to_bytes(8, "big") + point.number.to_bytes(8, "big")
        self._hashes: dict[int, Hash32] = {point.number: point.header.hash}
        self._parent: Hash32 = point.header.parent_hash
        """The parent hash of the lowest block learnt: the next one down must hash to it."""
        self._lowest = point.number
        self._lock = threading.Lock()

    def canonical_hash(self, number: int) -> Hash32 | None:
        """The hash of the fork's chain at ``number`` (None above the fork block)."""
        if not 0 <= number <= self.fork_number:
            return None
        with self._lock:
            while self._lowest > number:
                self._walk(max(number, self._lowest - WALK_CHUNK))
            return self._hashes[number]

    def _walk(self, down_to: int) -> None:
        """Learn the hashes from below the lowest known one down to ``down_to``."""
        numbers = list(range(self._lowest - 1, down_to - 1, -1))
        cache = self.source.cache
        learnt = {n: cache.get(self._prefix + b"v" + n.to_bytes(8, "big")) for n in numbers}
        headers = {n: cache.get(_header_key(self.source.point.chain_id, n)) for n in numbers
                   if learnt[n] is None}
        missing = [n for n, kept in headers.items() if kept is None]
        if missing:
            fetched = self.source.remote.batch(
                [("eth_getBlockByNumber", [hex(n), False]) for n in missing])
            self.source._count(len(missing))
            for n, block in zip(missing, fetched, strict=True):
                if block is None:
                    raise RemoteError(f"the forked node does not hold block {n}, below the "
                                      f"fork block {self.fork_number}")
                headers[n] = orjson.dumps(block)
        fresh: dict[bytes, bytes] = {}
        for n in numbers:
            kept = learnt[n]
            if kept is not None:
                block_hash, parent = kept[:32], kept[32:]
            else:
                header = header_from_json(orjson.loads(headers[n] or b"null"))
                if header.number != n:
                    raise RemoteError(f"the forked node answered block {header.number} for "
                                      f"block {n}")
                block_hash, parent = header.hash, header.parent_hash
                fresh[self._prefix + b"v" + n.to_bytes(8, "big")] = block_hash + parent
            if block_hash != self._parent:
                raise RemoteError(f"the forked node's block {n} (0x{block_hash.hex()}) is not "
                                  f"in the chain of the fork block {self.fork_number}: its child "
                                  f"names parent 0x{self._parent.hex()}")
            self._hashes[n] = block_hash
            self._parent = parent
            self._lowest = n
        cache.put_many(fresh)

    def _check_block_hash(self, number: int, block_hash: bytes, what: str) -> None:
        if self.canonical_hash(number) != block_hash:
            raise RemoteError(f"the forked node answered {what} of block {number} "
                              f"(0x{block_hash.hex()}), which is not in the chain of the fork "
                              f"block {self.fork_number}")

    def _key(self, method: str, params: Sequence[Any]) -> bytes:
        return self._prefix + b"r" + orjson.dumps([method, list(params)])

    def _ask(self, method: str, params: Sequence[Any], check: Callable[[Any], Any]) -> Any:
        """The node's answer to one call as ``check`` passes it; kept once checked."""
        key = self._key(method, params)
        kept = self.source.cache.get(key)
        if kept is not None:
            return orjson.loads(kept)
        answer = check(self.source.remote.call(method, params))
        self.source._count(1)
        self.source.cache.put_many({key: orjson.dumps(answer)})
        return answer

    def _in_chain(self, found: Any, what: str) -> bool:
        """Whether an object with ``blockNumber`` and ``blockHash`` is in the fork's chain at or
        below the fork block; refused when its block is not the chain's."""
        if not isinstance(found, dict) or found.get("blockNumber") is None:
            return False
        number = _hex_int(found["blockNumber"], "block number")
        if number > self.fork_number:
            return False
        self._check_block_hash(number, _hex_bytes(found.get("blockHash"), "block hash"), what)
        return True

    def block(self, number: int, full: bool) -> Any:
        """eth_getBlockByNumber of a block at or below the fork block."""
        def check(block: Any) -> Any:
            if block is None:
                raise RemoteError(f"the forked node does not hold block {number}")
            header = header_from_json(block)
            if header.number != number:
                raise RemoteError(f"the forked node answered block {header.number} for "
                                  f"block {number}")
            self._check_block_hash(number, header.hash, "the block")
            return block

        return self._ask("eth_getBlockByNumber", [hex(number), full], check)

    def number_of(self, block_hash: Hash32) -> int | None:
        """The height of the chain's block with this hash at or below the fork block, or None."""
        header = self.block_by_hash(block_hash, False)
        return None if header is None else _hex_int(header["number"], "block number")

    def block_by_hash(self, block_hash: Hash32, full: bool) -> Any:
        """eth_getBlockByHash: the node's block when it is the chain's at or below the fork block."""
        def check(block: Any) -> Any:
            if block is None:
                return None
            header = header_from_json(block)
            if header.hash != block_hash or header.number > self.fork_number:
                return None
            return block if self.canonical_hash(header.number) == header.hash else None

        return self._ask("eth_getBlockByHash", ["0x" + block_hash.hex(), full], check)

    def block_receipts(self, number: int) -> Any:
        """eth_getBlockReceipts of a block at or below the fork block."""
        def check(receipts: Any) -> Any:
            if not isinstance(receipts, list):
                raise RemoteError(f"the forked node does not hold the receipts of block {number}")
            for receipt in receipts:
                got = _hex_bytes(receipt.get("blockHash") if isinstance(receipt, dict) else None,
                                 "block hash")
                self._check_block_hash(number, got, "receipts")
            return receipts

        return self._ask("eth_getBlockReceipts", [hex(number)], check)

    def uncle(self, number: int, index: int) -> Any:
        """eth_getUncleByBlockNumberAndIndex, the uncle checked against the block's list."""
        uncles = self.block(number, False).get("uncles") or []

        def check(uncle: Any) -> Any:
            if uncle is None:
                return None
            header = header_from_json(uncle)
            if index >= len(uncles) or _hex_bytes(uncles[index], "uncle hash") != header.hash:
                raise RemoteError(f"the forked node's uncle {index} of block {number} is not "
                                  "the one the block names")
            return uncle

        if index >= len(uncles):
            return None
        return self._ask("eth_getUncleByBlockNumberAndIndex", [hex(number), hex(index)], check)

    def transaction(self, tx_hash: Hash32) -> Any:
        """eth_getTransactionByHash: the node's answer when it is in the fork's chain, else None."""
        return self._ask("eth_getTransactionByHash", ["0x" + tx_hash.hex()],
                         lambda tx: tx if self._in_chain(tx, "a transaction") else None)

    def receipt(self, tx_hash: Hash32) -> Any:
        """eth_getTransactionReceipt, as :meth:`transaction`."""
        return self._ask("eth_getTransactionReceipt", ["0x" + tx_hash.hex()],
                         lambda receipt: receipt if self._in_chain(receipt, "a receipt") else None)

    def raw_transaction(self, tx_hash: Hash32) -> Any:
        """eth_getRawTransactionByHash ("0x" when the fork's chain does not hold it)."""
        if self.transaction(tx_hash) is None:
            return "0x"
        return self._ask("eth_getRawTransactionByHash", ["0x" + tx_hash.hex()],
                         lambda raw: raw if isinstance(raw, str) else "0x")

    def logs(self, begin: int, end: int, selection: dict[str, Any]) -> list[Any]:
        """eth_getLogs over blocks ``begin`` to ``end`` (at most the fork block), asked in spans of
        :data:`LOG_SPAN` blocks on fixed boundaries (so that a span asked again is cached)."""
        spans = [(max(begin, first), min(end, first + LOG_SPAN - 1))
                 for first in range(begin - begin % LOG_SPAN, end + 1, LOG_SPAN)]
        requests = [{"fromBlock": hex(low), "toBlock": hex(high), **selection}
                    for low, high in spans]
        keys = {i: self._key("eth_getLogs", [request]) for i, request in enumerate(requests)}
        kept, wanted = _kept(self.source.cache, keys)
        answers = self.source.remote.batch([("eth_getLogs", [requests[i]]) for i in wanted])
        self.source._count(len(wanted))
        fresh = {i: self._checked_logs(answer, *spans[i])
                 for i, answer in zip(wanted, answers, strict=True)}
        self.source.cache.put_many({keys[i]: orjson.dumps(logs) for i, logs in fresh.items()})
        return [log for i in range(len(spans))
                for log in (fresh[i] if i in fresh else orjson.loads(kept[i]))]

    def _checked_logs(self, logs: Any, begin: int, end: int) -> list[Any]:
        if not isinstance(logs, list):
            raise RemoteError("the forked node's eth_getLogs answer is not a list")
        for log in logs:
            number = _hex_int(log.get("blockNumber") if isinstance(log, dict) else None,
                              "block number")
            if not begin <= number <= end:
                raise RemoteError(f"the forked node answered a log of block {number}, "
                                  f"outside {begin} to {end}")
            self._check_block_hash(number, _hex_bytes(log.get("blockHash"), "block hash"), "a log")
        return logs

    def block_logs(self, block_hash: Hash32, selection: dict[str, Any]) -> list[Any]:
        """eth_getLogs of one block of the fork's chain, by its hash."""
        request = {"blockHash": "0x" + block_hash.hex(), **selection}

        def check(logs: Any) -> Any:
            if not isinstance(logs, list):
                raise RemoteError("the forked node's eth_getLogs answer is not a list")
            for log in logs:
                if _hex_bytes(log.get("blockHash") if isinstance(log, dict) else None,
                              "block hash") != block_hash:
                    raise RemoteError("the forked node answered a log of another block than "
                                      f"0x{block_hash.hex()}")
            return logs

        return self._ask("eth_getLogs", [request], check)  # type: ignore[no-any-return]


__all__ = ["ForkHistory"]
