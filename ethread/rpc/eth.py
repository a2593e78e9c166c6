"""The eth namespace: each method a row (:class:`~ethread.rpc.row.Method`) whose function
gets its parameters parsed and writes its answer as JSON values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import methods
from ..codec.hex import (
    decode_storage_key,
    parse_address,
    parse_address_param,
    parse_hash_param,
    parse_string_param,
    wrong_type,
)
from ..codec.params import (
    parse_block_overrides,
    parse_block_ref,
    parse_bool,
    parse_call_request,
    parse_hex_or_decimal,
    parse_index,
    parse_log_filter,
    parse_number_or_tag,
    parse_percentiles,
    parse_state_override,
)
from ..codec.serialize import (
    block_json,
    block_json_by_hash,
    block_receipts_json,
    capabilities_json,
    chain_forks_json,
    fee_history_json,
    to_json,
)
from ..codec.stored_answers import stored_receipt, stored_receipts
from ..errors import InvalidParams
from ..methods import (
    counts,
    fees,
    get_transaction_by_block_hash_and_index,
    get_transaction_by_block_number_and_index,
    get_transaction_by_hash,
    get_transaction_receipt,
    get_uncle_by_block_hash_and_index,
    get_uncle_by_block_number_and_index,
    node,
    raw,
    state,
)
from ..methods.capabilities import get_capabilities
from ..methods.config import get_config
from ..methods.filters import FilterRegistry
from ..methods.resolve import resolve_hash
from ..methods.simulate import simulate
from ..models import Address, Block, BlockRef, Hash32
from ..rlpcodec.blocks import BlockOutline
from ..rlpcodec.transactions import encode_transaction
from . import fork_history as history
from . import pool_reads as pool
from .context import Context
from .row import Method, Param, Scope, Where, lookup, not_available, opt
from .simulate import parse_simulate_options, simulated_blocks_json

ADDRESS = Param("address", parse_address_param)
BLOCK = opt("block", parse_block_ref, "latest")
"""An optional trailing block (number, tag, hash or EIP-1898 object); latest when absent."""
HASH = Param("hash", parse_hash_param)
NUMBER = Param("block", parse_number_or_tag)
INDEX = Param("index", parse_index)
FULL = Param("full", parse_bool)
CALL = Param("call", parse_call_request)
STATE_OVERRIDE = opt("stateOverride", parse_state_override, ())
BLOCK_OVERRIDES = opt("blockOverrides", parse_block_overrides)
FILTER = Param("filter", parse_log_filter)


def _json(value: Any, ctx: Context) -> Any:
    return to_json(value, ctx.fragments, ctx.answers)


def _header_json(block: Any, ctx: Context) -> Any:
    return block_json(block, False, ctx.fragments, ctx.answers)


def _quantity(value: int, ctx: Context) -> str:
    return hex(value)


def _raw_hex(found: Any, ctx: Context) -> str:
    raw_tx = found if isinstance(found, bytes) else encode_transaction(found.transaction)
    return "0x" + raw_tx.hex()


def _raw_transaction(get: Callable[..., Any]) -> Callable[..., Any]:
    """eth_getRawTransactionBy*: a transaction's encoding; "0x" (as geth, not null) for none."""
    return lookup(get, _raw_hex, missing="0x")


# -- blocks, receipts, logs ---------------------------------------------------------------------


def _block_loader(backend: Any, block_hash: Hash32, full: bool
                  ) -> Callable[[], Block | BlockOutline | None]:
    """What reads the block: with hashes only, its outline where the backend reads one, else the block."""
    if not full:
        outline = getattr(type(backend), "block_outline_by_hash", None)
        if outline is not None:
            return lambda: outline(backend, block_hash)
    return lambda: backend.block_by_hash(block_hash)


def _block_by_hash(scope: Scope, block_hash: Hash32, full: bool) -> Any:
    """As :func:`~ethread.methods.get_block_by_hash` answers, the block read only if not cached."""
    ctx = scope.ctx
    return block_json_by_hash(block_hash, full, _block_loader(scope.backend, block_hash, full),
                              ctx.fragments, ctx.answers)


def _block_by_number(scope: Scope, ref: BlockRef, full: bool) -> Any:
    """As :func:`~ethread.methods.get_block_by_number` answers, through :func:`_block_by_hash`."""
    block_hash = resolve_hash(scope.backend, ref)
    return None if block_hash is None else _block_by_hash(scope, block_hash, full)


def _block_receipts(scope: Scope, ref: BlockRef) -> Any:
    """As :func:`~ethread.methods.get_block_receipts` answers: the stored answer, else from the records."""
    backend, ctx = scope.backend, scope.ctx
    block_hash = resolve_hash(backend, ref)
    if block_hash is None:
        return None
    if ctx.stored_answers:
        stored = stored_receipts(backend, block_hash, ctx.answers)
        if stored is not None:
            return stored
    return block_receipts_json(block_hash, lambda: backend.receipts(block_hash), ctx.fragments,
                               ctx.answers)


def _transaction_receipt(scope: Scope, tx_hash: Hash32) -> Any:
    """As :func:`~ethread.methods.get_transaction_receipt` answers: the stored answer, if any."""
    backend, ctx = scope.backend, scope.ctx
    if ctx.stored_answers:
        stored = stored_receipt(backend, tx_hash, ctx.answers)
        if stored is not None:
            return stored
    receipt = get_transaction_receipt(backend, tx_hash)
    return None if receipt is None else _json(receipt, ctx)


def _logs(scope: Scope, log_filter: Any) -> Any:
    ctx = scope.ctx
    return _json(methods.get_logs(scope.backend, log_filter, ctx.log_limits), ctx)


# -- executing ----------------------------------------------------------------------------------


def _call(scope: Scope, request: Any, block: BlockRef, overrides: Any, block_overrides: Any) -> Any:
    ctx = scope.ctx
    return "0x" + methods.call(scope.backend, request, block, ctx.call_states,
                               state_override=overrides, block_overrides=block_overrides,
                               timeout=ctx.call_timeout).hex()


def _estimate_gas(scope: Scope, request: Any, block: BlockRef, overrides: Any,
                  block_overrides: Any) -> Any:
    ctx = scope.ctx
    return hex(methods.estimate_gas(scope.backend, request, block, ctx.call_states,
                                    state_override=overrides, block_overrides=block_overrides,
                                    timeout=ctx.call_timeout))


def _create_access_list(scope: Scope, request: Any, block: BlockRef, overrides: Any) -> Any:
    backend, ctx = scope.backend, scope.ctx
    return to_json(methods.create_access_list(
        backend, request, block, lambda: _tips(ctx).suggest_tip_cap(backend), ctx.call_states,
        state_override=overrides, timeout=ctx.call_timeout))


def _simulate(scope: Scope, options: Any, block: BlockRef) -> Any:
    ctx = scope.ctx
    blocks = simulate(scope.backend, options, block, timeout=ctx.call_timeout,
                      states=ctx.call_states)
    return simulated_blocks_json(blocks, options.return_full_transactions)


# -- account state ------------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(value, "[]string")
    return [parse_string_param(v) for v in value]


def _proof(scope: Scope, address: Address, texts: list[str], block: BlockRef) -> Any:
    if len(texts) > pool.MAX_PROOF_KEYS:
        raise InvalidParams(f"too many storage keys requested (max {pool.MAX_PROOF_KEYS}, got {len(texts)})")
    # Keys are read before the state, as geth does: a bad key is refused with no state access.
    keys = [decode_storage_key(text) for text in texts]
    return to_json(methods.get_proof(scope.backend, address, keys, block))


def _balance(scope: Scope, address: Address, block: BlockRef) -> Any:
    return hex(state.get_balance(scope.backend, address, block))


def _transaction_count(scope: Scope, address: Address, block: BlockRef) -> Any:
    return hex(state.get_transaction_count(scope.backend, address, block))


def _code(scope: Scope, address: Address, block: BlockRef) -> Any:
    return "0x" + state.get_code(scope.backend, address, block).hex()


def _storage_at(scope: Scope, address: Address, text: str, block: BlockRef) -> Any:
    # geth opens the state first and reads the key after: a missing block is reported first.
    view = state.state_at(scope.backend, block)
    return "0x" + view.storage(view.account(address), decode_storage_key(text)).hex()


def _storage_requests(value: Any) -> dict[bytes, list[bytes]]:
    if not isinstance(value, dict):
        raise wrong_type(value, "map[common.Address][]common.Hash")
    out: dict[bytes, list[bytes]] = {}
    for key, slots in value.items():
        address = parse_address(key, "Address")
        if slots is None:
            slots = []
        if not isinstance(slots, list):
            raise wrong_type(slots, "[]common.Hash")
        out[address] = [parse_hash_param(slot) for slot in slots]
    return out


def _storage_values(scope: Scope, requests: dict[bytes, list[bytes]], block: BlockRef) -> Any:
    values = state.get_storage_values(scope.backend, requests, block)
    return {"0x" + address.hex(): ["0x" + v.hex() for v in slots]
            for address, slots in values.items()}


def _account_info(scope: Scope, address: Address, block: BlockRef) -> Any:
    """eth_getAccountInfo (reth's, also anvil's): balance, nonce and code from one state."""
    view = state.state_at(scope.backend, block)
    account = view.account(address)
    return {"balance": hex(account.balance), "nonce": hex(account.nonce),
            "code": "0x" + view.code(address).hex()}


# -- the chain, fees, the node -----------------------------------------------------------------


def _chain_id(scope: Scope) -> Any:
    config = scope.backend.chain_config()
    return None if config is None else hex(config.chain_id)


def _block_number(scope: Scope) -> Any:
    return hex(scope.backend.pointer("latest") or 0)


def _fee_history(scope: Scope, count: int, newest: Any, percentiles: Any) -> Any:
    return fee_history_json(fees.fee_history(scope.backend, count, newest, percentiles))


def _tips(ctx: Context) -> fees.TipOracle:
    return ctx.tips if ctx.tips is not None else fees.TipOracle()


def _max_priority_fee(scope: Scope) -> Any:
    return hex(_tips(scope.ctx).suggest_tip_cap(scope.backend))


def _gas_price(scope: Scope) -> Any:
    tip = _tips(scope.ctx).suggest_tip_cap(scope.backend)
    return hex(fees.gas_price(tip, fees.head_base_fee(scope.backend)))


def _syncing(scope: Scope) -> Any:
    return node.syncing()


def _accounts(scope: Scope) -> Any:
    return ["0x" + a.hex() for a in node.accounts(scope.ctx.accounts)]


# -- polling filters ----------------------------------------------------------------------------


def _registry(scope: Scope) -> FilterRegistry:
    if scope.ctx.filters is None:
        # Filters live in a dispatcher; a bare call_method has nowhere to keep them.
        raise not_available(scope.method)
    return scope.ctx.filters


def _filter_id(value: Any) -> str:
    if not isinstance(value, str):
        raise wrong_type(value, "rpc.ID")
    return value


def _new_filter(scope: Scope, criteria: Any) -> Any:
    return _registry(scope).new_log_filter(scope.backend, criteria)


def _new_block_filter(scope: Scope) -> Any:
    return _registry(scope).new_block_filter(scope.backend)


def _new_pending_filter(scope: Scope) -> Any:
    return _registry(scope).new_pending_filter(scope.backend, scope.dev.pool_arrivals)


def _filter_changes(scope: Scope, filter_id: str) -> Any:
    ctx = scope.ctx
    changes = _registry(scope).changes(scope.backend, filter_id, ctx.log_limits)
    return ["0x" + c.hex() if isinstance(c, bytes) else _json(c, ctx) for c in changes]


def _filter_logs(scope: Scope, filter_id: str) -> Any:
    ctx = scope.ctx
    return _json(_registry(scope).logs(scope.backend, filter_id, ctx.log_limits), ctx)


def _uninstall_filter(scope: Scope, filter_id: str) -> Any:
    return _registry(scope).uninstall(filter_id)


FILTER_ID = Param("id", _filter_id)
BY_HASH = (HASH,)
BY_NUMBER = (NUMBER,)
BY_HASH_INDEX = (HASH, INDEX)
BY_NUMBER_INDEX = (NUMBER, INDEX)

ROWS = (
    Method("eth_chainId", _chain_id),
    Method("eth_blockNumber", _block_number),
    Method("eth_getBlockByHash", _block_by_hash, (HASH, FULL), 80, history=history.block_hash),
    Method("eth_getBlockByNumber", _block_by_number, (NUMBER, FULL), 80,
           history=history.block_number, pool=pool.block_by_number),
    Method("eth_getBlockReceipts", _block_receipts,
           (Param("block", lambda value: parse_block_ref(value, allow_decimal=True)),), 1000,
           history=history.block_receipts),
    Method("eth_getBlockTransactionCountByHash",
           lookup(counts.get_block_transaction_count_by_hash, _quantity), BY_HASH, 150,
           history=history.count("transactions", True)),
    Method("eth_getBlockTransactionCountByNumber",
           lookup(counts.get_block_transaction_count_by_number, _quantity), BY_NUMBER, 150,
           history=history.count("transactions", False)),
    Method("eth_getUncleCountByBlockHash", lookup(counts.get_uncle_count_by_block_hash, _quantity),
           BY_HASH, 150, history=history.count("uncles", True)),
    Method("eth_getUncleCountByBlockNumber",
           lookup(counts.get_uncle_count_by_block_number, _quantity), BY_NUMBER, 150,
           history=history.count("uncles", False)),
    Method("eth_getUncleByBlockHashAndIndex",
           lookup(get_uncle_by_block_hash_and_index, _header_json), BY_HASH_INDEX, 150,
           history=history.uncle_at(True)),
    Method("eth_getUncleByBlockNumberAndIndex",
           lookup(get_uncle_by_block_number_and_index, _header_json), BY_NUMBER_INDEX, 150,
           history=history.uncle_at(False)),
    Method("eth_getTransactionByHash", lookup(get_transaction_by_hash, _json), BY_HASH, 80,
           history=history.transaction, pool=pool.transaction_by_hash, served_pool=True),
    Method("eth_getTransactionByBlockHashAndIndex",
           lookup(get_transaction_by_block_hash_and_index, _json), BY_HASH_INDEX, 150,
           history=history.transaction_at(True, False)),
    Method("eth_getTransactionByBlockNumberAndIndex",
           lookup(get_transaction_by_block_number_and_index, _json), BY_NUMBER_INDEX, 150,
           history=history.transaction_at(False, False)),
    Method("eth_getRawTransactionByHash", _raw_transaction(raw.get_raw_transaction), BY_HASH,
           history=history.raw_transaction),
    Method("eth_getRawTransactionByBlockHashAndIndex",
           _raw_transaction(get_transaction_by_block_hash_and_index), BY_HASH_INDEX,
           history=history.transaction_at(True, True)),
    Method("eth_getRawTransactionByBlockNumberAndIndex",
           _raw_transaction(get_transaction_by_block_number_and_index), BY_NUMBER_INDEX,
           history=history.transaction_at(False, True)),
    Method("eth_getTransactionReceipt", _transaction_receipt, BY_HASH, 80,
           history=history.receipt),
    Method("eth_getLogs", _logs, (FILTER,), 255, slow=True, history=history.logs),
    Method("eth_call", _call, (CALL, BLOCK, STATE_OVERRIDE, BLOCK_OVERRIDES), 80, slow=True,
           pending=1),
    Method("eth_estimateGas", _estimate_gas, (CALL, BLOCK, STATE_OVERRIDE, BLOCK_OVERRIDES), 300,
           slow=True, pending=1),
    Method("eth_createAccessList", _create_access_list, (CALL, BLOCK, STATE_OVERRIDE), 80,
           slow=True, pending=1),
    Method("eth_simulateV1", _simulate, (Param("options", parse_simulate_options), BLOCK), 300,
           slow=True),
    Method("eth_getBalance", _balance, (ADDRESS, BLOCK), 80, pending=1),
    Method("eth_getTransactionCount", _transaction_count, (ADDRESS, BLOCK), 80,
           pool=pool.transaction_count, served_pool=True),
    Method("eth_getCode", _code, (ADDRESS, BLOCK), 80, pending=1),
    Method("eth_getStorageAt", _storage_at, (ADDRESS, Param("slot", parse_string_param), BLOCK), 80,
           pending=2),
    Method("eth_getStorageValues", _storage_values, (Param("requests", _storage_requests), BLOCK),
           80, slow=True),
    Method("eth_getProof", _proof, (ADDRESS, Param("keys", _strings), BLOCK), 150, slow=True,
           pool=pool.proof),
    Method("eth_getAccountInfo", _account_info, (ADDRESS, BLOCK)),
    Method("eth_feeHistory", _fee_history,
           (Param("blockCount", parse_hex_or_decimal), NUMBER,
            Param("rewardPercentiles", parse_percentiles)), 80, slow=True),
    Method("eth_gasPrice", _gas_price, (), 80, cacheable=False),
    Method("eth_maxPriorityFeePerGas", _max_priority_fee, (), 80, cacheable=False),
    Method("eth_blobBaseFee", lookup(fees.get_blob_base_fee, _quantity), (), 300),
    Method("eth_baseFee", lookup(fees.get_base_fee, _quantity), (), 80),
    Method("eth_config", lookup(get_config, lambda forks, ctx: chain_forks_json(forks)), (), 80),
    Method("eth_capabilities", lookup(get_capabilities, lambda found, ctx: capabilities_json(found)),
           (), 80),
    Method("eth_syncing", _syncing, (), 5),
    Method("eth_accounts", _accounts, (), 80),
    Method("eth_requestAccounts", _accounts),  # (EIP-1102; anvil answers it as eth_accounts)
    Method("eth_newFilter", _new_filter, (FILTER,), 80, cacheable=False),
    Method("eth_newBlockFilter", _new_block_filter, (), 80, cacheable=False),
    Method("eth_newPendingTransactionFilter", _new_pending_filter, where=Where.DEV_CHAIN,
           cacheable=False),
    Method("eth_getFilterChanges", _filter_changes, (FILTER_ID,), 140, cacheable=False, slow=True),
    Method("eth_getFilterLogs", _filter_logs, (FILTER_ID,), 255, cacheable=False, slow=True),
    Method("eth_uninstallFilter", _uninstall_filter, (FILTER_ID,), 80, cacheable=False),
)
