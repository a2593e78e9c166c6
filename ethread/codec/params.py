"""JSON-RPC params to typed requests. Parsed once here; the methods trust what they get."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidParams
from ..models import (
    TAGS,
    AccessListEntry,
    AccountOverride,
    Authorization,
    BlockHashRef,
    BlockOverrides,
    BlockRef,
    CallRequest,
    LogFilter,
    StateOverride,
    Tag,
    TopicFilter,
    trusted_maker,
)
from .hex import go_quote, parse_address, parse_data, parse_hash, parse_quantity, wrong_type

MAX_TOPICS = 4
"""Topic positions a log filter may have (a log has at most four topics)."""
MAX_SUB_TOPICS = 1000
"""Alternatives one topic position may list (geth's limit)."""


def parse_bool(value: Any) -> bool:
    """A boolean parameter, refusing any other JSON type as geth does."""
    if not isinstance(value, bool):
        raise wrong_type(value, "bool")
    return value


def parse_index(value: Any) -> int:
    """An index parameter: a hex quantity of at most 64 bits."""
    return parse_quantity(value, "index", bits=64)


def parse_number_or_tag(value: Any, *, allow_decimal: bool = False) -> int | Tag:
    """A block parameter: a tag (latest, safe, finalized, earliest, pending) or a hex number."""
    if isinstance(value, str) and value in TAGS:
        return value  # type: ignore[return-value]
    if allow_decimal and isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise InvalidParams("block number must not be negative")
        return value
    number = parse_quantity(value, "block number", bits=64)
    if number >= 1 << 63:
        raise InvalidParams("block number larger than int64")
    return number


def parse_block_ref(value: Any, *, allow_decimal: bool = False) -> BlockRef:
    """A block number, tag, hash, or EIP-1898 object ``{"blockHash"|"blockNumber": ...}``."""
    if isinstance(value, dict):
        if "blockHash" in value and "blockNumber" in value:
            raise InvalidParams("cannot specify both BlockHash and BlockNumber, choose one or the other")
        if "blockHash" in value:
            canonical = value.get("requireCanonical", False)
            return BlockHashRef(hash=parse_hash(value["blockHash"]), require_canonical=parse_bool(canonical))
        if "blockNumber" in value:
            return parse_number_or_tag(value["blockNumber"])
        raise InvalidParams("block object needs blockHash or blockNumber")
    if isinstance(value, str) and len(value) == 66:
        return BlockHashRef(hash=parse_hash(value))
    return parse_number_or_tag(value, allow_decimal=allow_decimal)


def _address_list(value: Any) -> tuple[bytes, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (parse_address(value),)
    if isinstance(value, list):
        return tuple(parse_address(a) for a in value)
    raise InvalidParams("invalid address: expected an address or a list of addresses")


def _topics(value: Any) -> tuple[TopicFilter, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidParams("invalid topic(s)")
    if len(value) > MAX_TOPICS:
        raise InvalidParams("exceed max topics")
    out: list[TopicFilter] = []
    for position in value:
        if position is None:
            out.append(None)
        elif isinstance(position, str):
            out.append((parse_hash(position),))
        elif isinstance(position, list):
            if len(position) > MAX_SUB_TOPICS:
                raise InvalidParams("exceed max topics")
            hashes = tuple(parse_hash(t) for t in position if t is not None)
            # An empty list, or one with a null in it, matches anything at this position.
            out.append(hashes if hashes and None not in position else None)
        else:
            raise InvalidParams("invalid topic(s)")
    # trailing nulls are kept: a log with fewer topics than the filter's positions fails (geth)
    return tuple(out)


def parse_log_filter(value: Any) -> LogFilter:
    """The filter object of eth_getLogs and eth_newFilter (a block range or a block hash)."""
    if not isinstance(value, dict):
        raise InvalidParams("filter must be an object")
    block_hash = value.get("blockHash")
    if block_hash is not None:
        if value.get("fromBlock") is not None or value.get("toBlock") is not None:
            raise InvalidParams("cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other")
        return LogFilter(block_hash=parse_hash(block_hash),
                         addresses=_address_list(value.get("address")),
                         topics=_topics(value.get("topics")))
    from_block = value.get("fromBlock")
    to_block = value.get("toBlock")
    return LogFilter(
        from_block="latest" if from_block is None else parse_number_or_tag(from_block),
        to_block="latest" if to_block is None else parse_number_or_tag(to_block),
        addresses=_address_list(value.get("address")),
        topics=_topics(value.get("topics")),
    )


def _optional_quantity(obj: dict[str, Any], key: str, bits: int = 256) -> int | None:
    value = obj.get(key)
    return None if value is None else parse_quantity(value, key, bits=bits)


def _access_list(value: Any) -> tuple[AccessListEntry, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidParams("accessList must be a list")
    out = []
    for entry in value:
        if not isinstance(entry, dict):
            raise InvalidParams("accessList entries must be objects")
        keys = entry.get("storageKeys") or []
        if not isinstance(keys, list):
            raise InvalidParams("storageKeys must be a list")
        out.append(AccessListEntry(address=parse_address(entry.get("address")),
                                   storage_keys=tuple(parse_hash(k) for k in keys)))
    return tuple(out)


def _authorizations(value: Any) -> tuple[Authorization, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(a, dict) for a in value):
        raise InvalidParams("authorizationList must be a list of objects")
    return tuple(
        Authorization(
            chain_id=parse_quantity(a.get("chainId"), "chainId"),
            address=parse_address(a.get("address")),
            nonce=parse_quantity(a.get("nonce"), "nonce", bits=64),
            y_parity=parse_quantity(a.get("yParity", a.get("v")), "yParity", bits=8),
            r=parse_quantity(a.get("r"), "r"),
            s=parse_quantity(a.get("s"), "s"),
        )
        for a in value
    )


def _hash_list(value: Any, what: str) -> tuple[bytes, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidParams(f"{what} must be a list")
    return tuple(parse_hash(h) for h in value)


def parse_call_request(value: Any) -> CallRequest:
    """The call object (``input`` wins over ``data``; fee conflicts are the call's to refuse, as geth)."""
    if not isinstance(value, dict):
        raise InvalidParams("call object must be an object")
    if value.keys() <= _PLAIN_CALL_KEYS:  # (the usual call: the other fields are absent)
        return _plain_call_request(value)
    data = _call_data(value)
    gas_price = _optional_quantity(value, "gasPrice")
    max_fee = _optional_quantity(value, "maxFeePerGas")
    tip = _optional_quantity(value, "maxPriorityFeePerGas")
    # every field below comes from a parser that checked what CallRequest's constructor checks
    return _CALL_REQUEST(
        _optional_address(value, "from"),
        _optional_address(value, "to"),
        _optional_quantity(value, "gas", bits=64),
        gas_price,
        max_fee,
        tip,
        _optional_quantity(value, "value") or 0,
        data,
        _access_list(value.get("accessList")),
        _optional_quantity(value, "maxFeePerBlobGas"),
        _hash_list(value.get("blobVersionedHashes"), "blobVersionedHashes"),
        _authorizations(value.get("authorizationList")),
        _optional_quantity(value, "nonce", bits=64),
        _optional_quantity(value, "chainId"),
        _call_conflicts(gas_price, max_fee, tip),
    )


_CALL_REQUEST = trusted_maker(
    CallRequest, "sender to gas gas_price max_fee_per_gas max_priority_fee_per_gas value data "
    "access_list max_fee_per_blob_gas blob_versioned_hashes authorization_list nonce chain_id "
    "conflicts")
"""CallRequest's fields in declaration order, set without the constructor's checks."""
_PLAIN_CALL_KEYS = frozenset({"from", "to", "data", "input"})


def _plain_call_request(value: dict[str, Any]) -> CallRequest:
    """:func:`parse_call_request` of a call object with no key but :data:`_PLAIN_CALL_KEYS`."""
    data = _call_data(value)
    return _CALL_REQUEST(
        _optional_address(value, "from"),
        _optional_address(value, "to"),
        None, None, None, None, 0, data,
        None, None, None, None, None, None, None,
    )


def _call_data(value: dict[str, Any]) -> bytes:
    """A call object's input: ``input`` wins over ``data`` (both checked, ``data`` first)."""
    data = value.get("data")
    parsed = b"" if data is None else parse_data(data, "data")
    given_input = value.get("input")
    return parsed if given_input is None else parse_data(given_input, "input")


def _optional_address(value: dict[str, Any], key: str) -> bytes | None:
    given = value.get(key)
    return None if given is None else parse_address(given)


def _call_conflicts(gas_price: int | None, max_fee: int | None, tip: int | None) -> str | None:
    if gas_price is not None and (max_fee is not None or tip is not None):
        return "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified"
    return None


MAX_OVERRIDE_ACCOUNTS = 1_000
MAX_OVERRIDE_SLOTS = 10_000
"""Bounds on one state override set (geth has none; a request body bounds it there)."""

def parse_state_override(value: Any) -> StateOverride:
    """eth_call's third parameter, by address; unknown keys are ignored, as geth ignores them."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise wrong_type(value, "override.StateOverride")
    if len(value) > MAX_OVERRIDE_ACCOUNTS:
        raise InvalidParams(f"too many accounts in the state override (at most {MAX_OVERRIDE_ACCOUNTS})")
    accounts: dict[bytes, AccountOverride] = {}
    slots = 0
    for key, fields in value.items():
        address = parse_address(key)
        if fields is None:
            fields = {}
        if not isinstance(fields, dict):
            raise wrong_type(fields, "override.OverrideAccount")
        state = _storage_map(fields.get("state"))
        state_diff = _storage_map(fields.get("stateDiff"))
        slots += len(state or ()) + len(state_diff or ())
        if slots > MAX_OVERRIDE_SLOTS:
            raise InvalidParams(f"too many storage slots in the state override (at most {MAX_OVERRIDE_SLOTS})")
        code = fields.get("code")
        moved = fields.get("movePrecompileToAddress")
        accounts[address] = AccountOverride(
            address=address,
            nonce=_optional_quantity(fields, "nonce", bits=64),
            code=None if code is None else parse_data(code, "code"),
            balance=_optional_quantity(fields, "balance"),
            state=state,
            state_diff=state_diff,
            move_precompile_to=None if moved is None else parse_address(moved),
        )
    return tuple(accounts[address] for address in sorted(accounts))


def _storage_map(value: Any) -> tuple[tuple[bytes, bytes], ...] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise wrong_type(value, "map[common.Hash]common.Hash")
    return tuple((parse_hash(k), parse_hash(v)) for k, v in value.items())


def parse_block_overrides(value: Any) -> BlockOverrides | None:
    """eth_call's fourth parameter, with geth's field names (``feeRecipient`` is the
    coinbase, ``prevRandao`` the mix hash)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise wrong_type(value, "override.BlockOverrides")
    recipient = value.get("feeRecipient")
    randao = value.get("prevRandao")
    beacon_root = value.get("beaconRoot")
    return BlockOverrides(
        number=_optional_quantity(value, "number"),
        difficulty=_optional_quantity(value, "difficulty"),
        time=_optional_quantity(value, "time", bits=64),
        gas_limit=_optional_quantity(value, "gasLimit", bits=64),
        fee_recipient=None if recipient is None else parse_address(recipient),
        prev_randao=None if randao is None else parse_hash(randao),
        base_fee_per_gas=_optional_quantity(value, "baseFeePerGas"),
        blob_base_fee=_optional_quantity(value, "blobBaseFee"),
        beacon_root=None if beacon_root is None else parse_hash(beacon_root),
        withdrawals=value.get("withdrawals") is not None,
    )


def parse_hex_or_decimal(value: Any) -> int:
    """A count geth reads as ``math.HexOrDecimal64``: hex with ``0x``, or decimal."""
    text = value if isinstance(value, str) else _json_text(value)
    try:
        if text[:2] in ("0x", "0X"):
            number = int(text[2:], 16) if text[2:] and _is_digits(text[2:], 16) else -1
        else:
            number = int(text) if text and _is_digits(text, 10) else (0 if text == "" else -1)
    except ValueError:
        number = -1
    if number < 0 or number >= 1 << 64:
        raise InvalidParams(f"invalid hex or decimal integer {go_quote(text)}")
    return number


def _is_digits(text: str, base: int) -> bool:
    allowed = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    return all(c in allowed for c in text)


def _json_text(value: Any) -> str:
    """The JSON text of a non-string value, as Go's decoder hands it to UnmarshalJSON."""
    return json.dumps(value, separators=(",", ":"))


def parse_percentiles(value: Any) -> tuple[float, ...]:
    """eth_feeHistory's reward percentiles: a list of JSON numbers (null: none)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise wrong_type(value, "[]float64")
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise wrong_type(item, "float64")
        out.append(float(item))
    return tuple(out)
