"""The name this node gives itself (web3_clientVersion, anvil_metadata's clientVersion)."""

from ..version import __version__

CLIENT_VERSION = f"ethread/{__version__}"
