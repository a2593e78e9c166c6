"""The read methods, one pure function each: ``(backend, typed arguments) -> typed model``."""

from .blocks import (
    get_block_by_hash,
    get_block_by_number,
    get_uncle_by_block_hash_and_index,
    get_uncle_by_block_number_and_index,
)
from .call import call, decode_revert_reason
from .logs import LogLimits, get_logs
from .proof import get_proof
from .receipts import get_block_receipts
from .transactions import (
    get_transaction_by_block_hash_and_index,
    get_transaction_by_block_number_and_index,
    get_transaction_by_hash,
)

__all__ = [
    "LogLimits",
    "call",
    "decode_revert_reason",
    "get_block_by_hash",
    "get_block_by_number",
    "get_block_receipts",
    "get_logs",
    "get_proof",
    "get_transaction_by_block_hash_and_index",
    "get_transaction_by_block_number_and_index",
    "get_transaction_by_hash",
    "get_uncle_by_block_hash_and_index",
    "get_uncle_by_block_number_and_index",
]
