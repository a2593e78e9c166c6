"""The EVM rules ethread adds on top of py-evm: the forks py-evm does not have yet (Osaka and
the blob-parameter-only forks), built on its Prague VM.

``osaka_vm(BlobParams(...))`` is the VM class of Osaka or of any BPO fork after it;
``prague_vm(BlobParams(...))`` is py-evm's Prague under other blob parameters. Both states
skip py-evm's rewrite of the system contracts' code."""

from .blobs import GAS_PER_BLOB, BlobParams
from .osaka import (
    MAX_BLOBS_PER_TX,
    MAX_RLP_BLOCK_SIZE,
    OSAKA_BLOBS,
    TX_GAS_LIMIT_CAP,
    OsakaVM,
    check_block_size,
    osaka_vm,
)
from .p256 import GAS_P256VERIFY, P256VERIFY_ADDRESS
from .prague import prague_vm

__all__ = [
    "GAS_P256VERIFY",
    "GAS_PER_BLOB",
    "MAX_BLOBS_PER_TX",
    "MAX_RLP_BLOCK_SIZE",
    "OSAKA_BLOBS",
    "P256VERIFY_ADDRESS",
    "TX_GAS_LIMIT_CAP",
    "BlobParams",
    "OsakaVM",
    "check_block_size",
    "osaka_vm",
    "prague_vm",
]
