"""ethread: the read side of an Ethereum node's JSON-RPC interface, over pluggable backends.

    import ethread
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, "genesis.json", "chain.rlp", verify_seals=False)
    block = ethread.methods.get_block_by_number(backend, "latest")
    raw = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')
"""

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from . import methods
from .backend import Backend, WritableBackend
from .backends.memory import MemoryBackend
from .chain.importer import import_chain
from .codec.answers import GETH_1_16, GETH_1_17, AnswerStyle
from .codec.jsonrpc import handle
from .errors import EthreadError, ImportFailed, MissingBlocks
from .iteration import iter_blocks, iter_blocks_with_receipts
from .keccak import use_fastest_keccak
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

KECCAK_BACKEND = use_fastest_keccak()
"""The keccak-256 backend eth-hash hashes with in this process (see :mod:`ethread.keccak`)."""

if TYPE_CHECKING:
    from . import frames
    from .backends.era import EraBackend
    from .backends.leveldb import LevelDBBackend
    from .backends.lmdb import LMDBBackend

try:
    __version__: str = version("ethread")
    """The installed package's version (from its metadata)."""
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

_LAZY = {
    "LevelDBBackend": "ethread.backends.leveldb",
    "LMDBBackend": "ethread.backends.lmdb",
    "EraBackend": "ethread.backends.era",
}


def __getattr__(name: str) -> Any:
    """The disk backends load their storage libraries, and :mod:`ethread.frames` its
    module, only when asked for."""
    if name == "frames":
        return importlib.import_module("ethread.frames")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ethread' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

__all__ = [
    "GETH_1_16",
    "GETH_1_17",
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
