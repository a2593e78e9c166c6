"""The dev chain: a chain built in code, for tests, benchmarks and the ``ethread serve`` demo.

:class:`DevChain` (:mod:`.builder`) is joined from one part per concern: :mod:`.core` (state,
clock, reads), :mod:`.forked`, :mod:`.mining`, :mod:`.pool_controls`, :mod:`.sending`,
:mod:`.client_signing`, :mod:`.anvil_controls`, :mod:`.snapshots` and :mod:`.state_files`.
"""

from .builder import DevChain
from .core import CallOutcome, DevChainError, StateEdit
from .demo import Demo, demo_chain
from .genesis import (
    DEFAULT_FORKS,
    DEV_CHAIN_ID,
    GWEI,
    OSAKA_FORKS,
    PRAGUE_FORKS,
    RPC_COMPAT_FORKS,
    ForkSchedule,
    genesis_document,
)
from .signing import (
    TEST_MNEMONIC,
    DevAccount,
    Fees,
    TxKind,
    dev_accounts,
    sign_authorization,
    sign_transaction,
)

__all__ = ["DEFAULT_FORKS", "DEV_CHAIN_ID", "GWEI", "OSAKA_FORKS", "PRAGUE_FORKS",
           "RPC_COMPAT_FORKS", "TEST_MNEMONIC", "CallOutcome", "Demo", "DevAccount", "DevChain",
           "DevChainError", "Fees", "ForkSchedule", "StateEdit", "TxKind", "demo_chain",
           "dev_accounts", "genesis_document", "sign_authorization", "sign_transaction"]
