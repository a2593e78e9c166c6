"""A dispatcher's cache of traces of mined transactions. A trace is a pure function of the
block's hash, the transaction and the configuration, so answers are kept, encoded, under
(method, block hash, parameters as sent), bounded by :data:`MAX_ENTRIES` and :data:`MAX_BYTES`
(an answer over :data:`MAX_ENTRY_BYTES` is not kept).

A server may also record traces ahead of requests (``ethread serve --record-traces BLOCKS``):
the opcode logger's and callTracer's default answers for the latest blocks, never evicted,
answered (``timeout`` aside) while the transaction is still in the block it was recorded in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..lru import LRU

if TYPE_CHECKING:
    from ..methods.tracing import ReplayStates

MAX_ENTRIES = 4096
MAX_BYTES = 64 * 1024 * 1024
MAX_ENTRY_BYTES = 4 * 1024 * 1024

Key = tuple[str, bytes, bytes]

RECORDED_METHOD = "debug_traceTransaction"
RECORDED_CONFIGS: tuple[dict[str, Any], ...] = ({}, {"tracer": "callTracer"})
"""The configurations recorded: the opcode logger's defaults, and callTracer's."""


class TraceCache:
    """Encoded answers of the methods whose rows keep their traces, and the blocks replayed recently."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self._answers: LRU[Key, bytes] = LRU(max_entries, max_bytes=max_bytes, weigh=len)
        self._replays: ReplayStates | None = None
        self._recorded: dict[tuple[bytes, bytes], tuple[bytes, bytes]] = {}
        """(transaction hash, configuration) -> (the block it was in, the encoded answer)."""
        self._recorded_blocks: dict[int, list[tuple[bytes, bytes]]] = {}
        """Block number -> the keys recorded for its transactions (to forget a block)."""

    @property
    def recording(self) -> bool:
        """Whether any trace was recorded ahead of requests."""
        return bool(self._recorded)

    def record(self, tx_hash: bytes, config: dict[str, Any], block_hash: bytes, number: int,
               encoded: bytes) -> None:
        """Keep ``encoded``, the recorded answer for ``tx_hash`` (in block ``number``) with ``config``."""
        key = (tx_hash, _config_key(config))
        self._recorded[key] = (block_hash, encoded)
        self._recorded_blocks.setdefault(number, []).append(key)

    def forget_below(self, number: int) -> None:
        """Drop what was recorded for blocks below ``number`` (a window sliding on)."""
        for old in [n for n in self._recorded_blocks if n < number]:
            for key in self._recorded_blocks.pop(old):
                self._recorded.pop(key, None)

    def recorded(self, backend: Any, params: list[Any]) -> bytes | None:
        """The recorded answer to ``params`` while the transaction is still in its block, else None."""
        if not self._recorded or len(params) > 2:
            return None
        tx_hash = _tx_hash(params)
        config = params[1] if len(params) == 2 else {}
        if tx_hash is None or not isinstance(config, dict):
            return None
        if "timeout" in config:
            config = {name: value for name, value in config.items() if name != "timeout"}
        try:
            found = self._recorded.get((tx_hash, _config_key(config)))
        except TypeError:  # (a value orjson cannot write: nothing recorded under it)
            return None
        if found is None:
            return None
        location = backend.transaction_location(tx_hash)
        return found[1] if location is not None and bytes(location[0]) == found[0] else None

    @property
    def replays(self) -> ReplayStates:
        """The dispatcher's kept replays (made on the first trace, loading the tracing modules)."""
        replays = self._replays
        if replays is None:
            from ..methods.tracing import ReplayStates

            replays = self._replays = ReplayStates()
        return replays

    def __len__(self) -> int:
        return len(self._answers)

    def key(self, backend: Any, method: str, params: list[Any]) -> Key | None:
        """Where an answer of ``method`` is kept: None unless the chain holds the transaction named."""
        tx_hash = _tx_hash(params)
        if tx_hash is None:
            return None
        location = backend.transaction_location(tx_hash)
        if location is None:
            return None
        return method, bytes(location[0]), orjson.dumps(params)

    def answer(self, key: Key | None, compute: Callable[[], Any]) -> Any:
        """The kept answer at ``key``, or ``compute()``'s, kept when small enough (errors are not)."""
        if key is None:
            return compute()
        found = self._answers.get(key)
        if found is not None:
            return orjson.Fragment(found)  # (written into the answer as it is)
        value = compute()
        encoded = orjson.dumps(value)
        if len(encoded) <= MAX_ENTRY_BYTES:
            self._answers.put(key, encoded)
        return orjson.Fragment(encoded)


def _config_key(config: dict[str, Any]) -> bytes:
    """A configuration as bytes, the same whatever the order of its fields."""
    return orjson.dumps(config, option=orjson.OPT_SORT_KEYS)


def _tx_hash(params: list[Any]) -> bytes | None:
    """The transaction hash a trace method's first parameter names, or None."""
    text = params[0] if params else None
    if not isinstance(text, str) or len(text) != 66 or not text.startswith("0x"):
        return None
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        return None
