"""ethread: the read side of an Ethereum node's JSON-RPC interface, over pluggable backends.

    import ethread
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, "genesis.json", "chain.rlp", verify_seals=False)
    block = ethread.methods.get_block_by_number(backend, "latest")
    raw = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')
"""

import importlib
from typing import TYPE_CHECKING, Any

from . import methods
from .backend import Backend, WritableBackend
from .backends.memory import MemoryBackend
from .chain.importer import import_chain
from .codec.jsonrpc import handle
from .errors import EthreadError, ImportFailed
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

if TYPE_CHECKING:
    from .backends.era import EraBackend
    from .backends.leveldb import LevelDBBackend

_LAZY = {
    "LevelDBBackend": "ethread.backends.leveldb",
    "EraBackend": "ethread.backends.era",
}


def __getattr__(name: str) -> Any:
    """The disk backends load their storage libraries only when asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ethread' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

__all__ = [
    "AccountProof",
    "Backend",
    "Block",
    "EraBackend",
    "EthreadError",
    "Header",
    "ImportFailed",
    "IncludedTransaction",
    "LevelDBBackend",
    "Log",
    "LogFilter",
    "MemoryBackend",
    "Receipt",
    "StorageProof",
    "Transaction",
    "WritableBackend",
    "handle",
    "import_chain",
    "methods",
    "verify_account_proof",
]
