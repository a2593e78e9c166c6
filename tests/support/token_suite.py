"""The token suite (tests/clients/test_token_web3.py) as other runs copy it: the fork checks
and the benchmarks run the file itself with its one provider line replaced. A copy finds the
contract's artifact as the suite does, in ``contracts/`` beside its own folder, so a copy is
written into ``<folder>/clients/`` beside ``<folder>/contracts/``."""

from __future__ import annotations

from .paths import TESTS

SUITE = TESTS / "clients" / "test_token_web3.py"
PROVIDER_LINE = "    return Web3(EthreadProvider(DevChain(ethread.MemoryBackend())))  # the provider line"
"""The one line that says which chain the suite runs on."""
