"""ethread: the read side of an Ethereum node's JSON-RPC interface, over pluggable backends.

    import ethread
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, "genesis.json", "chain.rlp", verify_seals=False)
    block = ethread.methods.get_block_by_number(backend, "latest")
    raw = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')

``import ethread`` loads none of what the names below need (py-evm, the codec, the storage
engines, pyarrow): each name is imported the first time it is read (PEP 562, :data:`_LAZY`),
so a command's ``--help`` or a script that uses one backend pays only for what it touches.
``from ethread import X`` reads the name, so it imports X's module then.
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

_LAZY = {
    "Backend": "ethread.backend",
    "WritableBackend": "ethread.backend",
    "MemoryBackend": "ethread.backends.memory",
    "LevelDBBackend": "ethread.backends.leveldb",
    "LMDBBackend": "ethread.backends.lmdb",
    "EraBackend": "ethread.backends.era",
    "import_chain": "ethread.chain.importer",
    "GETH_1_16": "ethread.codec.answers",
    "GETH_1_17": "ethread.codec.answers",
    "AnswerStyle": "ethread.codec.answers",
    "handle": "ethread.rpc.dispatcher",
    "EthreadError": "ethread.errors",
    "ImportFailed": "ethread.errors",
    "MissingBlocks": "ethread.errors",
    "iter_blocks": "ethread.iteration",
    "iter_blocks_with_receipts": "ethread.iteration",
    "AccountProof": "ethread.models",
    "Block": "ethread.models",
    "Header": "ethread.models",
    "IncludedTransaction": "ethread.models",
    "Log": "ethread.models",
    "LogFilter": "ethread.models",
    "Receipt": "ethread.models",
    "StorageProof": "ethread.models",
    "Transaction": "ethread.models",
    "verify_account_proof": "ethread.proofs",
}
"""Each public name and the module it is imported from when first read."""

_SUBMODULES = ("frames", "methods")
"""Subpackages reachable as attributes (``ethread.methods.get_logs``) before any import of
them."""


def __getattr__(name: str) -> Any:
    """Import the module of a public name the first time it is read, and keep the value in the
    package's namespace (the next read costs nothing)."""
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
