"""The read methods, one pure function each: ``(backend, typed arguments) -> typed model``."""

from .access_list import create_access_list
from .blocks import (
    get_block_by_hash,
    get_block_by_number,
    get_uncle_by_block_hash_and_index,
    get_uncle_by_block_number_and_index,
)
from .call import call, decode_revert_reason
from .capabilities import get_capabilities
from .config import get_config
from .counts import (
    get_block_transaction_count_by_hash,
    get_block_transaction_count_by_number,
    get_uncle_count_by_block_hash,
    get_uncle_count_by_block_number,
)
from .estimate import estimate_gas
from .fees import (
    FeeHistory,
    OracleSettings,
    TipOracle,
    fee_history,
    get_base_fee,
    get_blob_base_fee,
    suggest_tip_cap,
)
from .filters import FilterRegistry
from .logs import LogLimits, get_logs
from .proof import get_proof
from .raw import get_raw_block, get_raw_header, get_raw_receipts, get_raw_transaction
from .receipts import get_block_receipts, get_transaction_receipt
from .simulate import simulate
from .state import (
    get_balance,
    get_code,
    get_storage_at,
    get_storage_values,
    get_transaction_count,
)
from .transactions import (
    get_transaction_by_block_hash_and_index,
    get_transaction_by_block_number_and_index,
    get_transaction_by_hash,
)

__all__ = [
    "FeeHistory",
    "FilterRegistry",
    "LogLimits",
    "OracleSettings",
    "TipOracle",
    "call",
    "create_access_list",
    "decode_revert_reason",
    "estimate_gas",
    "fee_history",
    "get_balance",
    "get_base_fee",
    "get_blob_base_fee",
    "get_block_by_hash",
    "get_block_by_number",
    "get_block_receipts",
    "get_block_transaction_count_by_hash",
    "get_block_transaction_count_by_number",
    "get_capabilities",
    "get_code",
    "get_config",
    "get_logs",
    "get_proof",
    "get_raw_block",
    "get_raw_header",
    "get_raw_receipts",
    "get_raw_transaction",
    "get_storage_at",
    "get_storage_values",
    "get_transaction_by_block_hash_and_index",
    "get_transaction_by_block_number_and_index",
    "get_transaction_by_hash",
    "get_transaction_count",
    "get_transaction_receipt",
    "get_uncle_by_block_hash_and_index",
    "get_uncle_by_block_number_and_index",
    "get_uncle_count_by_block_hash",
    "get_uncle_count_by_block_number",
    "simulate",
    "suggest_tip_cap",
]
