"""ethread's pytest plugin (docs/testing.md): a dev chain, a web3.py instance on it and funded
accounts as fixtures, each test isolated by a snapshot; ``--ethread-fork-url`` forks a live
chain. A failed test's report gains the call trees of what failed, and assertions show ethread's
models field by field. Web3 is imported only by the fixtures that use it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from eth_account.signers.local import LocalAccount
    from web3 import Web3

    from ..devchain import DevChain


def pytest_addoption(parser: pytest.Parser) -> None:
    """The fork options (``--ethread-fork-url`` and its companions)."""
    group = parser.getgroup("ethread", "ethread's dev chain")
    group.addoption("--ethread-fork-url", default=None, metavar="URL",
                    help="fork the chain served at URL (as anvil --fork-url)")
    group.addoption("--ethread-fork-block", type=int, default=None, metavar="N",
                    help="the block to fork (default: the node's latest)")
    group.addoption("--ethread-fork-cache", default=None, metavar="DIR",
                    help="keep what the fork reads in an LMDB directory, for the next runs")


@pytest.fixture(scope="session")
def ethread_chain_options() -> dict[str, Any]:
    """Keyword arguments of the session's :class:`DevChain` (override to change them)."""
    return {}


@pytest.fixture(scope="session")
def ethread_session_chain(request: pytest.FixtureRequest,
                          ethread_chain_options: dict[str, Any]) -> DevChain:
    """The session's dev chain, in memory, not rolled back between tests (a fork when asked)."""
    from ..backends.memory import MemoryBackend
    from ..devchain import DevChain

    options = dict(ethread_chain_options)
    url = options.pop("fork_url", None) or request.config.getoption("ethread_fork_url")
    block = options.pop("fork_block", None)
    cache = options.pop("fork_cache", None)
    if url is None:
        return DevChain(MemoryBackend(), **options)
    if block is None:
        block = request.config.getoption("ethread_fork_block")
    if cache is None:
        cache = request.config.getoption("ethread_fork_cache")
    return DevChain.fork(url, block, backend=MemoryBackend(), cache=cache, **options)


@pytest.fixture
def ethread_chain(ethread_session_chain: DevChain) -> Iterator[DevChain]:
    """The dev chain, reverted to a snapshot after the test."""
    snapshot = ethread_session_chain.snapshot()
    try:
        yield ethread_session_chain
    finally:
        ethread_session_chain.revert(snapshot)


@pytest.fixture(scope="session")
def _ethread_session_web3(ethread_session_chain: DevChain) -> Web3:
    from web3 import Web3

    from ..web3 import EthreadProvider

    provider = EthreadProvider(ethread_session_chain)
    w3 = Web3(provider)
    w3.eth.default_account = ethread_session_chain.local_accounts[0].address
    make_contract = w3.eth.contract

    def contract(*args: Any, **kwargs: Any) -> Any:
        """web3.py's ``eth.contract``, its ABI remembered for explaining failures."""
        abi = kwargs.get("abi")
        if isinstance(abi, list):
            provider.abis.add(abi)
        return make_contract(*args, **kwargs)

    w3.eth.contract = contract  # type: ignore[method-assign]
    return w3


@pytest.fixture
def ethread_web3(ethread_chain: DevChain, _ethread_session_web3: Web3) -> Web3:
    """A web3.py instance on the dev chain (in process), isolated as ``ethread_chain`` is."""
    return _ethread_session_web3


@pytest.fixture
def ethread_accounts(ethread_session_chain: DevChain) -> tuple[LocalAccount, ...]:
    """The funded dev accounts as eth-account ``LocalAccount`` objects (address and key)."""
    return ethread_session_chain.local_accounts


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Forget the failures explained before this test."""
    web3_module = sys.modules.get("ethread.web3")
    if web3_module is not None:
        web3_module.FAILURES.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Add the call trees of the transactions and calls that failed during a failed test."""
    outcome: Any = yield
    report = outcome.get_result()
    web3_module = sys.modules.get("ethread.web3")
    if report.when != "call" or not report.failed or web3_module is None:
        return
    failures = list(web3_module.FAILURES)
    if failures:
        report.sections.append(("ethread call trees", "\n\n".join(map(str, failures))))


def _is_model(value: object) -> bool:
    return dataclasses.is_dataclass(value) and type(value).__module__ == "ethread.models"


def show(value: object) -> str:
    """A value as a test wants to read it: bytes as 0x-hex, ethread models by field."""
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    if _is_model(value):
        fields = ", ".join(f"{f.name}={show(getattr(value, f.name))}"
                           for f in dataclasses.fields(value))  # type: ignore[arg-type]
        return f"{type(value).__name__}({fields})"
    if isinstance(value, tuple | list):
        inner = ", ".join(show(item) for item in value)
        if isinstance(value, tuple):
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"[{inner}]"
    return repr(value)


def model_diff(left: object, right: object) -> list[str]:
    """Assertion lines for ``left == right`` where one side is an ethread model."""
    lines = [f"{_short(left)} == {_short(right)}"]
    if type(left) is not type(right) or not _is_model(left):
        return [*lines, f"  left:  {show(left)}", f"  right: {show(right)}"]
    lines.append("Differing fields:")
    for f in dataclasses.fields(left):  # type: ignore[arg-type]
        have, want = getattr(left, f.name), getattr(right, f.name)
        if have != want:
            lines.append(f"  {f.name}: {show(have)} != {show(want)}")
    return lines


def _short(value: object) -> str:
    text = show(value)
    return text if len(text) <= 80 else text[:77] + "..."


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object,
                              right: object) -> Sequence[str] | None:
    """pytest hook: show which fields differ when ethread models (or tuples of them) are not ``==``."""
    if op != "==":
        return None
    if _is_model(left) or _is_model(right):
        return model_diff(left, right)
    if (isinstance(left, tuple) and isinstance(right, tuple) and len(left) == len(right)
            and any(_is_model(item) for item in (*left, *right))):
        lines = [f"{_short(left)} == {_short(right)}"]
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            if a != b:
                lines.append(f"At index {index}:")
                lines += ["  " + line for line in model_diff(a, b)[1:]]
        return lines
    return None
