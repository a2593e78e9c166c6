"""ethread: the read side of an Ethereum node's JSON-RPC interface, over pluggable backends.

    import ethread
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, "genesis.json", "chain.rlp", verify_seals=False)
    block = ethread.methods.get_block_by_number(backend, "latest")
    raw = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')

Each name below is imported the first time it is read (PEP 562, :data:`_LAZY`), so
``import ethread`` loads none of py-evm, the codec, the storage engines or pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from . import frames, methods
    from .backend import Backend, WritableBackend
    from .backends.era import EraBackend
    from .backends.leveldb import LevelDBBackend
    from .backends.lmdb import LMDBBackend
    from .backends.memory import MemoryBackend
    from .chain.importer import import_chain
    from .codec.answers import GETH_1_16, GETH_1_17, AnswerStyle
    from .errors import EthreadError, ImportFailed, MissingBlocks
    from .iteration import iter_blocks, iter_blocks_with_receipts
    from .keccak import BACKEND as KECCAK_BACKEND
    from .models import (
        AccountProof,
        Block,
        Header,
        IncludedTransaction,
        Log,
        LogFilter,
        Receipt,
        StorageProof,
        Transaction,
    )
    from .proofs import verify_account_proof
    from .rpc.dispatcher import handle

_NAMES = {
    "backend": ("Backend", "WritableBackend"),
    "backends.memory": ("MemoryBackend",),
    "backends.leveldb": ("LevelDBBackend",),
    "backends.lmdb": ("LMDBBackend",),
    "backends.era": ("EraBackend",),
    "chain.importer": ("import_chain",),
    "codec.answers": ("GETH_1_16", "GETH_1_17", "AnswerStyle"),
    "rpc.dispatcher": ("handle",),
    "errors": ("EthreadError", "ImportFailed", "MissingBlocks"),
    "iteration": ("iter_blocks", "iter_blocks_with_receipts"),
    "models": ("AccountProof", "Block", "Header", "IncludedTransaction", "Log", "LogFilter",
               "Receipt", "StorageProof", "Transaction"),
    "proofs": ("verify_account_proof",),
}
_LAZY = {name: f"ethread.{module}" for module, names in _NAMES.items() for name in names}
"""Each public name and the module it is imported from when first read."""

_SUBMODULES = ("frames", "methods")
"""Subpackages reachable as attributes (``ethread.methods.get_logs``) before any import of them."""


def __getattr__(name: str) -> Any:
    """Import the module of a public name the first time it is read, and keep the value."""
    if name == "KECCAK_BACKEND":  # the keccak-256 backend eth-hash hashes with (ethread.keccak)
        value = importlib.import_module("ethread.keccak").BACKEND
    elif name in _SUBMODULES:
        value = importlib.import_module(f"ethread.{name}")
    else:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'ethread' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "GETH_1_16",
    "GETH_1_17",
    "KECCAK_BACKEND",
    "AccountProof",
    "AnswerStyle",
    "Backend",
    "Block",
    "EraBackend",
    "EthreadError",
    "Header",
    "ImportFailed",
    "IncludedTransaction",
    "LMDBBackend",
    "LevelDBBackend",
    "Log",
    "LogFilter",
    "MemoryBackend",
    "MissingBlocks",
    "Receipt",
    "StorageProof",
    "Transaction",
    "WritableBackend",
    "__version__",
    "frames",
    "handle",
    "import_chain",
    "iter_blocks",
    "iter_blocks_with_receipts",
    "methods",
    "verify_account_proof",
]
