"""What a method may need besides the backend: the service's limits, the dispatcher's caches,
and the network's dev chain and served pool."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..codec.answers import DEFAULT_ANSWERS, AnswerStyle
from ..codec.serialize import FragmentCache
from ..methods.call import CallStates
from ..methods.fees import TipOracle
from ..methods.filters import FilterRegistry
from ..methods.logs import DEFAULT_LIMITS, LogLimits
from ..models import Address
from .trace_cache import TraceCache

if TYPE_CHECKING:
    from ..devchain import DevChain
    from ..devchain.served_pool import ServedPool

DEFAULT_CALL_TIMEOUT = 5.0
MAX_TRACE_TIMEOUT = 60.0
"""The longest a request may ask one transaction's trace to run (the service's cap)."""


@dataclass(frozen=True, slots=True)
class Context:
    """What a method may need besides the backend: limits, and caches per dispatcher (:meth:`for_backend`)."""

    log_limits: LogLimits = DEFAULT_LIMITS
    answers: AnswerStyle = DEFAULT_ANSWERS
    """Which geth release's answers to give (:mod:`ethread.codec.answers`)."""
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    """Seconds an eth_call (estimate, access list) may execute (geth's ``--rpc.evmtimeout``)."""
    trace_timeout: float = MAX_TRACE_TIMEOUT
    """The longest a trace may run, whatever its request asks (``trace_timeout_seconds``)."""
    fragments: FragmentCache | None = field(default=None, compare=False)
    stored_answers: bool = True
    """Whether answers a store keeps beside its blocks are read (:mod:`ethread.codec.stored_answers`)."""
    call_states: CallStates | None = field(default=None, compare=False)
    accounts: tuple[Address, ...] = ()
    """What eth_accounts lists: a dev chain's accounts, else none (the hook a dev chain fills)."""
    filters: FilterRegistry | None = field(default=None, compare=False)
    """The polling filters of the dispatcher."""
    tips: TipOracle | None = field(default=None, compare=False)
    """The gas price oracle's memory (the last head it priced and its price)."""
    traces: TraceCache | None = field(default=None, compare=False)
    """Traces of mined transactions, once made (:mod:`ethread.rpc.trace_cache`)."""
    answer_bytes: int | None = None
    """The bound on one answer in bytes: an opcode log stops with -32003 past it."""

    dev: DevChain | None = field(default=None, compare=False)
    """The dev chain when the network is one: it enables sending and the test controls."""
    txpool: ServedPool | None = field(default=None, compare=False)
    """A served chain's transaction pool (``--txpool``): sending, txpool_* and testing_*."""

    def for_dev_chain(self, chain: DevChain, accounts: tuple[Address, ...]) -> Context:
        """This context on a dev chain's network, eth_accounts listing ``accounts``."""
        return replace(self, dev=chain, accounts=accounts, txpool=chain.served_pool)

    def for_txpool(self, pool: ServedPool) -> Context:
        """This context on a network with a transaction pool."""
        return replace(self, txpool=pool)

    def for_backend(self) -> Context:
        """These limits with fresh caches, for one backend's dispatcher."""
        return replace(self, fragments=FragmentCache(), call_states=CallStates(),
                       filters=FilterRegistry(), tips=TipOracle(), traces=TraceCache())


DEFAULT_CONTEXT = Context()
