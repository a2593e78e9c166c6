"""What a forked dev chain (:meth:`.builder.DevChain.fork`) answers from the node it forked:
where it forked and eth_getProof where its own trie is not the word."""

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
        """eth_getProof on a forked chain where the local trie is not the word (None: the
        local proof holds). At or before the forked block: the node's proof, checked against
        that block's state root. At a local block, for an account (or slot) the chain has not
        written: :class:`~.fork.source.ProofUnavailable`, naming the block that proves it."""
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
            raise ProofUnavailable(
                f"account {who} has not been written since the fork at block "
                f"{overlay.fork_number}: its state is the forked node's, which block "
                f"{header.number}'s state root does not commit to; ask for block "
                f"{overlay.fork_number} (or earlier) to have it proven")
        if remote is None or remote.storage_root == BLANK_ROOT:
            return None
        for key in keys:
            if not overlay.slot_is_local(address, int.from_bytes(key, "big"), header.number):
                raise ProofUnavailable(
                    f"slot 0x{key.hex()} of account {who} has not been written since the fork at "
                    f"block {overlay.fork_number}: its value is the forked node's, which block "
                    f"{header.number}'s state root does not commit to; ask for block "
                    f"{overlay.fork_number} (or earlier) to have it proven")
        return None
