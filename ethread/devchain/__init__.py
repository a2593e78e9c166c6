"""The dev chain: a chain built in code, for the project's tests, benchmarks and the
``ethread serve`` demo.

- :mod:`.builder`: :class:`DevChain` (blocks made with py-evm and imported through the real
  import path), its fork schedules, fees and genesis document;
- :mod:`.signing`: dev accounts, transaction and authorization signatures;
- :mod:`.contracts`: small hand-assembled contracts;
- :mod:`.demo`: the demo chain ``ethread serve`` shows when given no chain.
"""

from .builder import (
    DEFAULT_FORKS,
    DEV_CHAIN_ID,
    GWEI,
    PRAGUE_FORKS,
    CallOutcome,
    DevChain,
    DevChainError,
    Fees,
    ForkSchedule,
    TxKind,
    genesis_document,
)
from .demo import Demo, demo_chain
from .signing import DevAccount, dev_accounts, sign_authorization, sign_transaction

__all__ = [
    "DEFAULT_FORKS",
    "DEV_CHAIN_ID",
    "GWEI",
    "PRAGUE_FORKS",
    "CallOutcome",
    "Demo",
    "DevAccount",
    "DevChain",
    "DevChainError",
    "Fees",
    "ForkSchedule",
    "TxKind",
    "demo_chain",
    "dev_accounts",
    "genesis_document",
    "sign_authorization",
    "sign_transaction",
]
