"""One exception tree. Each class knows its JSON-RPC error code; the codec maps any of them to
an error object in one place (:func:`ethread.codec.envelope.error_object`)."""

from __future__ import annotations


def rebuilt(kind: type[BaseException], args: tuple[object, ...],
            state: dict[str, object]) -> BaseException:
    """An exception of ``kind`` with ``args`` and attributes ``state``, without its ``__init__``."""
    error = kind.__new__(kind, *args)  # (which sets error.args)
    error.__dict__.update(state)
    return error


class Picklable(BaseException):
    """An exception that pickles whole although its ``__init__`` takes other arguments than the
    message (Python's default calls ``__init__`` again with the message alone), so that one a
    worker of ``frames.*(..., workers=N)`` raises reaches the caller unchanged."""

    def __reduce__(self) -> tuple[object, ...]:
        return rebuilt, (type(self), self.args, dict(self.__dict__))


class EthreadError(Picklable, Exception):
    """Base of every error ethread raises on purpose."""

    code: int = -32603
    """The JSON-RPC error code; a subclass names its own: ``class X(EthreadError, code=-32000)``."""

    def __init_subclass__(cls, code: int | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(self, message: str, data: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


# JSON-RPC envelope errors


class ParseError(EthreadError, code=-32700):
    """The request body is not JSON."""


class InvalidRequest(EthreadError, code=-32600):
    """The JSON is not a valid JSON-RPC request."""


class MethodNotFound(EthreadError, code=-32601):
    """No such method, or one this service does not offer."""


class InvalidParams(EthreadError, code=-32602):
    """The method's parameters are missing, malformed or out of range."""


class InternalError(EthreadError, code=-32603):
    """Something failed inside ethread while answering."""


# Method errors


class ServerError(EthreadError, code=-32000):
    """Base of the errors answered with geth's generic server error code, -32000."""


class HeaderNotFound(ServerError):
    """A method that needs a block (eth_call, eth_getProof) was given one that is not held."""


class UnknownBlock(ServerError):
    """eth_getLogs named a block hash that is not held."""


class LimitExceeded(EthreadError, code=-32005):
    """A query went past one of the service's limits."""


class QueryTimeout(LimitExceeded):
    """A query ran past its deadline (eth_getLogs, eth_call) or its client went away: -32005,
    "query timeout exceeded"."""

    def __init__(self) -> None:
        super().__init__("query timeout exceeded")


class ResponseTooLarge(EthreadError):
    """An answer (or a batch's calls past it) larger than the service allows (geth's -32003)."""

    code = -32003

    def __init__(self) -> None:
        super().__init__("response too large")


class Cancelled(ServerError):
    """The work of a request stopped: its client went away or the server is shutting down."""


class ExecutionReverted(EthreadError, code=3):
    """eth_call hit REVERT; ``data`` is the hex revert payload."""


class ExecutionFailed(ServerError):
    """eth_call failed for a reason other than REVERT (out of gas, bad opcode, ...)."""


class ExecutionAborted(ExecutionFailed):
    """A call ran past its time limit and was stopped (geth's wording and code)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"execution aborted (timeout = {go_duration(timeout)})")


def go_duration(seconds: float) -> str:
    """A duration the way Go prints one in such messages: ``5s``, ``1.5s``, ``500ms``."""
    if seconds >= 1 or seconds == 0:
        return f"{seconds:g}s"
    return f"{seconds * 1000:g}ms"


def go_json_type(value: object) -> str:
    """The JSON type name Go's decoder uses in ``cannot unmarshal <type> into ...`` (the
    parameters' wording in the codec, a tracer configuration's in the tracers)."""
    for kind, name in _GO_JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "null"


_GO_JSON_TYPES = ((bool, "bool"), (str, "string"), (int | float, "number"), (list, "array"),
                  (dict, "object"))


class SimulationRefused(EthreadError):
    """eth_simulateV1 refused its input or one of its calls before running it, with the code
    geth gives that refusal (-38010 nonce too low ... -38026 a client limit, -32602, -32603,
    -32000)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class StateUnavailable(ServerError):
    """The backend holds no state for the block (a history-only archive, or pruned)."""


# Chain import errors (raised to Python callers, not over JSON-RPC)


class ImportFailed(EthreadError):
    """A block could not be imported; ``number`` (None: unknown) and ``field`` say which and why."""

    def __init__(self, number: int | None, field: str, detail: str) -> None:
        where = f"block {number}: " if number is not None else ""
        super().__init__(f"{where}invalid {field}: {detail}")
        self.number = number
        self.field = field
        self.detail = detail


class GenesisError(EthreadError):
    """The genesis file is malformed or does not match the chain already stored."""


class StoreError(EthreadError):
    """A backend's store could not be opened or is damaged."""


class StoreUnreadable(StoreError, ServerError):
    """A store could not be read while answering; the message never names the store's path."""


# Dev chain errors


class TransactionRejected(ServerError):
    """A dev chain refused a transaction before taking it, in geth's words."""


# Arguments a Python caller passed to the typed API (ethread.methods, ethread.models)


class ArgumentTypeError(InvalidParams, TypeError):
    """An argument of the wrong type (a hex string where bytes are wanted, a string block
    number); also a TypeError, as Python callers expect."""


class ArgumentValueError(InvalidParams, ValueError):
    """An argument of the right type and a wrong value (an unknown tag, a 31-byte hash)."""


# Range errors (raised to Python callers: frames and block iteration)


class MissingBlocks(EthreadError):
    """A block range asked of :mod:`ethread.frames` or :func:`ethread.iter_blocks` includes
    blocks the backend does not hold; ``missing`` lists them as inclusive ``(first, last)`` spans."""

    def __init__(self, missing: list[tuple[int, int]], detail: str = "") -> None:
        spans = ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in missing[:5])
        if len(missing) > 5:
            spans += f" and {len(missing) - 5} more spans"
        count = sum(b - a + 1 for a, b in missing)
        noun = "block is" if count == 1 else "blocks are"
        super().__init__(f"{count} {noun} missing from the backend: {spans}"
                         + (f" ({detail})" if detail else ""))
        self.missing = missing


class MissingHistory(MissingBlocks, ServerError):
    """An RPC log range over blocks the node does not hold below its head (-32000)."""
