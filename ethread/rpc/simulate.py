"""eth_simulateV1 at the edge: its options object parsed into
:class:`~ethread.simulation.SimulateOptions`, and its answer written as geth writes it (each
block as eth_getBlockByHash does, with a ``calls`` list beside)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..codec.hex import parse_address, parse_quantity, wrong_type
from ..codec.params import parse_block_overrides, parse_call_request, parse_state_override
from ..codec.serialize import block_json, to_json
from ..errors import InvalidParams, go_json_type
from ..models import HeaderOverrides, Withdrawal
from ..simulation import (
    CallResult,
    SimulatedBlock,
    SimulatedBlockCalls,
    SimulatedBlockOverrides,
    SimulateOptions,
)

JSON = Any
UNSIGNED_LEGACY_CHAIN_ID = hex(((0 - 35) % 2**64) // 2)


def _unmarshal(value: Any, field: str, typename: str) -> InvalidParams:
    return InvalidParams(f"json: cannot unmarshal {go_json_type(value)} into Go struct field "
                         f"{field} of type {typename}")


def _list(value: Any, field: str, typename: str) -> list[Any]:
    """A field that holds a JSON array: null or missing is an empty one, as Go decodes it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _unmarshal(value, field, typename)
    return value


def _flag(obj: dict[str, Any], key: str) -> bool:
    value = obj.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _unmarshal(value, f"simOpts.{key}", "bool")
    return value


def parse_simulate_options(value: Any) -> SimulateOptions:
    """eth_simulateV1's first parameter: ``blockStateCalls`` (each with ``blockOverrides``,
    ``stateOverrides`` and ``calls``), ``traceTransfers``, ``validation`` and
    ``returnFullTransactions``. Unknown keys are ignored, as geth's decoder ignores them."""
    if not isinstance(value, dict):
        raise wrong_type(value, "ethapi.simOpts")
    blocks = _list(value.get("blockStateCalls"), "simOpts.blockStateCalls", "[]ethapi.simBlock")
    return SimulateOptions(
        block_state_calls=tuple(_block_calls(block) for block in blocks),
        trace_transfers=_flag(value, "traceTransfers"),
        validation=_flag(value, "validation"),
        return_full_transactions=_flag(value, "returnFullTransactions"),
    )


def _block_calls(value: Any) -> SimulatedBlockCalls:
    if value is None:
        return SimulatedBlockCalls()
    if not isinstance(value, dict):
        raise _unmarshal(value, "simOpts.blockStateCalls", "ethapi.simBlock")
    calls = _list(value.get("calls"), "simBlock.calls", "[]ethapi.TransactionArgs")
    return SimulatedBlockCalls(
        block_overrides=_block_overrides(value.get("blockOverrides")),
        state_overrides=parse_state_override(value.get("stateOverrides")),
        calls=tuple(parse_call_request({} if call is None else call) for call in calls),
    )


def _block_overrides(value: Any) -> SimulatedBlockOverrides | None:
    common = parse_block_overrides(value)
    if common is None:
        return None
    assert isinstance(value, dict)
    header = {f.name: getattr(common, f.name) for f in dataclasses.fields(HeaderOverrides)}
    return SimulatedBlockOverrides(**header, withdrawals=_withdrawals(value.get("withdrawals")))


def _withdrawals(value: Any) -> tuple[Withdrawal, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _unmarshal(value, "BlockOverrides.Withdrawals", "types.Withdrawals")
    out = []
    for item in value:
        if not isinstance(item, dict):
            raise _unmarshal(item, "BlockOverrides.Withdrawals", "types.Withdrawal")
        for key in ("index", "validatorIndex", "address", "amount"):
            if item.get(key) is None:
                raise InvalidParams(f"missing required field '{key}' for Withdrawal")
        out.append(Withdrawal(index=parse_quantity(item["index"], "index", bits=64),
                              validator_index=parse_quantity(item["validatorIndex"], "validatorIndex",
                                                             bits=64),
                              address=parse_address(item["address"]),
                              amount=parse_quantity(item["amount"], "amount", bits=64)))
    return tuple(out)


def simulated_blocks_json(blocks: tuple[SimulatedBlock, ...], full_transactions: bool) -> JSON:
    """The answer: each block as eth_getBlockByHash writes it, with its ``calls``."""
    return [_block(simulated, full_transactions) for simulated in blocks]


def _block(simulated: SimulatedBlock, full_transactions: bool) -> JSON:
    out: dict[str, JSON] = block_json(simulated.block, full_transactions)
    if full_transactions:
        for tx in out["transactions"]:
            if tx.get("type") == "0x0" and tx.get("v") == "0x0":
                # geth derives a legacy transaction's chain id from its v, (v - 35) / 2 in 64
                # bits: an unsigned one (v = 0) shows this
                tx["chainId"] = UNSIGNED_LEGACY_CHAIN_ID
    out["calls"] = [_call(result) for result in simulated.calls]
    return out


def _call(result: CallResult) -> JSON:
    out: dict[str, JSON] = {
        "returnData": "0x" + result.return_data.hex(),
        "logs": [to_json(log) for log in result.logs],
        "gasUsed": hex(result.gas_used),
        "maxUsedGas": hex(result.max_used_gas),
        "status": hex(result.status),
    }
    error = result.error
    if error is not None:
        body: dict[str, JSON] = {"message": error.message, "code": error.code}
        if error.data is not None:
            body["data"] = "0x" + error.data.hex()
        out["error"] = body
    return out
