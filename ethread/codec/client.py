"""The name this node gives itself: web3_clientVersion, and clientVersion in a dev chain's
anvil_metadata/hardhat_metadata."""

from ..version import __version__

CLIENT_VERSION = f"ethread/{__version__}"
