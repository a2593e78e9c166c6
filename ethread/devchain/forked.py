"""What a forked dev chain answers from the node it forked: its origin, and eth_getProof."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eth_utils import to_checksum_address

from ..methods.resolve import require_header
from ..models import Address, BlockRef
from .core import ChainCore
from .fork.history import ForkHistory
from .fork.source import BLANK_ROOT, ForkPoint, ForkSource, ProofUnavailable


class ForkedReads(ChainCore):
    """Reads of a forked chain's origin (None on a chain that is not forked)."""

    @property
    def forked_from(self) -> ForkSource | None:
        """Where a forked chain's state below its own writes is read from."""
        return self._overlay.source if self._overlay is not None else None

    @property
    def fork_history(self) -> ForkHistory | None:
        """The forked node's blocks, receipts and logs at and below the fork block."""
        return self._history

    @property
    def fork_origin(self) -> ForkPoint | None:
        """The remote node and block a forked chain continues."""
        return self._overlay.source.point if self._overlay is not None else None

    def fork_proof(self, address: Address, keys: Sequence[bytes],
                   block: BlockRef) -> dict[str, Any] | None:
        """eth_getProof where the local trie is not the word (None: the local proof holds): the
        node's, checked, at or before the forked block; :class:`~.fork.source.ProofUnavailable`
        for what a local block holds unwritten."""
        overlay = self._overlay
        if overlay is None:
            return None
        header = require_header(self.backend, block)
        if header.number <= overlay.fork_number:
            return overlay.source.proof(address, keys, header.number, header.state_root)
        remote = overlay.remote_account(address)
        who = to_checksum_address(address)
        if not overlay.in_local_trie(address, header.number):
            if remote is None:
                return None  # (absent on both sides: the local proof of absence holds)
            raise _unavailable(f"account {who}", "state", overlay.fork_number, header.number)
        if remote is None or remote.storage_root == BLANK_ROOT:
            return None
        for key in keys:
            if not overlay.slot_is_local(address, int.from_bytes(key, "big"), header.number):
                raise _unavailable(f"slot 0x{key.hex()} of account {who}", "value", overlay.fork_number,
                                   header.number)
        return None


def _unavailable(what: str, held: str, fork_number: int, number: int) -> ProofUnavailable:
    return ProofUnavailable(
        f"{what} has not been written since the fork at block {fork_number}: its {held} is the "
        f"forked node's, which block {number}'s state root does not commit to; ask for block "
        f"{fork_number} (or earlier) to have it proven")
