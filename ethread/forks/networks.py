"""The public networks ethread knows by name, with their schedules through BPO2 (as geth's
``params/config.go`` gives them). Era1 files carry no chain id of their own: the network name
in their file names picks the schedule."""

from __future__ import annotations

from typing import Any

from .schedule import ChainConfig
from .table import FORK_BY_NAME, PUBLIC_BPO_BLOBS, blob_schedule_entry

_BLOB_SCHEDULE = {
    **{name: blob_schedule_entry(blob) for name in ("cancun", "prague")
       if (blob := FORK_BY_NAME[name].blob) is not None},
    **{name: blob_schedule_entry(blob) for name, blob in PUBLIC_BPO_BLOBS.items()},
}

_ALL_AT_ZERO = ("homesteadBlock", "eip150Block", "eip155Block", "eip158Block", "byzantiumBlock",
                "constantinopleBlock", "petersburgBlock", "istanbulBlock", "muirGlacierBlock",
                "berlinBlock", "londonBlock")

MAINNET: dict[str, Any] = {
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
    "terminalTotalDifficulty": 58_750_000_000_000_000_000_000,
    "shanghaiTime": 1681338455,
    "cancunTime": 1710338135,
    "pragueTime": 1746612311,
    "osakaTime": 1764798551,
    "bpo1Time": 1765290071,
    "bpo2Time": 1767747671,
    "depositContractAddress": "0x00000000219ab540356cbb839cbe05303d7705fa",
    "blobSchedule": _BLOB_SCHEDULE,
}

SEPOLIA: dict[str, Any] = {
    "chainId": 11155111,
    **{key: 0 for key in _ALL_AT_ZERO},
    "mergeNetsplitBlock": 1735371,
    "shanghaiTime": 1677557088,
    "cancunTime": 1706655072,
    "pragueTime": 1741159776,
    "osakaTime": 1760427360,
    "bpo1Time": 1761017184,
    "bpo2Time": 1761607008,
    "depositContractAddress": "0x7f02c3e3c98b133055b8b348b2ac625669ed295d",
    "blobSchedule": _BLOB_SCHEDULE,
}

HOODI: dict[str, Any] = {
    "chainId": 560048,
    **{key: 0 for key in _ALL_AT_ZERO},
    "mergeNetsplitBlock": 0,
    "shanghaiTime": 0,
    "cancunTime": 0,
    "pragueTime": 1742999832,
    "osakaTime": 1761677592,
    "bpo1Time": 1762365720,
    "bpo2Time": 1762955544,
    "depositContractAddress": "0x00000000219ab540356cbb839cbe05303d7705fa",
    "blobSchedule": _BLOB_SCHEDULE,
}

KNOWN_NETWORKS: dict[str, dict[str, Any]] = {"mainnet": MAINNET, "sepolia": SEPOLIA,
                                             "hoodi": HOODI}
NETWORK_BY_CHAIN_ID = {int(doc["chainId"]): name for name, doc in KNOWN_NETWORKS.items()}


def network_config(name: str) -> ChainConfig | None:
    """The config of a known network name, or None."""
    document = KNOWN_NETWORKS.get(name)
    return ChainConfig.from_genesis_config(dict(document)) if document is not None else None


def network_name(config: ChainConfig | None) -> str | None:
    """The Era1 network name of a known chain id."""
    return NETWORK_BY_CHAIN_ID.get(config.chain_id) if config is not None else None
