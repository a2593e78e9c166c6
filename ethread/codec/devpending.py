"""A dev chain's pending transactions as JSON-RPC shows them, the way geth shows its pool's:

- ``eth_getTransactionByHash`` of a pooled transaction: the transaction with its block fields
  null (``gasPrice`` its fee cap), before the chain is asked;
- ``eth_getTransactionCount(address, "pending")``: the nonce after the sender's pending line;
- ``eth_getBlockByNumber("pending", full)``: the block the chain would mine now, with its
  number (the head's plus one) and the pool's transactions it would take, and ``hash``,
  ``nonce`` and ``miner`` null, as geth writes its pending block;
- ``anvil_dropTransaction`` (``hardhat_dropTransaction``) and ``anvil_dropAllTransactions``;
- ``eth_getProof`` on a forked chain: the forked node's proof, checked, at the forked block
  and before it; refused, naming the account, where no proof can hold.

The pool itself is :mod:`ethread.devchain.txpool`; a network without a dev chain answers these
reads from its chain alone, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..backend import Backend
from ..errors import InvalidParams
from ..models import Address, Block, BlockRef, Hash32, IncludedTransaction
from .answers import AnswerStyle
from .hex import decode_storage_key, parse_address_param, parse_hash_param
from .params import parse_block_ref, parse_bool, parse_number_or_tag
from .serialize import block_json
from .txpool_rpc import PooledView, pending_transaction_json


class PoolReads(Protocol):
    """What the two pool reads every pool answers ask: a dev chain's, and a served chain's
    (``ethread serve --txpool``, :class:`ethread.devchain.ServedPool`)."""

    def pending_transaction(self, tx_hash: Hash32) -> PooledView | None:
        """The pooled transaction with this hash that no block has taken yet, or None."""
        ...

    def next_nonce(self, address: Address) -> int:
        """The nonce ``address``'s next transaction takes, its pooled ones counted."""
        ...


class PendingChain(PoolReads, Protocol):
    """What these answers ask of a dev chain (:class:`ethread.devchain.DevChain` is one)."""

    def pending_block(self) -> Block:
        """The block the chain would mine now, not stored."""
        ...

    def pending_state(self) -> Backend:
        """The chain with :meth:`pending_block` as its head: what state reads at "pending"
        read."""
        ...

    def pool_arrivals(self, cursor: int) -> tuple[list[Hash32], int]:
        """Hashes the pool took after ``cursor``, and the cursor to ask from next time."""
        ...

    def drop_transaction(self, tx_hash: Hash32) -> bool:
        """Take a transaction out of the pool; False if the pool does not hold it."""
        ...

    def drop_all_transactions(self) -> None:
        """Empty the pool."""
        ...

    @property
    def fork_origin(self) -> object | None:
        """Where a forked chain's state comes from (None if the chain is not forked)."""
        ...

    def fork_proof(self, address: Address, keys: Sequence[bytes],
                   block: BlockRef) -> dict[str, Any] | None:
        """eth_getProof's answer from the forked node, where the local trie cannot give it
        (None: the local proof holds)."""
        ...


class _NotPending:
    """The answer of a pending read that leaves the question to the chain."""


NOT_PENDING = _NotPending()
PendingRead = Callable[[PendingChain, list[Any], AnswerStyle], Any]


def _is_pending(value: Any) -> bool:
    return isinstance(value, str) and value == "pending"


def transaction_by_hash(chain: PoolReads, params: list[Any], style: AnswerStyle) -> Any:
    pooled = chain.pending_transaction(parse_hash_param(params[0])) if params else None
    if pooled is None:
        return NOT_PENDING
    answer = pending_transaction_json(pooled)
    for key in style.withheld_keys(IncludedTransaction):
        answer.pop(key, None)
    return answer


def transaction_count(chain: PoolReads, params: list[Any], style: AnswerStyle) -> Any:
    if len(params) < 2 or not _is_pending(params[1]):
        return NOT_PENDING
    return hex(chain.next_nonce(parse_address_param(params[0])))


def block_by_number(chain: PendingChain, params: list[Any], style: AnswerStyle) -> Any:
    if len(params) != 2 or not _is_pending(params[0]):
        return NOT_PENDING
    parse_number_or_tag(params[0])
    answer = dict(block_json(chain.pending_block(), parse_bool(params[1]), None, style))
    for key in ("hash", "nonce", "miner"):  # geth's pending block has none of these
        answer[key] = None
    return answer


def proof(chain: PendingChain, params: list[Any], style: AnswerStyle) -> Any:
    """eth_getProof on a forked dev chain, where the local trie is not the word (see
    :meth:`ethread.devchain.DevChain.fork_proof`). Parameters that do not parse are left to
    the chain's own eth_getProof, which refuses them in geth's words."""
    if chain.fork_origin is None or len(params) < 2 or not isinstance(params[1], list):
        return NOT_PENDING
    try:
        address = parse_address_param(params[0])
        keys = [decode_storage_key(text) for text in params[1] if isinstance(text, str)]
        block = parse_block_ref(params[2]) if len(params) > 2 and params[2] is not None else "latest"
    except InvalidParams:
        return NOT_PENDING
    if len(keys) != len(params[1]) or len(keys) > MAX_PROOF_KEYS:
        return NOT_PENDING
    answer = chain.fork_proof(address, keys, block)
    return NOT_PENDING if answer is None else answer


MAX_PROOF_KEYS = 1024

PENDING_READS: dict[str, PendingRead] = {
    "eth_getTransactionByHash": transaction_by_hash,
    "eth_getTransactionCount": transaction_count,
    "eth_getBlockByNumber": block_by_number,
    "eth_getProof": proof,
}
"""Reads a dev chain answers before its backend does (:data:`NOT_PENDING`: the backend
answers): from its pool, and a forked chain's proofs."""

POOL_READS: dict[str, Callable[[PoolReads, list[Any], AnswerStyle], Any]] = {
    "eth_getTransactionByHash": transaction_by_hash,
    "eth_getTransactionCount": transaction_count,
}
"""The reads a served chain's pool answers too (``--txpool``): a pooled transaction by its
hash, and the nonce after the sender's pending line."""


def _drop_transaction(chain: PendingChain, params: list[Any]) -> Any:
    """anvil's answer: the hash when it was dropped, else null."""
    tx_hash = parse_hash_param(params[0])
    return "0x" + tx_hash.hex() if chain.drop_transaction(tx_hash) else None


def _hardhat_drop_transaction(chain: PendingChain, params: list[Any]) -> Any:
    """hardhat's answer: whether it was dropped."""
    return chain.drop_transaction(parse_hash_param(params[0]))


def _drop_all(chain: PendingChain, params: list[Any]) -> Any:
    chain.drop_all_transactions()
    return None


POOL_CONTROLS: dict[str, tuple[Callable[[PendingChain, list[Any]], Any], int, int]] = {
    "anvil_dropTransaction": (_drop_transaction, 1, 0),
    "hardhat_dropTransaction": (_hardhat_drop_transaction, 1, 0),
    "anvil_dropAllTransactions": (_drop_all, 0, 0),
}
"""name -> (handler, required params, optional params)."""

__all__ = ["NOT_PENDING", "PENDING_READS", "POOL_CONTROLS", "POOL_READS", "PendingChain",
           "PendingRead", "PoolReads"]
