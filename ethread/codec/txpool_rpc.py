"""The JSON-RPC methods of a network with a transaction pool (``ethread serve --txpool``):
eth_sendRawTransaction into the pool, geth's ``txpool_*`` reads and the ``testing_``
namespace's block building. A network without a pool answers each -32601, as today.

The pool itself lives in :mod:`ethread.devchain.txpool`; here are only the parameters in,
the answers out, and :class:`TxPoolService`, what these methods ask of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from eth_utils import to_checksum_address

from ..errors import InvalidParams, go_json_type
from ..models import Address, Hash32, Header, Transaction, Withdrawal
from .hex import parse_address, parse_address_param, parse_bytes_param, parse_hash, parse_quantity
from .serialize import to_json

MAX_RAW_TRANSACTION = 2 * 1024 * 1024
"""The longest raw transaction taken (hex decoded): above the largest blob transaction the
pool could hold; the pool refuses anything past its own limits in geth's words."""
MAX_WITHDRAWALS = 65536
MAX_BUILD_TRANSACTIONS = 10_000


@dataclass(frozen=True, slots=True)
class PayloadAttributes:
    """The engine API's payload attributes: what the consensus layer fixes of a new block."""

    timestamp: int
    prev_randao: Hash32
    fee_recipient: Address
    withdrawals: tuple[Withdrawal, ...] | None
    beacon_root: Hash32 | None


class PooledView(Protocol):
    """A pooled transaction as the answers need it."""

    @property
    def tx(self) -> Transaction: ...

    @property
    def hash(self) -> Hash32: ...

    @property
    def sender(self) -> Address: ...


class ContentView(Protocol):
    @property
    def pending(self) -> dict[Address, list[Any]]: ...

    @property
    def queued(self) -> dict[Address, list[Any]]: ...


class SidecarView(Protocol):
    @property
    def blobs(self) -> tuple[bytes, ...]: ...

    @property
    def commitments(self) -> tuple[bytes, ...]: ...

    @property
    def proofs(self) -> tuple[bytes, ...]: ...


class PayloadView(Protocol):
    """A built block as the engine API hands it out."""

    @property
    def header(self) -> Header: ...

    @property
    def transactions(self) -> tuple[bytes, ...]: ...

    @property
    def withdrawals(self) -> tuple[Withdrawal, ...] | None: ...

    @property
    def block_value(self) -> int: ...

    @property
    def sidecars(self) -> Sequence[Any]: ...

    @property
    def requests(self) -> tuple[bytes, ...] | None: ...


class TxPoolService(Protocol):
    """What these methods ask of a network's pool (:class:`ethread.devchain.ServedPool`)."""

    def submit(self, raw: bytes) -> Hash32:
        """Decode a signed transaction, check it and keep it; its hash."""
        ...

    def pending_transaction(self, tx_hash: Hash32) -> PooledView | None:
        """The pooled transaction with this hash that no block has taken yet, or None."""
        ...

    def next_nonce(self, address: Address) -> int:
        """The nonce ``address``'s next transaction takes, its pooled ones counted."""
        ...

    def status(self) -> tuple[int, int]:
        """How many transactions are pending and how many queued."""
        ...

    def content(self) -> ContentView:
        """The pooled transactions, pending and queued, by sender."""
        ...

    def content_from(self, address: Address) -> ContentView:
        """:meth:`content` of one sender."""
        ...

    def build_block(self, parent_hash: Hash32, attributes: PayloadAttributes,
                    transactions: list[bytes] | None, extra_data: bytes) -> PayloadView:
        """A block on ``parent_hash``, of ``transactions`` or else of the pool's, not inserted."""
        ...


PoolHandler = Callable[[TxPoolService, list[Any]], Any]

# geth's RPCTransaction field order; what a transaction kind lacks is left out.
_TX_KEYS = ("blockHash", "blockNumber", "blockTimestamp", "from", "gas", "gasPrice", "maxFeePerGas",
            "maxPriorityFeePerGas", "maxFeePerBlobGas", "hash", "input", "nonce", "to",
            "transactionIndex", "value", "type", "accessList", "chainId", "blobVersionedHashes",
            "authorizationList", "v", "r", "s", "yParity")


def pending_transaction_json(pooled: PooledView) -> dict[str, Any]:
    """A pooled transaction as geth writes one not yet in a block: the block fields null,
    ``gasPrice`` the fee cap."""
    fields: dict[str, Any] = dict(to_json(pooled.tx))
    fields.update({"blockHash": None, "blockNumber": None, "blockTimestamp": None,
                   "from": "0x" + pooled.sender.hex(), "hash": "0x" + pooled.hash.hex(),
                   "transactionIndex": None})
    if "gasPrice" not in fields:
        fields["gasPrice"] = fields["maxFeePerGas"]
    if fields.get("chainId", "") is None:
        del fields["chainId"]  # a legacy transaction without replay protection
    ordered = {key: fields.pop(key) for key in _TX_KEYS if key in fields}
    ordered.update(fields)
    return ordered


def _by_nonce(txs: list[Any]) -> dict[str, Any]:
    return {str(p.tx.nonce): pending_transaction_json(p) for p in txs}


def _send_raw_transaction(pool: TxPoolService, params: list[Any]) -> Any:
    """eth_sendRawTransaction into the pool: the transaction's hash."""
    raw = parse_bytes_param(params[0])
    if len(raw) > MAX_RAW_TRANSACTION:
        raise InvalidParams(f"raw transaction of {len(raw)} bytes: at most {MAX_RAW_TRANSACTION}")
    return "0x" + pool.submit(raw).hex()


def _status(pool: TxPoolService, params: list[Any]) -> Any:
    pending, queued = pool.status()
    return {"pending": hex(pending), "queued": hex(queued)}


def _content(pool: TxPoolService, params: list[Any]) -> Any:
    content = pool.content()
    return {
        "pending": {to_checksum_address(s): _by_nonce(txs) for s, txs in content.pending.items()},
        "queued": {to_checksum_address(s): _by_nonce(txs) for s, txs in content.queued.items()},
    }


def _content_from(pool: TxPoolService, params: list[Any]) -> Any:
    content = pool.content_from(parse_address_param(params[0]))
    return {"pending": _by_nonce([p for txs in content.pending.values() for p in txs]),
            "queued": _by_nonce([p for txs in content.queued.values() for p in txs])}


def _inspect_line(pooled: PooledView) -> str:
    tx = pooled.tx
    price = fields_price(tx)
    target = to_checksum_address(tx.to) if tx.to is not None else "contract creation"
    return f"{target}: {tx.value} wei + {tx.gas} gas \u00d7 {price} wei"  # geth's multiplication sign


def fields_price(tx: Transaction) -> int:
    """geth's ``GasPrice()`` of a transaction: its gas price, or its fee cap."""
    price = getattr(tx, "gas_price", None)
    return int(price if price is not None else tx.max_fee_per_gas)  # type: ignore[union-attr]


def _inspect(pool: TxPoolService, params: list[Any]) -> Any:
    content = pool.content()
    return {
        "pending": {to_checksum_address(s): {str(p.tx.nonce): _inspect_line(p) for p in txs}
                    for s, txs in content.pending.items()},
        "queued": {to_checksum_address(s): {str(p.tx.nonce): _inspect_line(p) for p in txs}
                   for s, txs in content.queued.items()},
    }


# -- testing_buildBlockV1 -----------------------------------------------------------------------


def _required(obj: dict[str, Any], key: str, kind: str) -> Any:
    if obj.get(key) is None:
        raise InvalidParams(f"missing required field '{key}' for {kind}")
    return obj[key]


def _withdrawal(value: Any) -> Withdrawal:
    if not isinstance(value, dict):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type "
                            "types.Withdrawal")
    return Withdrawal(
        index=parse_quantity(_required(value, "index", "Withdrawal"), "index", bits=64),
        validator_index=parse_quantity(_required(value, "validatorIndex", "Withdrawal"),
                                       "validatorIndex", bits=64),
        address=parse_address(_required(value, "address", "Withdrawal")),
        amount=parse_quantity(_required(value, "amount", "Withdrawal"), "amount", bits=64),
    )


def parse_payload_attributes(value: Any) -> PayloadAttributes:
    """The engine API's ``PayloadAttributes`` object, with geth's words for a missing field."""
    if not isinstance(value, dict):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type "
                            "engine.PayloadAttributes")
    kind = "PayloadAttributes"
    withdrawals = value.get("withdrawals")
    if withdrawals is not None:
        if not isinstance(withdrawals, list):
            raise InvalidParams(f"json: cannot unmarshal {go_json_type(withdrawals)} into Go value of "
                                "type []*types.Withdrawal")
        if len(withdrawals) > MAX_WITHDRAWALS:
            raise InvalidParams(f"too many withdrawals: at most {MAX_WITHDRAWALS}")
    root = value.get("parentBeaconBlockRoot")
    return PayloadAttributes(
        timestamp=parse_quantity(_required(value, "timestamp", kind), "timestamp", bits=64),
        prev_randao=parse_hash(_required(value, "prevRandao", kind)),
        fee_recipient=parse_address(_required(value, "suggestedFeeRecipient", kind)),
        withdrawals=None if withdrawals is None else tuple(_withdrawal(w) for w in withdrawals),
        beacon_root=None if root is None else parse_hash(root),
    )


def _transactions(value: Any) -> list[bytes] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go value of type "
                            "[]hexutil.Bytes")
    if len(value) > MAX_BUILD_TRANSACTIONS:
        raise InvalidParams(f"too many transactions: at most {MAX_BUILD_TRANSACTIONS}")
    return [parse_bytes_param(item) for item in value]


def payload_json(payload: PayloadView) -> dict[str, Any]:
    """geth's ``ExecutionPayloadEnvelope``."""
    header = payload.header
    body: dict[str, Any] = {
        "parentHash": "0x" + header.parent_hash.hex(),
        "feeRecipient": "0x" + header.coinbase.hex(),
        "stateRoot": "0x" + header.state_root.hex(),
        "receiptsRoot": "0x" + header.receipts_root.hex(),
        "logsBloom": "0x" + header.logs_bloom.hex(),
        "prevRandao": "0x" + header.mix_hash.hex(),
        "blockNumber": hex(header.number),
        "gasLimit": hex(header.gas_limit),
        "gasUsed": hex(header.gas_used),
        "timestamp": hex(header.timestamp),
        "extraData": "0x" + header.extra_data.hex(),
        "baseFeePerGas": hex(header.base_fee_per_gas or 0),
        "blockHash": "0x" + header.hash.hex(),
        "transactions": ["0x" + raw.hex() for raw in payload.transactions],
    }
    if payload.withdrawals is not None:
        body["withdrawals"] = [to_json(w) for w in payload.withdrawals]
    if header.blob_gas_used is not None:
        body["blobGasUsed"] = hex(header.blob_gas_used)
    if header.excess_blob_gas is not None:
        body["excessBlobGas"] = hex(header.excess_blob_gas)
    bundle: dict[str, list[str]] = {"commitments": [], "proofs": [], "blobs": []}
    for sidecar in payload.sidecars:
        bundle["commitments"] += ["0x" + c.hex() for c in sidecar.commitments]
        bundle["proofs"] += ["0x" + p.hex() for p in sidecar.proofs]
        bundle["blobs"] += ["0x" + b.hex() for b in sidecar.blobs]
    return {
        "executionPayload": body,
        "blockValue": hex(payload.block_value),
        "blobsBundle": bundle,
        "executionRequests": None if payload.requests is None else ["0x" + r.hex() for r in payload.requests],
        "shouldOverrideBuilder": False,
    }


def _build_block(pool: TxPoolService, params: list[Any]) -> Any:
    parent = _param(params, 0, parse_hash)
    attributes = _param(params, 1, parse_payload_attributes)
    transactions = _param(params, 2, _transactions) if len(params) > 2 else None
    extra = _param(params, 3, parse_bytes_param) if len(params) > 3 and params[3] is not None else b""
    if len(extra) > 32:
        raise InvalidParams(f"extraData: {len(extra)} bytes, at most 32")
    return payload_json(pool.build_block(parent, attributes, transactions, extra))


def _param(params: list[Any], index: int, parse: Callable[[Any], Any]) -> Any:
    try:
        return parse(params[index])
    except InvalidParams as exc:
        raise InvalidParams(f"invalid argument {index}: {exc.message}", exc.data) from None


# name -> (handler, required params, optional params)
TXPOOL_METHODS: dict[str, tuple[PoolHandler, int, int]] = {
    "txpool_status": (_status, 0, 0),
    "txpool_content": (_content, 0, 0),
    "txpool_contentFrom": (_content_from, 1, 0),
    "txpool_inspect": (_inspect, 0, 0),
    "testing_buildBlockV1": (_build_block, 2, 2),
}
SEND_RAW_TRANSACTION: PoolHandler = _send_raw_transaction


__all__ = ["SEND_RAW_TRANSACTION", "TXPOOL_METHODS", "PayloadAttributes", "TxPoolService",
           "parse_payload_attributes", "payload_json", "pending_transaction_json"]
