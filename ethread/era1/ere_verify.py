"""Check an ``ere`` file end to end, as a client that did not write it would: header links, the
roots each body and receipt list rebuilds, total difficulties (adding up to the merge, flat
after), the accumulator, the proof types, and the file name's hash. Proofs are not checked
against the beacon chain's historical roots: no archive folder carries them.
"""

from __future__ import annotations

from ..models import Header
from ..progress import Progress
from .accumulator import accumulator_root
from .e2store import FormatError
from .ere import PROOF_TYPES, EreFile, EreName
from .verify import check_named, checked_blocks


def verify_ere(ere: EreFile, progress: Progress | None = None) -> None:
    """Raise :class:`FormatError` at the first inconsistency of ``ere``."""
    where = str(ere.path)
    merged = False
    records: list[tuple[bytes, int]] = []
    last_hash = b""

    def more(number: int, header: Header, td: int | None, previous: int | None) -> str | None:
        problem = (_td_problem(header.difficulty, td, previous, merged)
                   if ere.has_total_difficulty else None)
        if problem is None and ere.has_proofs:
            proof = ere.proof(number)
            if proof is not None and proof[0] not in PROOF_TYPES:
                problem = f"a proof of unknown type {proof[0]}"
        return problem

    for header, td in checked_blocks(ere, progress, more):
        if header.difficulty > 0 and td is not None:
            records.append((header.hash, td))
        merged = merged or header.difficulty == 0
        last_hash = header.hash
    stored = ere.accumulator()
    if stored is not None and accumulator_root(records) != stored:
        raise FormatError(where, ere.size, "the accumulator recomputed from the pre-merge blocks "
                          "differs from the stored one")
    name = EreName.parse(ere.path.name)
    check_named(where, None if name is None else name.last_hash_prefix, last_hash, "last block")
    if name is not None and ("noreceipts" in name.profiles) == ere.has_receipts:
        raise FormatError(where, 0, "the file name's profiles do not say whether it holds "
                          "receipts")


def _td_problem(difficulty: int, td: int | None, previous: int | None,
                merged: bool) -> str | None:
    if td is None:
        return "no total difficulty"
    if difficulty > 0:
        if merged:
            return "a proof-of-work block after the merge"
        if previous is not None and td != previous + difficulty:
            return "total difficulty is not the previous one plus the block's difficulty"
        if previous is None and td < difficulty:
            return "total difficulty is below the block's difficulty"
    elif previous is not None and td != previous:
        return "total difficulty changes after the merge"
    return None


def ere_summary(ere: EreFile) -> str:
    """One line of what a verified file holds, for ``ethread verify``."""
    accumulator = ere.accumulator()
    parts = [f"blocks {ere.start}..{ere.end - 1}", "+".join(ere.held_components())]
    if accumulator is not None:
        parts.append(f"accumulator 0x{accumulator.hex()}")
    return ", ".join(parts)
