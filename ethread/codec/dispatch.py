"""The method table: each JSON-RPC method name to a handler that parses its params, calls the
pure method and writes the result as JSON bytes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import orjson

from .. import methods
from ..backend import Backend
from ..errors import EthreadError, InvalidParams, MethodNotFound, go_json_type
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
from ..methods.call import CallStates
from ..methods.capabilities import get_capabilities
from ..methods.config import get_config
from ..methods.fees import TipOracle
from ..methods.filters import FilterRegistry
from ..methods.logs import DEFAULT_LIMITS, LogLimits
from ..methods.resolve import resolve_hash
from ..methods.simulate import simulate
from ..models import Address, Block, BlockRef, Hash32
from ..rlpcodec.blocks import BlockOutline
from ..rlpcodec.transactions import encode_transaction
from .answers import DEFAULT_ANSWERS, AnswerStyle
from .client import CLIENT_VERSION
from .devfork import HISTORY_READS, NOT_HISTORY, HistoryRead, Local, read_history
from .devpending import NOT_PENDING, PENDING_READS, POOL_READS, PendingRead, PoolReads
from .devrpc import DEV_METHODS, DevControls, not_available
from .hex import (
    decode_storage_key,
    parse_address,
    parse_address_param,
    parse_bytes_param,
    parse_hash_param,
    parse_string_param,
)
from .params import (
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
from .parity_rpc import PARITY_METHODS
from .serialize import (
    FragmentCache,
    block_json,
    block_json_by_hash,
    block_receipts_json,
    capabilities_json,
    chain_forks_json,
    fee_history_json,
    to_json,
)
from .simulate import parse_simulate_options, simulated_blocks_json
from .stored_answers import stored_receipt, stored_receipts
from .trace_cache import RECORDED_METHOD, TraceCache
from .trace_rpc import MAX_TRACE_TIMEOUT, TRACE_METHODS, TraceHandler, TraceLimits
from .txpool_rpc import SEND_RAW_TRANSACTION, TXPOOL_METHODS, TxPoolService

DEFAULT_CALL_TIMEOUT = 5.0
MAX_PROOF_KEYS = 1024
"""Storage keys one eth_getProof call may ask for (geth's limit)."""


@dataclass(frozen=True, slots=True)
class Context:
    """What a handler may need besides the backend: the service's limits and the caches that
    live as long as the backend's dispatcher (give each dispatcher its own, see
    :meth:`for_backend`). Without caches every answer is computed and encoded afresh."""

    log_limits: LogLimits = DEFAULT_LIMITS
    answers: AnswerStyle = DEFAULT_ANSWERS
    """Which geth release's answers to give (:mod:`ethread.codec.answers`): geth 1.17's by
    default, ``GETH_1_16`` for transaction objects without ``blockTimestamp``."""
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    """Seconds an eth_call (and gas estimation, access list creation) may execute (geth's
    ``--rpc.evmtimeout``); None: no limit."""
    trace_timeout: float = MAX_TRACE_TIMEOUT
    """The longest a trace may run, whatever ``timeout`` its request asks for (a server's
    ``trace_timeout_seconds``)."""
    fragments: FragmentCache | None = field(default=None, compare=False)
    stored_answers: bool = True
    """Whether answers a store keeps beside its blocks are read (:mod:`ethread.codec.
    stored_answers`); False: every answer is derived from the records (the plain path, which
    the tests and benchmarks compare with)."""
    call_states: CallStates | None = field(default=None, compare=False)
    accounts: tuple[Address, ...] = ()
    """What eth_accounts lists: a dev chain's accounts, else none (the hook a dev chain fills)."""
    filters: FilterRegistry | None = field(default=None, compare=False)
    """The polling filters of the dispatcher."""
    tips: TipOracle | None = field(default=None, compare=False)
    """The gas price oracle's memory (the last head it priced and its price)."""
    traces: TraceCache | None = field(default=None, compare=False)
    """Traces of mined transactions, once made (:mod:`ethread.codec.trace_cache`)."""
    answer_bytes: int | None = None
    """The service's bound on one answer in bytes (a server's ``max_response_bytes``): an
    opcode log stops with -32003 once past it (None: the tracers' own bound)."""

    dev: DevControls | None = field(default=None, compare=False)
    """The dev chain when the network is one: it enables sending and the test controls."""
    txpool: TxPoolService | None = field(default=None, compare=False)
    """A served chain's transaction pool (``--txpool``): sending, txpool_* and testing_*."""

    def for_dev_chain(self, chain: DevControls, accounts: tuple[Address, ...]) -> Context:
        """This context on a dev chain's network: sending and test controls on, and
        eth_accounts listing ``accounts`` (the chain's dev accounts, unlocked)."""
        return replace(self, dev=chain, accounts=accounts, txpool=chain.served_pool)

    def for_txpool(self, pool: TxPoolService) -> Context:
        """This context on a network with a transaction pool."""
        return replace(self, txpool=pool)

    def for_backend(self) -> Context:
        """These limits with fresh caches, for one backend's dispatcher."""
        return replace(self, fragments=FragmentCache(), call_states=CallStates(),
                       filters=FilterRegistry(), tips=TipOracle(), traces=TraceCache())


DEFAULT_CONTEXT = Context()
Params = list[Any]
Handler = Callable[[Backend, Params, Context], Any]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """How the dispatcher answers one JSON-RPC method: its handler, how many parameters it requires
    and accepts, and whether its answers can be cached."""

    handler: Handler
    required: int
    optional: int = 0
    cacheable: bool = True
    """The answer depends only on the chain (and so on the backend's generation)."""
    dev_only: bool = False
    """Answered only on a dev chain's network (-32601 elsewhere)."""
    takes_transactions: bool = False
    """Answered only where transactions are taken: a dev chain's network or a served chain
    with a pool (-32601 elsewhere, before its parameters are read)."""
    reads_pool: bool = False
    """On a dev chain's network the answer may come from its pool, which changes with no
    new block: not cached there."""
    reads_served_pool: bool = False
    """The same on a served chain's network with a pool (``--txpool``)."""
    pending_param: int | None = None
    """Where the block parameter is, for a method that reads a dev chain's pending state
    when it is "pending" (that answer changes with the pool, with no new block: not cached)."""

    def cacheable_in(self, ctx: Context, params: Params | None = None) -> bool:
        """Whether answers may be cached on a network with this context (for ``params``:
        unknown, any answer)."""
        if not self.cacheable or (self.reads_pool and ctx.dev is not None) or (
                self.reads_served_pool and ctx.txpool is not None):
            return False
        position = self.pending_param
        if position is None or ctx.dev is None:
            return True
        return params is not None and not (len(params) > position and params[position] == "pending")


def _arg(params: Params, index: int, parse: Callable[[Any], Any]) -> Any:
    """Parse one positional argument, naming its position in any error, as geth does."""
    try:
        return parse(params[index])
    except InvalidParams as exc:
        raise InvalidParams(f"invalid argument {index}: {exc.message}", exc.data) from None


Render = Callable[[Any, "Context"], Any]


def _lookup(get: Callable[..., Any], parsers: tuple[Callable[[Any], Any], ...],
            render: Render) -> Handler:
    """A method that looks one thing up by its positional arguments (each read by its parser)
    and answers null when nothing is held, else the thing ``render``ed: transactions, uncles,
    receipts, counts and raw encodings."""
    indexed = tuple(enumerate(parsers))

    def handler(backend: Backend, params: Params, ctx: Context) -> Any:
        value = get(backend, *[_arg(params, index, parse) for index, parse in indexed])
        return None if value is None else render(value, ctx)

    return handler


def _json(value: Any, ctx: Context) -> Any:
    return to_json(value, ctx.fragments, ctx.answers)


def _header_json(block: Any, ctx: Context) -> Any:
    return block_json(block, False, ctx.fragments, ctx.answers)


def _quantity(value: int, ctx: Context) -> str:
    return hex(value)


def _data(value: bytes, ctx: Context) -> str:
    return "0x" + value.hex()


def _data_list(values: tuple[bytes, ...], ctx: Context) -> list[str]:
    return ["0x" + value.hex() for value in values]


def _block_ref_or_decimal(value: Any) -> BlockRef:
    return parse_block_ref(value, allow_decimal=True)


def _get_block_by_hash(backend: Backend, params: Params, ctx: Context) -> Any:
    """As :func:`~ethread.methods.get_block_by_hash` answers; the block is read only when no
    fragment holds the answer (see :func:`~ethread.codec.serialize.block_json_by_hash`)."""
    block_hash = _arg(params, 0, parse_hash_param)
    full = _arg(params, 1, parse_bool)
    return block_json_by_hash(block_hash, full, _block_loader(backend, block_hash, full),
                              ctx.fragments, ctx.answers)


def _get_block_by_number(backend: Backend, params: Params, ctx: Context) -> Any:
    """As :func:`~ethread.methods.get_block_by_number` answers, the hash read from the
    canonical index (no header decoded) and the block only when no fragment holds the
    answer."""
    block_hash = resolve_hash(backend, _arg(params, 0, parse_number_or_tag))
    full = _arg(params, 1, parse_bool)
    if block_hash is None:
        return None
    return block_json_by_hash(block_hash, full, _block_loader(backend, block_hash, full),
                              ctx.fragments, ctx.answers)


def _block_loader(backend: Backend, block_hash: Hash32, full: bool
                  ) -> Callable[[], Block | BlockOutline | None]:
    """What reads the block for its object: with transaction hashes only, its outline where
    the backend reads one from its records without decoding a transaction (a store's
    :meth:`~ethread.backends.history.HistoryBackend.block_outline_by_hash`), else the block."""
    if not full:
        outline = getattr(type(backend), "block_outline_by_hash", None)
        if outline is not None:
            return lambda: outline(backend, block_hash)
    return lambda: backend.block_by_hash(block_hash)


def _get_block_receipts(backend: Backend, params: Params, ctx: Context) -> Any:
    """As :func:`~ethread.methods.get_block_receipts` answers: the answer the store keeps beside
    the block when it keeps one (:func:`~ethread.codec.stored_answers.stored_receipts`), else
    derived from the records, with its JSON kept by block hash (see
    :func:`~ethread.codec.serialize.block_receipts_json`)."""
    block_hash = resolve_hash(backend, _arg(params, 0, _block_ref_or_decimal))
    if block_hash is None:
        return None
    if ctx.stored_answers:
        stored = stored_receipts(backend, block_hash, ctx.answers)
        if stored is not None:
            return stored
    return block_receipts_json(block_hash, lambda: backend.receipts(block_hash), ctx.fragments,
                               ctx.answers)


def _get_transaction_receipt(backend: Backend, params: Params, ctx: Context) -> Any:
    """As :func:`~ethread.methods.get_transaction_receipt` answers: from the answer the store
    keeps beside the transaction's block when it keeps one
    (:func:`~ethread.codec.stored_answers.stored_receipt`), else from the block's receipts."""
    tx_hash = _arg(params, 0, parse_hash_param)
    if ctx.stored_answers:
        stored = stored_receipt(backend, tx_hash, ctx.answers)
        if stored is not None:
            return stored
    receipt = get_transaction_receipt(backend, tx_hash)
    return None if receipt is None else _json(receipt, ctx)


def _get_logs(backend: Backend, params: Params, ctx: Context) -> Any:
    return to_json(methods.get_logs(backend, _arg(params, 0, parse_log_filter), ctx.log_limits),
                   ctx.fragments, ctx.answers)


def _optional(params: Params, index: int, parse: Callable[[Any], Any], default: Any) -> Any:
    if len(params) > index and params[index] is not None:
        return _arg(params, index, parse)
    return default


def _call(backend: Backend, params: Params, ctx: Context) -> Any:
    request = _arg(params, 0, parse_call_request)
    block: BlockRef = _optional(params, 1, parse_block_ref, "latest")
    return "0x" + methods.call(
        backend, request, block, ctx.call_states,
        state_override=_optional(params, 2, parse_state_override, ()),
        block_overrides=_optional(params, 3, parse_block_overrides, None),
        timeout=ctx.call_timeout,
    ).hex()


def _estimate_gas(backend: Backend, params: Params, ctx: Context) -> Any:
    request = _arg(params, 0, parse_call_request)
    block: BlockRef = _optional(params, 1, parse_block_ref, "latest")
    return hex(methods.estimate_gas(
        backend, request, block, ctx.call_states,
        state_override=_optional(params, 2, parse_state_override, ()),
        block_overrides=_optional(params, 3, parse_block_overrides, None),
        timeout=ctx.call_timeout,
    ))


def _create_access_list(backend: Backend, params: Params, ctx: Context) -> Any:
    request = _arg(params, 0, parse_call_request)
    block: BlockRef = _optional(params, 1, parse_block_ref, "latest")
    return to_json(methods.create_access_list(
        backend, request, block, lambda: _tips(ctx).suggest_tip_cap(backend), ctx.call_states,
        state_override=_optional(params, 2, parse_state_override, ()),
        timeout=ctx.call_timeout,
    ))


def _simulate(backend: Backend, params: Params, ctx: Context) -> Any:
    options = _arg(params, 0, parse_simulate_options)
    block: BlockRef = _optional(params, 1, parse_block_ref, "latest")
    blocks = simulate(backend, options, block, timeout=ctx.call_timeout, states=ctx.call_states)
    return simulated_blocks_json(blocks, options.return_full_transactions)


def _strings(value: Any, typename: str = "[]string") -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type {typename}")
    return [parse_string_param(v) for v in value]


def _get_proof(backend: Backend, params: Params, ctx: Context) -> Any:
    address = _arg(params, 0, parse_address_param)
    texts = _arg(params, 1, _strings)
    block = _optional_block(params, 2)
    if len(texts) > MAX_PROOF_KEYS:
        raise InvalidParams(f"too many storage keys requested (max {MAX_PROOF_KEYS}, got {len(texts)})")
    # Keys are read before the state, as geth does: a bad key is refused with no state access.
    keys = [decode_storage_key(text) for text in texts]
    return to_json(methods.get_proof(backend, address, keys, block))


def _optional_block(params: Params, index: int) -> BlockRef:
    """An optional trailing block (number, tag, hash or EIP-1898 object); latest when absent."""
    if len(params) > index and params[index] is not None:
        return _arg(params, index, parse_block_ref)  # type: ignore[no-any-return]
    return "latest"


def _chain_id(backend: Backend, params: Params, ctx: Context) -> Any:
    config = backend.chain_config()
    return None if config is None else hex(config.chain_id)


def _net_version(backend: Backend, params: Params, ctx: Context) -> Any:
    config = backend.chain_config()
    return None if config is None else str(config.chain_id)


def _block_number(backend: Backend, params: Params, ctx: Context) -> Any:
    head = backend.pointer("latest")
    return hex(head or 0)


def _client_version(backend: Backend, params: Params, ctx: Context) -> Any:
    return CLIENT_VERSION


# -- account state -----------------------------------------------------------------------------


def _get_balance(backend: Backend, params: Params, ctx: Context) -> Any:
    return hex(state.get_balance(backend, _arg(params, 0, parse_address_param),
                                 _optional_block(params, 1)))


def _get_transaction_count(backend: Backend, params: Params, ctx: Context) -> Any:
    return hex(state.get_transaction_count(backend, _arg(params, 0, parse_address_param),
                                           _optional_block(params, 1)))


def _get_code(backend: Backend, params: Params, ctx: Context) -> Any:
    return "0x" + state.get_code(backend, _arg(params, 0, parse_address_param),
                                 _optional_block(params, 1)).hex()


def _get_storage_at(backend: Backend, params: Params, ctx: Context) -> Any:
    address = _arg(params, 0, parse_address_param)
    text = _arg(params, 1, parse_string_param)
    # geth opens the state first and reads the key after: a missing block is reported first.
    view = state.state_at(backend, _optional_block(params, 2))
    return "0x" + view.storage(view.account(address), decode_storage_key(text)).hex()


def _storage_requests(value: Any) -> dict[bytes, list[bytes]]:
    if not isinstance(value, dict):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type "
                            "map[common.Address][]common.Hash")
    out: dict[bytes, list[bytes]] = {}
    for key, slots in value.items():
        address = parse_address(key, "Address")
        if slots is None:
            slots = []
        if not isinstance(slots, list):
            raise InvalidParams(f"json: cannot unmarshal {go_json_type(slots)} into Go value of "
                                "type []common.Hash")
        out[address] = [parse_hash_param(slot) for slot in slots]
    return out


def _get_storage_values(backend: Backend, params: Params, ctx: Context) -> Any:
    values = state.get_storage_values(backend, _arg(params, 0, _storage_requests),
                                      _optional_block(params, 1))
    return {"0x" + address.hex(): ["0x" + v.hex() for v in slots]
            for address, slots in values.items()}


# -- receipts, counts, raw encodings -------------------------------------------------------------


# -- fees ---------------------------------------------------------------------------------------


def _fee_history(backend: Backend, params: Params, ctx: Context) -> Any:
    count = _arg(params, 0, parse_hex_or_decimal)
    newest = _arg(params, 1, parse_number_or_tag)
    percentiles = _arg(params, 2, parse_percentiles)
    return fee_history_json(fees.fee_history(backend, count, newest, percentiles))


def _tips(ctx: Context) -> fees.TipOracle:
    return ctx.tips if ctx.tips is not None else fees.TipOracle()


def _max_priority_fee(backend: Backend, params: Params, ctx: Context) -> Any:
    return hex(_tips(ctx).suggest_tip_cap(backend))


def _gas_price(backend: Backend, params: Params, ctx: Context) -> Any:
    tip = _tips(ctx).suggest_tip_cap(backend)
    return hex(fees.gas_price(tip, fees.head_base_fee(backend)))


def _blob_base_fee(backend: Backend, params: Params, ctx: Context) -> Any:
    fee = fees.get_blob_base_fee(backend)
    return None if fee is None else hex(fee)


def _base_fee(backend: Backend, params: Params, ctx: Context) -> Any:
    fee = fees.get_base_fee(backend)
    return None if fee is None else hex(fee)


# -- the chain's configuration and what the node serves ------------------------------------------


def _config(backend: Backend, params: Params, ctx: Context) -> Any:
    forks = get_config(backend)
    return None if forks is None else chain_forks_json(forks)


def _capabilities(backend: Backend, params: Params, ctx: Context) -> Any:
    capabilities = get_capabilities(backend)
    return None if capabilities is None else capabilities_json(capabilities)


# -- the node -----------------------------------------------------------------------------------


def _syncing(backend: Backend, params: Params, ctx: Context) -> Any:
    return node.syncing()


def _accounts(backend: Backend, params: Params, ctx: Context) -> Any:
    return ["0x" + a.hex() for a in node.accounts(ctx.accounts)]


def _listening(backend: Backend, params: Params, ctx: Context) -> Any:
    return node.listening()


def _peer_count(backend: Backend, params: Params, ctx: Context) -> Any:
    return hex(node.peer_count())


def _sha3(backend: Backend, params: Params, ctx: Context) -> Any:
    return "0x" + node.sha3(_arg(params, 0, parse_bytes_param)).hex()


# -- polling filters ----------------------------------------------------------------------------


def _registry(ctx: Context, method: str) -> FilterRegistry:
    if ctx.filters is None:
        # Filters live in a dispatcher; a bare call_method has nowhere to keep them.
        raise MethodNotFound(f"the method {method} does not exist/is not available")
    return ctx.filters


def _filter_id(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type rpc.ID")
    return value


def _new_filter(backend: Backend, params: Params, ctx: Context) -> Any:
    criteria = _arg(params, 0, parse_log_filter)
    return _registry(ctx, "eth_newFilter").new_log_filter(backend, criteria)


def _new_block_filter(backend: Backend, params: Params, ctx: Context) -> Any:
    return _registry(ctx, "eth_newBlockFilter").new_block_filter(backend)


def _filter_changes(backend: Backend, params: Params, ctx: Context) -> Any:
    changes = _registry(ctx, "eth_getFilterChanges").changes(
        backend, _arg(params, 0, _filter_id), ctx.log_limits)
    return ["0x" + c.hex() if isinstance(c, bytes) else to_json(c, ctx.fragments, ctx.answers)
            for c in changes]


def _filter_logs(backend: Backend, params: Params, ctx: Context) -> Any:
    return to_json(_registry(ctx, "eth_getFilterLogs").logs(
        backend, _arg(params, 0, _filter_id), ctx.log_limits), ctx.fragments, ctx.answers)


def _uninstall_filter(backend: Backend, params: Params, ctx: Context) -> Any:
    return _registry(ctx, "eth_uninstallFilter").uninstall(_arg(params, 0, _filter_id))


_BY_HASH = (parse_hash_param,)
_BY_NUMBER = (parse_number_or_tag,)
_BY_HASH_INDEX = (parse_hash_param, parse_index)
_BY_NUMBER_INDEX = (parse_number_or_tag, parse_index)
_BY_REF = (parse_block_ref,)
_BY_REF_OR_DECIMAL = (_block_ref_or_decimal,)


_LOOKUPS: dict[str, tuple[Callable[..., Any], tuple[Callable[[Any], Any], ...], Render]] = {
    "eth_getUncleByBlockNumberAndIndex": (get_uncle_by_block_number_and_index, _BY_NUMBER_INDEX, _header_json),
    "eth_getUncleByBlockHashAndIndex": (get_uncle_by_block_hash_and_index, _BY_HASH_INDEX, _header_json),
    "eth_getTransactionByHash": (get_transaction_by_hash, _BY_HASH, _json),
    "eth_getTransactionByBlockHashAndIndex": (get_transaction_by_block_hash_and_index, _BY_HASH_INDEX, _json),
    "eth_getTransactionByBlockNumberAndIndex": (get_transaction_by_block_number_and_index, _BY_NUMBER_INDEX, _json),
    "eth_getBlockTransactionCountByHash": (counts.get_block_transaction_count_by_hash, _BY_HASH, _quantity),
    "eth_getBlockTransactionCountByNumber": (counts.get_block_transaction_count_by_number, _BY_NUMBER, _quantity),
    "eth_getUncleCountByBlockHash": (counts.get_uncle_count_by_block_hash, _BY_HASH, _quantity),
    "eth_getUncleCountByBlockNumber": (counts.get_uncle_count_by_block_number, _BY_NUMBER, _quantity),
    "debug_getRawHeader": (raw.get_raw_header, _BY_REF, _data),
    "debug_getRawBlock": (raw.get_raw_block, _BY_REF, _data),
    "debug_getRawReceipts": (raw.get_raw_receipts, _BY_REF, _data_list),
    "debug_getRawTransaction": (raw.get_raw_transaction, _BY_HASH, _data),
}
"""The methods that look one thing up: the getter, a parser per argument (all required), and
how a found thing is rendered; see :func:`_lookup`."""


def _raw_transaction(get: Callable[..., Any], parsers: tuple[Callable[[Any], Any], ...]) -> Handler:
    """eth_getRawTransactionBy*: a transaction's canonical encoding; "0x" when there is none (geth
    returns its empty byte string, not null, for an unknown hash, block or index)."""
    indexed = tuple(enumerate(parsers))

    def handler(backend: Backend, params: Params, ctx: Context) -> Any:
        found = get(backend, *[_arg(params, index, parse) for index, parse in indexed])
        if found is None:
            return "0x"
        raw_tx = found if isinstance(found, bytes) else encode_transaction(found.transaction)
        return "0x" + raw_tx.hex()

    return handler


def _get_account_info(backend: Backend, params: Params, ctx: Context) -> Any:
    """eth_getAccountInfo (reth's, also anvil's): balance, nonce and code from one state."""
    address = _arg(params, 0, parse_address_param)
    view = state.state_at(backend, _optional_block(params, 1))
    account = view.account(address)
    return {"balance": hex(account.balance), "nonce": hex(account.nonce),
            "code": "0x" + view.code(address).hex()}


METHODS: dict[str, MethodSpec] = {
    "eth_getLogs": MethodSpec(_get_logs, 1),
    "eth_getBlockByHash": MethodSpec(_get_block_by_hash, 2),
    "eth_getBlockByNumber": MethodSpec(_get_block_by_number, 2),
    "eth_getBlockReceipts": MethodSpec(_get_block_receipts, 1),
    "eth_call": MethodSpec(_call, 1, 3),
    "eth_estimateGas": MethodSpec(_estimate_gas, 1, 3),
    "eth_createAccessList": MethodSpec(_create_access_list, 1, 2),
    "eth_simulateV1": MethodSpec(_simulate, 1, 1),
    "eth_getProof": MethodSpec(_get_proof, 2, 1),
    "eth_chainId": MethodSpec(_chain_id, 0),
    "eth_blockNumber": MethodSpec(_block_number, 0),
    "net_version": MethodSpec(_net_version, 0),
    "web3_clientVersion": MethodSpec(_client_version, 0),
    "eth_getBalance": MethodSpec(_get_balance, 1, 1),
    "eth_getTransactionCount": MethodSpec(_get_transaction_count, 1, 1),
    "eth_getCode": MethodSpec(_get_code, 1, 1),
    "eth_getStorageAt": MethodSpec(_get_storage_at, 2, 1),
    "eth_getStorageValues": MethodSpec(_get_storage_values, 1, 1),
    "eth_feeHistory": MethodSpec(_fee_history, 3),
    "eth_gasPrice": MethodSpec(_gas_price, 0, cacheable=False),
    "eth_maxPriorityFeePerGas": MethodSpec(_max_priority_fee, 0, cacheable=False),
    "eth_blobBaseFee": MethodSpec(_blob_base_fee, 0),
    "eth_baseFee": MethodSpec(_base_fee, 0),
    "eth_config": MethodSpec(_config, 0),
    "eth_capabilities": MethodSpec(_capabilities, 0),
    "eth_syncing": MethodSpec(_syncing, 0),
    "eth_accounts": MethodSpec(_accounts, 0),
    "eth_requestAccounts": MethodSpec(_accounts, 0),  # (EIP-1102; anvil answers it as eth_accounts)
    "net_listening": MethodSpec(_listening, 0),
    "net_peerCount": MethodSpec(_peer_count, 0),
    "web3_sha3": MethodSpec(_sha3, 1),
    "eth_newFilter": MethodSpec(_new_filter, 1, cacheable=False),
    "eth_newBlockFilter": MethodSpec(_new_block_filter, 0, cacheable=False),
    "eth_getFilterChanges": MethodSpec(_filter_changes, 1, cacheable=False),
    "eth_getFilterLogs": MethodSpec(_filter_logs, 1, cacheable=False),
    "eth_uninstallFilter": MethodSpec(_uninstall_filter, 1, cacheable=False),
    **{name: MethodSpec(_lookup(get, parsers, render), len(parsers))
       for name, (get, parsers, render) in _LOOKUPS.items()},
    "eth_getTransactionReceipt": MethodSpec(_get_transaction_receipt, 1),
    "eth_getAccountInfo": MethodSpec(_get_account_info, 1, 1),
    "eth_getRawTransactionByHash": MethodSpec(_raw_transaction(raw.get_raw_transaction, _BY_HASH), 1),
    "eth_getRawTransactionByBlockHashAndIndex": MethodSpec(
        _raw_transaction(get_transaction_by_block_hash_and_index, _BY_HASH_INDEX), 2),
    "eth_getRawTransactionByBlockNumberAndIndex": MethodSpec(
        _raw_transaction(get_transaction_by_block_number_and_index, _BY_NUMBER_INDEX), 2),
}


_Part = TypeVar("_Part")


def _served_by(name: str, part: Callable[[Context], _Part | None],
               handler: Callable[[_Part, Params], Any]) -> Handler:
    """``handler`` run on the part of the network it serves (``part`` of the context: its dev
    chain, its served pool); -32601 on a network without one, as a node without it answers."""
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        target = part(ctx)
        if target is None:
            raise not_available(name)
        return handler(target, params)

    return run


def _dev_chain(ctx: Context) -> DevControls | None:
    return ctx.dev


def _served_pool(ctx: Context) -> TxPoolService | None:
    return ctx.txpool


METHODS.update({
    name: MethodSpec(_served_by(name, _dev_chain, handler), required, optional, cacheable=False,
                     dev_only=True)
    for name, (handler, required, optional) in DEV_METHODS.items()
})


def _pool_first(spec: MethodSpec, read: PendingRead) -> MethodSpec:
    """``spec`` answered from a dev chain's pool first (a pending transaction, nonce or
    block), from the chain otherwise."""
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        if ctx.dev is not None:
            answer = read(ctx.dev, params, ctx.answers)
            if answer is not NOT_PENDING:
                return answer
        return spec.handler(backend, params, ctx)

    return replace(spec, handler=run, reads_pool=True)


def _new_pending_filter(backend: Backend, params: Params, ctx: Context) -> Any:
    assert ctx.dev is not None  # (dev_only)
    return _registry(ctx, "eth_newPendingTransactionFilter").new_pending_filter(
        backend, ctx.dev.pool_arrivals)


def _history_first(spec: MethodSpec, read: HistoryRead) -> MethodSpec:
    """``spec`` answered from the forked node on a forked dev chain when the parameters
    name its history (at or below the fork block), from the chain otherwise."""
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        history = ctx.dev.fork_history if ctx.dev is not None else None
        if history is not None:
            local = Local(backend, lambda other: spec.handler(backend, other, ctx),
                          ctx.log_limits.max_results, ctx.log_limits.max_parameters)
            answer = read_history(read, history, params, local)
            if answer is not NOT_HISTORY:
                return answer
        return spec.handler(backend, params, ctx)

    return replace(spec, handler=run)


METHODS.update({name: _history_first(METHODS[name], read) for name, read in HISTORY_READS.items()})
METHODS.update({name: _pool_first(METHODS[name], read) for name, read in PENDING_READS.items()})


def _served_pool_first(spec: MethodSpec, read: Callable[[PoolReads, Params, AnswerStyle], Any],
                       ) -> MethodSpec:
    """``spec`` answered from a served chain's pool first (``--txpool``: a pooled
    transaction, a pending nonce), as a dev chain answers it, from the chain otherwise."""
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        if ctx.dev is None and ctx.txpool is not None:
            answer = read(ctx.txpool, params, ctx.answers)
            if answer is not NOT_PENDING:
                return answer
        return spec.handler(backend, params, ctx)

    return replace(spec, handler=run, reads_served_pool=True)


METHODS.update({name: _served_pool_first(METHODS[name], read) for name, read in POOL_READS.items()})


def _pending_state_first(spec: MethodSpec, position: int) -> MethodSpec:
    """``spec`` read from a dev chain's pending state when its block parameter (at
    ``position``) is "pending": the chain with the block it would mine now as its head."""
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        if ctx.dev is not None and len(params) > position and params[position] == "pending":
            # (the pending state changes with no new block: no call states kept for it)
            return spec.handler(ctx.dev.pending_state(), params, replace(ctx, call_states=None))
        return spec.handler(backend, params, ctx)

    return replace(spec, handler=run, pending_param=position)


PENDING_STATE_READS = {"eth_getBalance": 1, "eth_getCode": 1, "eth_getStorageAt": 2,
                       "eth_call": 1, "eth_estimateGas": 1, "eth_createAccessList": 1}
"""Methods that read state at a block, and where their block parameter is."""
METHODS.update({name: _pending_state_first(METHODS[name], position)
                for name, position in PENDING_STATE_READS.items()})
METHODS["eth_newPendingTransactionFilter"] = MethodSpec(_new_pending_filter, 0, cacheable=False,
                                                        dev_only=True)



def _send_raw_transaction(backend: Backend, params: Params, ctx: Context) -> Any:
    """A dev chain's sending, else a served chain's pool, else -32601 (a read-only chain)."""
    if ctx.dev is not None:
        return DEV_METHODS["eth_sendRawTransaction"][0](ctx.dev, params)
    if ctx.txpool is not None:
        return SEND_RAW_TRANSACTION(ctx.txpool, params)
    raise not_available("eth_sendRawTransaction")


METHODS.update({
    name: MethodSpec(_served_by(name, _served_pool, handler), required, optional,
                     cacheable=False, takes_transactions=True)
    for name, (handler, required, optional) in TXPOOL_METHODS.items()
})
METHODS["eth_sendRawTransaction"] = MethodSpec(_send_raw_transaction, 1, cacheable=False,
                                               takes_transactions=True)


def _trace_method(name: str, handler: TraceHandler) -> Handler:
    def run(backend: Backend, params: Params, ctx: Context) -> Any:
        cache = ctx.traces
        limits = (TraceLimits(ctx.trace_timeout) if ctx.answer_bytes is None
                  else TraceLimits(ctx.trace_timeout, ctx.answer_bytes))
        if cache is None:
            return handler(backend, params, limits, None)
        if name == RECORDED_METHOD and cache.recording:
            recorded = cache.recorded(backend, params)
            if recorded is not None:
                return orjson.Fragment(recorded)
        return cache.answer(cache.key(backend, name, params),
                            lambda: handler(backend, params, limits, cache.replays))

    return run


METHODS.update({  # (a trace is a function of the chain and the parameters, as eth_call's
    # answer is: kept in the answer cache, a repeated one is answered before any thread hop)
    name: MethodSpec(_trace_method(name, handler), required, optional)
    for name, (handler, required, optional) in (TRACE_METHODS | PARITY_METHODS).items()
})


def check_arity(spec: MethodSpec, params: Params) -> None:
    """geth's wording for too few or too many positional arguments."""
    if len(params) > spec.required + spec.optional:
        raise InvalidParams(f"too many arguments, want at most {spec.required + spec.optional}")
    for index in range(spec.required):
        if index >= len(params):
            raise InvalidParams(f"missing value for required argument {index}")


def call_method(backend: Backend, method: str, params: Params,
                ctx: Context = DEFAULT_CONTEXT) -> bytes:
    """Run one method and return its result as JSON bytes. Raises EthreadError."""
    spec = METHODS[method]
    if (spec.dev_only and ctx.dev is None) or (
            spec.takes_transactions and ctx.dev is None and ctx.txpool is None):
        raise not_available(method)
    check_arity(spec, params)
    return orjson.dumps(spec.handler(backend, params, ctx))


__all__ = ["METHODS", "Context", "EthreadError", "MethodSpec", "call_method"]
