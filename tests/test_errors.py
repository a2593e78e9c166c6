"""ethread's exceptions cross between processes whole (a worker of ``frames.*(workers=N)``
raises one, the caller gets the same): each pickles and unpickles to the same type, message
and attributes, whatever its ``__init__`` takes."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil

import pytest

import ethread
from ethread.backend import ResultLimitReached
from ethread.era1.e2store import FormatError
from ethread.errors import (
    EthreadError,
    ExecutionAborted,
    ImportFailed,
    MissingBlocks,
    Picklable,
    QueryTimeout,
    SimulationRefused,
)
from ethread.rlpcodec.items import TruncatedRLP

ERRORS = [
    FormatError("/data/x.era1", 1866544, "corrupted: record header has a nonzero reserved field"),
    MissingBlocks([(8192, 172031)], "the backend holds blocks 0..180223 with gaps"),
    ImportFailed(7, "state root", "mismatch"),
    QueryTimeout(),
    ExecutionAborted(5.0),
    SimulationRefused("block gas limit reached", -38015),
    TruncatedRLP("item 2 is truncated", [b"\xc0"], 1),
    ResultLimitReached(41),
    EthreadError("plain", data={"a": 1}),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_survives_pickling(error: BaseException) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert again.args == error.args
    assert vars(again) == vars(error)


def test_every_error_with_its_own_arguments_is_picklable() -> None:
    """An exception class of ethread whose ``__init__`` is its own (not Exception's) is a
    :class:`Picklable`: the default pickling would call that ``__init__`` with the message
    alone."""
    own_init = []
    for info in pkgutil.walk_packages(ethread.__path__, "ethread."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an extra not installed here
            continue
        for cls in vars(module).values():
            if (inspect.isclass(cls) and issubclass(cls, BaseException)
                    and cls.__module__ == info.name and "__init__" in vars(cls)
                    and not issubclass(cls, Picklable)):
                own_init.append(f"{info.name}.{cls.__name__}")
    assert not own_init, own_init
