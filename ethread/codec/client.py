"""The name this node gives itself: web3_clientVersion, and clientVersion in a dev chain's
anvil_metadata/hardhat_metadata."""

CLIENT_VERSION = "ethread/0.1.0"
