"""One JSON-RPC method as a row of the table: its name, its parameters (each with one parser),
the function that answers it, its price, where it is available and which sources answer it.

Every method's parameters are read by :func:`read_args` (geth's words for a bad argument),
then its function is called as ``answer(scope, *args)``: the :class:`Scope` carries the
backend that answers and the context.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ..backend import Backend
from ..errors import InvalidParams, MethodNotFound

if TYPE_CHECKING:
    from ..codec.answers import AnswerStyle
    from ..devchain import DevChain
    from ..devchain.served_pool import ServedPool
    from .context import Context
    from .fork_history import HistoryRead

_Part = TypeVar("_Part")
DEFAULT_PRICE = 1
"""Credits of a method with no price of its own (and of an unknown method)."""


class Where(enum.Enum):
    """Where a method is available; elsewhere it is -32601, before its parameters are read."""

    ANYWHERE = "anywhere"
    DEV_CHAIN = "a dev chain's network"
    TAKES_TRANSACTIONS = "a dev chain's network, or a chain served with a pool (--txpool)"


class Source(enum.Flag):
    """What may answer a method besides the chain (see :mod:`ethread.rpc.sources`)."""

    CHAIN = enum.auto()
    FORK_HISTORY = enum.auto()
    """A forked dev chain's history at and below the fork block: the forked node's answer."""
    DEV_POOL = enum.auto()
    """A dev chain's pool (a pending transaction, nonce or block) before the chain."""
    SERVED_POOL = enum.auto()
    """A served chain's pool (``--txpool``) before the chain."""
    PENDING_STATE = enum.auto()
    """A dev chain's pending state when the block parameter is "pending"."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Param:
    """One positional parameter: its name, its parser, its default (:data:`REQUIRED`: none)."""

    name: str
    parse: Callable[[Any], Any]
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        """Whether the parameter must be given (it has no default)."""
        return self.default is REQUIRED


def opt(name: str, parse: Callable[[Any], Any], default: Any = None) -> Param:
    """An optional parameter."""
    return Param(name, parse, default)


PoolRead = Callable[[Any, list[Any], "AnswerStyle"], Any]
"""A read a pool answers before the chain (see :mod:`ethread.rpc.pool_reads`)."""


@dataclass(frozen=True, slots=True)
class Method:
    """One method of the table."""

    name: str
    answer: Callable[..., Any]
    """Called as ``answer(scope, *args)``: its JSON value."""
    params: tuple[Param, ...] = ()
    price: int = DEFAULT_PRICE
    """Credits one call costs (:mod:`ethread.server.billing.credits`)."""
    where: Where = Where.ANYWHERE
    cacheable: bool = True
    """The answer depends only on the chain (its generation) and the parameters."""
    slow: bool = False
    """It may run long (executes, traces or scans): a server runs it off its event loop."""
    names_argument: bool = True
    """A bad parameter is refused naming its position (geth's way); False: in the parser's words (anvil's)."""
    history: HistoryRead | None = None
    """On a forked dev chain, the read that answers from the forked node's history."""
    pool: PoolRead | None = None
    """On a dev chain, the read that answers from its pool first."""
    served_pool: bool = False
    """:attr:`pool` also answers from a served chain's pool (``--txpool``)."""
    pending: int | None = None
    """The block parameter's position: "pending" there reads a dev chain's pending state."""
    keeps_traces: bool = False
    """A trace of one mined transaction, kept once made (:mod:`ethread.rpc.trace_cache`)."""

    @property
    def sources(self) -> Source:
        """What answers it, besides the chain."""
        found = Source.CHAIN
        for present, source in ((self.history, Source.FORK_HISTORY), (self.pool, Source.DEV_POOL),
                                (self.served_pool, Source.SERVED_POOL),
                                (self.pending is not None, Source.PENDING_STATE)):
            if present:
                found |= source
        return found

    required: int = field(init=False)
    """How many parameters must be given (the required ones come first)."""

    def __post_init__(self) -> None:
        required = sum(param.required for param in self.params)
        if any(param.required for param in self.params[required:]):
            raise ValueError(f"{self.name}: an optional parameter before a required one")
        object.__setattr__(self, "required", required)


def control(name: str, answer: Callable[..., Any], *params: Param) -> Method:
    """A dev chain's control (-32601 elsewhere), never cached, refused in the parser's words (anvil's)."""
    return Method(name, answer, params, where=Where.DEV_CHAIN, cacheable=False,
                  names_argument=False)


def anvil_and_hardhat(name: str, answer: Callable[..., Any], *params: Param
                      ) -> tuple[Method, Method]:
    """anvil's control ``anvil_<name>`` and its alias ``hardhat_<name>``."""
    return control("anvil_" + name, answer, *params), control("hardhat_" + name, answer, *params)


def lookup(get: Callable[..., Any], render: Callable[[Any, Context], Any],
           missing: Any = None) -> Callable[..., Any]:
    """A method's answer: ``get(backend, *args)`` ``render``ed, or ``missing`` (null) when
    nothing is held."""
    def answer(scope: Scope, *args: Any) -> Any:
        value = get(scope.backend, *args)
        return missing if value is None else render(value, scope.ctx)

    answer.__wrapped__ = get  # type: ignore[attr-defined]  # (what the docs name)
    return answer


def read_args(method: Method, params: Sequence[Any]) -> list[Any]:
    """The parameters parsed, in order, defaults filled in; geth's words for a bad one."""
    if not method.params:
        return []
    args = []
    for index, param in enumerate(method.params):
        value = params[index] if index < len(params) else None
        if value is None and not param.required:
            args.append(param.default)
            continue
        try:
            args.append(param.parse(value))
        except InvalidParams as exc:
            if not method.names_argument:
                raise
            raise InvalidParams(f"invalid argument {index}: {exc.message}", exc.data) from None
    return args


def check_arity(method: Method, params: Sequence[Any]) -> None:
    """geth's words for too few or too many positional arguments, before any is read."""
    given = len(params)
    if given > len(method.params):
        raise InvalidParams(f"too many arguments, want at most {len(method.params)}")
    if given < method.required:
        raise InvalidParams(f"missing value for required argument {given}")


def not_available(method: str) -> MethodNotFound:
    """The -32601 error geth gives for a method it does not offer."""
    return MethodNotFound(f"the method {method} does not exist/is not available")


class Scope(NamedTuple):
    """What a method's answer reads besides its parameters (a tuple: one is made per call)."""

    backend: Backend
    ctx: Context
    method: str

    @property
    def dev(self) -> DevChain:
        """The network's dev chain (a :attr:`Where.DEV_CHAIN` method's)."""
        return self._present(self.ctx.dev)

    @property
    def pool(self) -> ServedPool:
        """The network's pool (a :attr:`Where.TAKES_TRANSACTIONS` method's)."""
        return self._present(self.ctx.txpool)

    def _present(self, part: _Part | None) -> _Part:
        if part is None:
            raise not_available(self.method)
        return part
