"""A dev chain's pending transactions as JSON-RPC shows them, the way geth shows its pool's
(pooled transactions, pending nonces, the pending block), and a forked chain's eth_getProof.
Each is a row's :attr:`~ethread.rpc.row.Method.pool`, asked before the chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from ..codec.answers import AnswerStyle
from ..codec.hex import decode_storage_key, parse_address_param, parse_hash_param
from ..codec.params import parse_block_ref, parse_bool, parse_number_or_tag
from ..codec.serialize import block_json
from ..errors import InvalidParams
from ..models import IncludedTransaction
from .txpool import pending_transaction_json

if TYPE_CHECKING:
    from ..devchain import DevChain
    from ..devchain.served_pool import ServedPool


PoolReads = Union["DevChain", "ServedPool"]
"""The pools these reads ask: a dev chain's, and a served chain's (``--txpool``)."""


class _NotPending:
    """The answer of a pending read that leaves the question to the chain."""


NOT_PENDING = _NotPending()


def _is_pending(value: Any) -> bool:
    return isinstance(value, str) and value == "pending"


def transaction_by_hash(chain: PoolReads, params: list[Any], style: AnswerStyle) -> Any:
    """eth_getTransactionByHash of a pooled transaction (its block fields null)."""
    pooled = chain.pending_transaction(parse_hash_param(params[0])) if params else None
    if pooled is None:
        return NOT_PENDING
    answer = pending_transaction_json(pooled)
    for key in style.withheld_keys(IncludedTransaction):
        answer.pop(key, None)
    return answer


def transaction_count(chain: PoolReads, params: list[Any], style: AnswerStyle) -> Any:
    """eth_getTransactionCount at ``pending``: the pool's next nonce for the address."""
    if len(params) < 2 or not _is_pending(params[1]):
        return NOT_PENDING
    return hex(chain.next_nonce(parse_address_param(params[0])))


def block_by_number(chain: DevChain, params: list[Any], style: AnswerStyle) -> Any:
    """eth_getBlockByNumber at ``pending``: the block the pool would make next."""
    if len(params) != 2 or not _is_pending(params[0]):
        return NOT_PENDING
    parse_number_or_tag(params[0])
    answer = dict(block_json(chain.pending_block(), parse_bool(params[1]), None, style))
    for key in ("hash", "nonce", "miner"):  # geth's pending block has none of these
        answer[key] = None
    return answer


def proof(chain: DevChain, params: list[Any], style: AnswerStyle) -> Any:
    """eth_getProof on a forked dev chain; parameters that do not parse are left to the chain's own."""
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
"""Storage keys one eth_getProof call may ask for (geth's limit)."""

__all__ = ["NOT_PENDING", "PoolReads", "block_by_number", "proof",
           "transaction_by_hash", "transaction_count"]
