"""Osaka (Fusaka) on py-evm's Prague: what the fork changes, and nothing else.

- in the EVM: CLZ (EIP-7939, :mod:`.opcodes`), P256VERIFY at 0x100 (EIP-7951, :mod:`.p256`),
  MODEXP's input bounds and prices (EIP-7823, EIP-7883, :mod:`.modexp`);
- for a transaction: at most :data:`TX_GAS_LIMIT_CAP` gas (EIP-7825) and
  :data:`MAX_BLOBS_PER_TX` blobs (EIP-7594), checked by :mod:`ethread.forks.validity`;
- for a block: at most :data:`MAX_RLP_BLOCK_SIZE` bytes of RLP (EIP-7934), and EIP-7918's
  excess blob gas (:func:`~ethread.evm.blobs.excess_blob_gas_after`);
- blob parameters from a :class:`~ethread.evm.blobs.BlobParams` (EIP-7892: BPO forks are this
  VM with other parameters, :func:`osaka_vm`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import rlp
from eth.abc import BlockAPI
from eth.vm.forks.prague.state import PragueTransactionExecutor
from eth_utils import ValidationError

from .blobs import BlobParams
from .modexp import MODEXP_ADDRESS, modexp
from .opcodes import OSAKA_OPCODES
from .p256 import P256VERIFY_ADDRESS, p256verify
from .prague import BlobScheduledState, BlobScheduledVM, CorrectedPragueComputation

TX_GAS_LIMIT_CAP = 2**24
"""EIP-7825: the most gas a transaction may carry (16,777,216)."""
MAX_BLOBS_PER_TX = 6
"""EIP-7594: the most blobs one transaction may carry."""
MAX_BLOCK_SIZE = 10_485_760
SAFETY_MARGIN = 2_097_152
MAX_RLP_BLOCK_SIZE = MAX_BLOCK_SIZE - SAFETY_MARGIN
"""EIP-7934: the most bytes a block's RLP may take (10 MiB less the consensus layer's 2)."""
OSAKA_BLOBS = BlobParams(target=6, max=9, update_fraction=5007716)
"""Osaka's own blob parameters (Prague's, unchanged)."""

OSAKA_PRECOMPILES: dict[Any, Any] = {
    **CorrectedPragueComputation.get_precompiles(),
    MODEXP_ADDRESS: modexp,
    P256VERIFY_ADDRESS: p256verify,
}
"""Prague's precompiles with Osaka's MODEXP, and P256VERIFY."""


class OsakaComputation(CorrectedPragueComputation):
    """Prague's computation with Osaka's opcodes and precompiles."""

    opcodes = OSAKA_OPCODES
    _precompiles = OSAKA_PRECOMPILES


class OsakaTransactionExecutor(PragueTransactionExecutor):
    """Prague's executor (named for Osaka's state)."""


class OsakaState(BlobScheduledState):
    """Prague's state with Osaka's computation."""

    computation_class = OsakaComputation
    transaction_executor_class = OsakaTransactionExecutor


def check_block_size(block: BlockAPI) -> None:
    """EIP-7934's limit on a block's RLP. Raises py-evm's ``ValidationError``."""
    size = len(rlp.encode(block))
    if size > MAX_RLP_BLOCK_SIZE:
        raise ValidationError(f"Block RLP is {size} bytes, over the limit {MAX_RLP_BLOCK_SIZE}")


class OsakaVM(BlobScheduledVM):
    """py-evm's Prague VM with Osaka's rules, for :attr:`blob_params` (:func:`osaka_vm`)."""

    fork = "osaka"
    blob_params = OSAKA_BLOBS
    reserve_price = True
    _state_class = OsakaState

    def validate_block(self, block: BlockAPI) -> None:
        """EIP-7934's size limit, then Prague's checks."""
        check_block_size(block)
        super().validate_block(block)


def osaka_vm(blob: BlobParams = OSAKA_BLOBS) -> type[OsakaVM]:
    """The Osaka VM under ``blob`` (a BPO fork's, EIP-7892), one class per parameters."""
    return OsakaVM if blob == OSAKA_BLOBS else _bpo_vm(blob)


@cache
def _bpo_vm(blob: BlobParams) -> type[OsakaVM]:
    state = type("OsakaState", (OsakaState,), {"blob_params": blob, "__module__": __name__})
    return type("OsakaVM", (OsakaVM,),
                {"blob_params": blob, "_state_class": state, "__module__": __name__})
