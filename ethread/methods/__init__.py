"""The read methods, one pure function each: ``(backend, typed arguments) -> typed model``.

Each name is imported from its module when first read (PEP 562): ``ethread.methods.logs``
alone does not pay for py-evm, which the call, estimate and state methods load."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .access_list import create_access_list
    from .blocks import (
        get_block_by_hash,
        get_block_by_number,
        get_uncle_by_block_hash_and_index,
        get_uncle_by_block_number_and_index,
    )
    from .call import (
        call,
        decode_revert_reason,
    )
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
        OracleSettings,
        TipOracle,
        fee_history,
        get_base_fee,
        get_blob_base_fee,
        suggest_tip_cap,
    )
    from .filters import FilterRegistry
    from .logs import (
        LogLimits,
        get_logs,
    )
    from .proof import get_proof
    from .raw import (
        get_raw_block,
        get_raw_header,
        get_raw_receipts,
        get_raw_transaction,
    )
    from .receipts import (
        get_block_receipts,
        get_transaction_receipt,
    )
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

_NAMES = {
    "access_list": ("create_access_list",),
    "blocks": ("get_block_by_hash", "get_block_by_number", "get_uncle_by_block_hash_and_index",
               "get_uncle_by_block_number_and_index"),
    "call": ("call", "decode_revert_reason"),
    "capabilities": ("get_capabilities",),
    "config": ("get_config",),
    "counts": ("get_block_transaction_count_by_hash", "get_block_transaction_count_by_number",
               "get_uncle_count_by_block_hash", "get_uncle_count_by_block_number"),
    "estimate": ("estimate_gas",),
    "fees": ("OracleSettings", "TipOracle", "fee_history", "get_base_fee", "get_blob_base_fee",
             "suggest_tip_cap"),
    "filters": ("FilterRegistry",),
    "logs": ("LogLimits", "get_logs"),
    "proof": ("get_proof",),
    "raw": ("get_raw_block", "get_raw_header", "get_raw_receipts", "get_raw_transaction"),
    "receipts": ("get_block_receipts", "get_transaction_receipt"),
    "simulate": ("simulate",),
    "state": ("get_balance", "get_code", "get_storage_at", "get_storage_values",
              "get_transaction_count"),
    "transactions": ("get_transaction_by_block_hash_and_index",
                     "get_transaction_by_block_number_and_index", "get_transaction_by_hash"),
}
"""Each module of this package and the public names it holds."""
_LAZY = {name: module for module, names in _NAMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """This package, keeping a function named as its module (``call``, ``simulate``) when the
    import system sets the package's attribute to that submodule."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name \
                and value.__name__ == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = sorted(_LAZY)
