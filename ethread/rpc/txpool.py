"""The JSON-RPC methods of a network with a transaction pool (``ethread serve --txpool``):
eth_sendRawTransaction, geth's ``txpool_*`` reads and ``testing_buildBlockV1`` (-32601
elsewhere). The pool itself is :mod:`ethread.devchain.txpool`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eth_utils import to_checksum_address

from ..codec.hex import (
    parse_address,
    parse_address_param,
    parse_bytes_param,
    parse_data,
    parse_hash,
    parse_quantity,
    wrong_type,
)
from ..codec.serialize import to_json
from ..devchain.payload import MAX_BUILD_TRANSACTIONS, BuiltPayload, PayloadAttributes
from ..devchain.txpool import Pooled
from ..errors import InvalidParams
from ..models import Address, Hash32, Withdrawal
from .row import Method, Param, Scope, Where, opt

MAX_RAW_TRANSACTION = 2 * 1024 * 1024
"""The longest raw transaction taken (decoded): above the largest blob transaction."""
MAX_WITHDRAWALS = 65536


# geth's RPCTransaction field order; what a transaction kind lacks is left out.
_TX_KEYS = ("blockHash", "blockNumber", "blockTimestamp", "from", "gas", "gasPrice", "maxFeePerGas",
            "maxPriorityFeePerGas", "maxFeePerBlobGas", "hash", "input", "nonce", "to",
            "transactionIndex", "value", "type", "accessList", "chainId", "blobVersionedHashes",
            "authorizationList", "v", "r", "s", "yParity")


def pending_transaction_json(pooled: Pooled) -> dict[str, Any]:
    """A pooled transaction as geth writes one: the block fields null, ``gasPrice`` the fee cap."""
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


def _send_raw_transaction(scope: Scope, value: Any) -> Any:
    """eth_sendRawTransaction into a dev chain, else into the served pool; the transaction's hash."""
    if scope.ctx.dev is not None:
        return "0x" + scope.ctx.dev.submit(parse_data(value, "raw transaction")).hex()
    raw = parse_bytes_param(value)
    if len(raw) > MAX_RAW_TRANSACTION:
        raise InvalidParams(f"raw transaction of {len(raw)} bytes: at most {MAX_RAW_TRANSACTION}")
    return "0x" + scope.pool.pool.submit(raw).hex()


def _status(scope: Scope) -> Any:
    pending, queued = scope.pool.pool.status()
    return {"pending": hex(pending), "queued": hex(queued)}


def _by_sender(scope: Scope, render: Callable[[list[Any]], Any]) -> Any:
    """The pool's pending and queued transactions, each sender's ``render``ed."""
    content = scope.pool.pool.content()
    return {section: {to_checksum_address(s): render(txs)
                      for s, txs in getattr(content, section).items()}
            for section in ("pending", "queued")}


def _content(scope: Scope) -> Any:
    return _by_sender(scope, _by_nonce)


def _content_from(scope: Scope, address: Address) -> Any:
    content = scope.pool.pool.content(address)
    return {"pending": _by_nonce([p for txs in content.pending.values() for p in txs]),
            "queued": _by_nonce([p for txs in content.queued.values() for p in txs])}


def _inspect_line(pooled: Pooled) -> str:
    tx = pooled.tx  # the price is geth's GasPrice(): the gas price, or the fee cap
    target = to_checksum_address(tx.to) if tx.to is not None else "contract creation"
    return f"{target}: {tx.value} wei + {tx.gas} gas \u00d7 {pooled.fee_cap} wei"  # geth's multiplication sign


def _inspect(scope: Scope) -> Any:
    return _by_sender(scope, lambda txs: {str(p.tx.nonce): _inspect_line(p) for p in txs})


# -- testing_buildBlockV1 -----------------------------------------------------------------------


def _required(obj: dict[str, Any], key: str, kind: str) -> Any:
    if obj.get(key) is None:
        raise InvalidParams(f"missing required field '{key}' for {kind}")
    return obj[key]


def _withdrawal(value: Any) -> Withdrawal:
    if not isinstance(value, dict):
        raise wrong_type(value, "types.Withdrawal")
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
        raise wrong_type(value, "engine.PayloadAttributes")
    kind = "PayloadAttributes"
    withdrawals = value.get("withdrawals")
    if withdrawals is not None:
        if not isinstance(withdrawals, list):
            raise wrong_type(withdrawals, "[]*types.Withdrawal")
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
        raise wrong_type(value, "[]hexutil.Bytes")
    if len(value) > MAX_BUILD_TRANSACTIONS:
        raise InvalidParams(f"too many transactions: at most {MAX_BUILD_TRANSACTIONS}")
    return [parse_bytes_param(item) for item in value]


def payload_json(payload: BuiltPayload) -> dict[str, Any]:
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


def _build_block(scope: Scope, parent: Hash32, attributes: PayloadAttributes,
                 transactions: list[bytes] | None, extra: bytes) -> Any:
    if len(extra) > 32:
        raise InvalidParams(f"extraData: {len(extra)} bytes, at most 32")
    return payload_json(scope.pool.build_block(parent, attributes, transactions, extra))


def _pool_method(name: str, answer: Callable[..., Any], price: int, *params: Param,
                 names_argument: bool = False, slow: bool = False) -> Method:
    """A method of a network that takes transactions (-32601 elsewhere), never cached."""
    return Method(name, answer, params, price, where=Where.TAKES_TRANSACTIONS, cacheable=False,
                  slow=slow, names_argument=names_argument)


ROWS = (
    _pool_method("eth_sendRawTransaction", _send_raw_transaction, 720,
                 Param("transaction", lambda value: value), slow=True),
    _pool_method("txpool_status", _status, 80),
    _pool_method("txpool_content", _content, 255),
    _pool_method("txpool_contentFrom", _content_from, 80, Param("address", parse_address_param)),
    _pool_method("txpool_inspect", _inspect, 255),
    _pool_method("testing_buildBlockV1", _build_block, 1000, Param("parent", parse_hash),
                 Param("attributes", parse_payload_attributes),
                 opt("transactions", _transactions), opt("extraData", parse_bytes_param, b""),
                 names_argument=True, slow=True),
)

__all__ = ["ROWS", "PayloadAttributes", "parse_payload_attributes",
           "payload_json", "pending_transaction_json"]
