"""Tracing: geth's debug_trace* methods as pure functions returning typed answers, over one
hook point in the EVM (:mod:`.hooks`) that every tracer (:mod:`.tracers`) shares."""

from ...evm.hooks import Step, Tracer, TxEnv
from .models import (
    CallFrame,
    CallLog,
    FlatCall,
    FlatCalls,
    FourBytes,
    MuxResult,
    NoResult,
    Prestate,
    PrestateAccount,
    PrestateDiff,
    StructLog,
    StructLogResult,
    TraceResult,
    TransactionTrace,
)
from .replay import (
    DEFAULT_TRACE_TIMEOUT,
    NotTraceable,
    TraceableChain,
    TraceOptions,
    block_by_ref,
    intermediate_roots,
    trace_block,
    trace_call,
    trace_raw_block,
    trace_transaction,
)
from .states import ReplayStates
from .tracers import LoggerConfig, TraceContext, UnknownTracer, flatten, make_tracer

__all__ = [
    "DEFAULT_TRACE_TIMEOUT", "CallFrame", "CallLog", "FlatCall", "FlatCalls", "FourBytes",
    "LoggerConfig", "MuxResult", "NoResult", "NotTraceable", "Prestate", "PrestateAccount",
    "PrestateDiff", "ReplayStates", "Step", "StructLog", "StructLogResult", "TraceContext", "TraceOptions",
    "TraceResult", "TraceableChain", "Tracer", "TransactionTrace", "TxEnv", "UnknownTracer",
    "block_by_ref", "flatten", "intermediate_roots", "make_tracer", "trace_block", "trace_call", "trace_raw_block",
    "trace_transaction",
]
