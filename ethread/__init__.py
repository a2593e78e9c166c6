"""ethread: the read side of an Ethereum node's JSON-RPC interface, over pluggable backends.

    import ethread
    backend = ethread.MemoryBackend()
    ethread.import_chain(backend, "genesis.json", "chain.rlp", verify_seals=False)
    block = ethread.methods.get_block_by_number(backend, "latest")
    raw = ethread.handle(backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')
"""

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

__all__ = [
    "AccountProof",
    "Backend",
    "Block",
    "EthreadError",
    "Header",
    "ImportFailed",
    "IncludedTransaction",
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
