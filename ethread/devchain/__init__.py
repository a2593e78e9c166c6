"""The dev chain: a chain built in code, for the project's tests, benchmarks and the
``ethread serve`` demo.

- :mod:`.builder`: :class:`DevChain` (blocks made with py-evm and imported through the real
  import path), joined from one part per concern: :mod:`.core` (state, clock, reads),
  :mod:`.forked`, :mod:`.mining`, :mod:`.pool_controls`, :mod:`.sending` (with fees and
  transaction kinds), :mod:`.client_signing`, :mod:`.anvil_controls`, :mod:`.snapshots`,
  :mod:`.state_files`;
- :mod:`.genesis`: fork schedules and the genesis document;
- :mod:`.pool`: what a transaction must pass before the chain takes it (geth's pool checks);
- :mod:`.requests`: eth_sendTransaction's transaction objects made into transactions;
- :mod:`.inputs`: hex strings accepted where bytes are wanted, converted once;
- :mod:`.signing`: dev accounts, transaction kinds and fees, transaction and authorization
  signatures;
- :mod:`.contracts`: small hand-assembled contracts;
- :mod:`.demo`: the demo chain ``ethread serve`` shows when given no chain.
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

__all__ = [
    "DEFAULT_FORKS",
    "DEV_CHAIN_ID",
    "GWEI",
    "OSAKA_FORKS",
    "PRAGUE_FORKS",
    "RPC_COMPAT_FORKS",
    "TEST_MNEMONIC",
    "CallOutcome",
    "Demo",
    "DevAccount",
    "DevChain",
    "DevChainError",
    "Fees",
    "ForkSchedule",
    "StateEdit",
    "TxKind",
    "demo_chain",
    "dev_accounts",
    "genesis_document",
    "sign_authorization",
    "sign_transaction",
]
