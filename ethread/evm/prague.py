"""Prague's VM with its blob parameters taken from a :class:`~ethread.evm.blobs.BlobParams`.

py-evm's Prague fixes EIP-7691's figures as module constants, so a chain whose genesis
``blobSchedule`` gives Prague others (a devnet, a test fixture) needs :class:`BlobScheduledVM`,
which reads them from the class; Osaka and the BPO forks (:mod:`.osaka`) build on it."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from eth._utils.db import get_block_header_by_hash
from eth.abc import BlockAPI, BlockHeaderAPI, SignedTransactionAPI
from eth.vm.forks.cancun.state import get_total_blob_gas
from eth.vm.forks.frontier.validation import validate_frontier_transaction_against_header
from eth.vm.forks.prague import PragueVM
from eth.vm.forks.prague.computation import PRAGUE_PRECOMPILES, PragueComputation
from eth.vm.forks.prague.headers import create_prague_header_from_parent
from eth.vm.forks.prague.state import PragueState
from eth_utils import ValidationError

from .blobs import BlobParams, blob_base_fee, excess_blob_gas_after
from .modexp import MODEXP_ADDRESS, modexp_eip2565

PRAGUE_BLOBS = BlobParams(target=6, max=9, update_fraction=5007716)
"""EIP-7691's figures, py-evm's Prague's own."""


class CorrectedPragueComputation(PragueComputation):
    """py-evm's Prague computation with MODEXP's result for an empty base corrected."""

    _precompiles = {**PRAGUE_PRECOMPILES, MODEXP_ADDRESS: modexp_eip2565}


class BlobScheduledState(PragueState):
    """Prague's state with the blob base fee under :attr:`blob_params`, MODEXP corrected, no code rewrite."""

    computation_class = CorrectedPragueComputation
    blob_params: ClassVar[BlobParams] = PRAGUE_BLOBS

    @property
    def blob_base_fee(self) -> int:
        """Wei per blob gas at this block's excess blob gas, under :attr:`blob_params`."""
        return blob_base_fee(self.blob_params, self.execution_context.excess_blob_gas or 0)

    def set_system_contracts(self) -> None:
        """Nothing: py-evm's write here changes nothing and costs every state built."""


class BlobScheduledVM(PragueVM):
    """Prague's VM with the blob target, maximum and update fraction of :attr:`blob_params`."""

    blob_params: ClassVar[BlobParams] = PRAGUE_BLOBS
    reserve_price: ClassVar[bool] = False
    """Whether the excess blob gas follows EIP-7918 (Osaka on)."""
    _state_class = BlobScheduledState

    @classmethod
    def excess_blob_gas(cls, parent: BlockHeaderAPI) -> int:
        """The excess blob gas of a child of ``parent`` (0 after one from before Cancun)."""
        return excess_blob_gas_after(cls.blob_params, cls.reserve_price,
                                     getattr(parent, "excess_blob_gas", 0),
                                     getattr(parent, "blob_gas_used", 0),
                                     getattr(parent, "base_fee_per_gas", 0))

    @classmethod
    def create_header_from_parent(cls, parent_header: BlockHeaderAPI | None,  # type: ignore[override]
                                  **header_params: Any) -> BlockHeaderAPI:
        """py-evm's Prague header after ``parent_header``, with :meth:`excess_blob_gas`."""
        header: Any = create_prague_header_from_parent(parent_header, **header_params)
        if parent_header is None:
            return header  # type: ignore[no-any-return]
        return header.copy(excess_blob_gas=cls.excess_blob_gas(parent_header))  # type: ignore[no-any-return]

    def validate_transaction_against_header(self, base_header: BlockHeaderAPI,
                                            transaction: SignedTransactionAPI) -> None:
        """py-evm's check of the block's gas, and whether the transaction's blobs still fit
        in the block's (py-evm checks that only once the whole block has run)."""
        validate_frontier_transaction_against_header(self, base_header, transaction)
        blob_gas = get_total_blob_gas(transaction)
        if blob_gas and base_header.blob_gas_used + blob_gas > self.blob_params.max_gas:
            raise ValidationError(
                f"Transaction's blob gas {blob_gas} brings the block's to "
                f"{base_header.blob_gas_used + blob_gas}, over the limit "
                f"{self.blob_params.max_gas}")

    def validate_block_blobs(self, block: BlockAPI) -> None:
        """py-evm's checks of a block's blobs, under :attr:`blob_params`."""
        parent = get_block_header_by_hash(block.header.parent_hash, self.chaindb)
        if block.header.excess_blob_gas != self.excess_blob_gas(parent):
            raise ValidationError("Block excess blob gas was not updated correctly.")
        used = sum(get_total_blob_gas(tx) for tx in block.transactions)
        if used > self.blob_params.max_gas:
            raise ValidationError("Block exceeded maximum blob gas limit.")
        if block.header.blob_gas_used != used:
            raise ValidationError(
                f"Block blob gas used ({block.header.blob_gas_used}) does not match "
                f"total blob gas used ({used}).")


def prague_vm(blob: BlobParams = PRAGUE_BLOBS) -> type[BlobScheduledVM]:
    """Prague's VM under ``blob`` (one class per parameters, made once)."""
    return _prague_vm(blob)


@cache
def _prague_vm(blob: BlobParams) -> type[BlobScheduledVM]:
    state = type("PragueState", (BlobScheduledState,), {"blob_params": blob, "__module__": __name__})
    return type("PragueVM", (BlobScheduledVM,),
                {"blob_params": blob, "_state_class": state, "__module__": __name__})
