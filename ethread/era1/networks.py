"""Chain configs for the networks Era1 files are published for, chosen by the network name
in the file names (Era1 files carry no chain id of their own)."""

from __future__ import annotations

from ..chain.config import ChainConfig

_MAINNET = {
    "chainId": 1,
    "homesteadBlock": 1150000,
    "daoForkBlock": 1920000,
    "daoForkSupport": True,
    "eip150Block": 2463000,
    "eip155Block": 2675000,
    "eip158Block": 2675000,
    "byzantiumBlock": 4370000,
    "constantinopleBlock": 7280000,
    "petersburgBlock": 7280000,
    "istanbulBlock": 9069000,
    "muirGlacierBlock": 9200000,
    "berlinBlock": 12244000,
    "londonBlock": 12965000,
    "arrowGlacierBlock": 13773000,
    "grayGlacierBlock": 15050000,
    "mergeNetsplitBlock": 15537394,
    "shanghaiTime": 1681338455,
    "cancunTime": 1710338135,
    "pragueTime": 1746612311,
}

_SEPOLIA = {
    "chainId": 11155111,
    **{key: 0 for key in (
        "homesteadBlock", "eip150Block", "eip155Block", "eip158Block", "byzantiumBlock",
        "constantinopleBlock", "petersburgBlock", "istanbulBlock", "muirGlacierBlock",
        "berlinBlock", "londonBlock",
    )},
    "mergeNetsplitBlock": 1735371,
    "shanghaiTime": 1677557088,
    "cancunTime": 1706655072,
    "pragueTime": 1741159776,
}

KNOWN_NETWORKS = {"mainnet": _MAINNET, "sepolia": _SEPOLIA}
NETWORK_BY_CHAIN_ID = {int(doc["chainId"]): name for name, doc in KNOWN_NETWORKS.items()}  # type: ignore[call-overload]


def network_config(name: str) -> ChainConfig | None:
    """The config of a known network name, or None."""
    document = KNOWN_NETWORKS.get(name)
    return ChainConfig.from_genesis_config(dict(document)) if document is not None else None


def network_name(config: ChainConfig | None) -> str | None:
    """The Era1 network name of a known chain id."""
    return NETWORK_BY_CHAIN_ID.get(config.chain_id) if config is not None else None
