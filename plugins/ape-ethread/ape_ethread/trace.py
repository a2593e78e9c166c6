"""Traces as Ape reads them.

A transaction's trace is one ``trace_transaction`` (parity's frames, as ape-foundry asks
anvil: what ``receipt.trace``, ``receipt.show_trace()`` and ``ape test --gas`` read). A call's
trace (the gas report of a view call, the tree shown when a call reverts) is one
``debug_traceCall`` with geth's ``callTracer``, where Ape's own
:class:`~ape_ethereum.trace.CallTrace` would replay the call with the struct logger and
rebuild the tree from every opcode.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from ape.exceptions import TransactionNotFoundError
from ape_ethereum.trace import CallTrace, TraceApproach, TransactionTrace
from evm_trace import CallTreeNode, ParityTraceList, get_calltree_from_parity_trace
from hexbytes import HexBytes

CALL_TRACER = {"tracer": "callTracer"}


def call_tree(frame: dict[str, Any], depth: int = 0) -> CallTreeNode:
    """callTracer's frame as evm-trace's node, a failed frame (one with an ``error``) marked
    failed (evm-trace's own reader leaves every frame unfailed, so Ape would find no revert
    in the tree)."""
    return CallTreeNode(
        call_type=frame.get("type", "CALL"),
        address=frame.get("to") or "0x",
        value=frame.get("value") or 0,
        depth=depth,
        gas_limit=frame.get("gas"),
        gas_cost=frame.get("gasUsed"),
        calldata=frame.get("input") or "0x",
        returndata=frame.get("output") or "0x",
        failed="error" in frame,
        calls=[call_tree(call, depth + 1) for call in frame.get("calls", ())],
    )


class EthreadTransactionTrace(TransactionTrace):
    """A mined transaction's trace: parity's ``trace_transaction``, asked once and kept.

    Parity's frames say the gas each call used without the transaction's intrinsic gas (as
    ape-foundry reads anvil's), so ``ape test --gas`` tables match theirs row for row."""

    call_trace_approach: TraceApproach | None = TraceApproach.PARITY

    _frames_kept: list[dict[str, Any]] | None = None

    @property
    def _parity_frames(self) -> list[dict[str, Any]]:
        """The transaction's frames; kept once it is mined (a transaction still pending, with
        automine off, has none yet: TransactionNotFoundError, asked again next time)."""
        if self._frames_kept is None:
            frames = self.provider.make_request("trace_transaction", [self.transaction_hash])
            if frames is None:
                raise TransactionNotFoundError(transaction_hash=self.transaction_hash)
            self._frames_kept = frames
        return self._frames_kept

    @cached_property
    def debug_logs(self) -> Any:
        """console.log lines (Ape prints them after each transaction): none, with no trace asked,
        while no contract can have called the console (see the provider)."""
        if not getattr(self.provider, "may_log_to_console", True):
            return []
        return super().debug_logs

    def get_calltree(self) -> CallTreeNode:
        return get_calltree_from_parity_trace(
            ParityTraceList.model_validate(self._parity_frames))

    @cached_property
    def return_value(self) -> Any:
        if self._enriched_calltree:
            return self._return_value_from_enriched_calltree
        abi = self.root_method_abi
        frames = self._parity_frames
        output = (frames[0].get("result") or {}).get("output") if frames else None
        if abi is None or not output:
            return (None,) * (len(abi.outputs) if abi is not None else 1)
        return self._ecosystem.decode_returndata(abi, HexBytes(output))


class EthreadCallTrace(CallTrace):
    """An ``eth_call``'s trace: callTracer's tree of the call replayed by debug_traceCall."""

    call_trace_approach: TraceApproach = TraceApproach.GETH_CALL_TRACER

    @cached_property
    def _call_frame(self) -> dict[str, Any]:
        arguments = [self.transaction, *self.arguments] if self.arguments else \
            [self.transaction, "latest"]
        return self.provider.make_request(  # type: ignore[no-any-return]
            "debug_traceCall", [*arguments[:2], CALL_TRACER])

    @property
    def raw_trace_frames(self) -> Iterator[dict[str, Any]]:
        return iter(())

    @property
    def return_value(self) -> Any:
        return self._call_frame.get("output", "0x")

    def get_calltree(self) -> CallTreeNode:
        return call_tree(self._call_frame)
