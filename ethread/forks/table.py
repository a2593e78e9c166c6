"""What each fork changes, declared once: one :class:`Fork` row per fork, in activation order.

Whatever behaves differently between forks reads the row of its block
(:meth:`~ethread.forks.schedule.ChainConfig.rules`) instead of comparing fork names. A row's
blob parameters are the fork's defaults; the schedule applies a genesis ``blobSchedule``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evm.blobs import BlobParams
from ..evm.osaka import MAX_BLOBS_PER_TX, MAX_RLP_BLOCK_SIZE, TX_GAS_LIMIT_CAP

LEGACY, ACCESS_LIST, DYNAMIC_FEE, BLOB, SET_CODE = 0, 1, 2, 3, 4
"""The transaction type numbers (EIP-2718)."""

MAX_INITCODE_SIZE = 49152
"""EIP-3860 (Shanghai): the longest initcode a creation may carry."""

def _address(number: int) -> bytes:
    return number.to_bytes(20, "big")


def _hex_address(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


# Precompiles by the names EIP-7910 (eth_config) gives them, with the fork that added them.
_PRECOMPILES: tuple[tuple[str, str, bytes], ...] = (
    ("frontier", "ECREC", _address(1)),
    ("frontier", "SHA256", _address(2)),
    ("frontier", "RIPEMD160", _address(3)),
    ("frontier", "ID", _address(4)),
    ("byzantium", "MODEXP", _address(5)),
    ("byzantium", "BN254_ADD", _address(6)),
    ("byzantium", "BN254_MUL", _address(7)),
    ("byzantium", "BN254_PAIRING", _address(8)),
    ("istanbul", "BLAKE2F", _address(9)),
    ("cancun", "KZG_POINT_EVALUATION", _address(0x0A)),
    ("prague", "BLS12_G1ADD", _address(0x0B)),
    ("prague", "BLS12_G1MSM", _address(0x0C)),
    ("prague", "BLS12_G2ADD", _address(0x0D)),
    ("prague", "BLS12_G2MSM", _address(0x0E)),
    ("prague", "BLS12_PAIRING_CHECK", _address(0x0F)),
    ("prague", "BLS12_MAP_FP_TO_G1", _address(0x10)),
    ("prague", "BLS12_MAP_FP2_TO_G2", _address(0x11)),
    ("osaka", "P256VERIFY", _address(0x100)),
)

BEACON_ROOTS_ADDRESS = _hex_address("0x000f3df6d732807ef1319fb7b8bb8522d0beac02")
HISTORY_STORAGE_ADDRESS = _hex_address("0x0000f90827f1c53a10cb7a02335b175320002935")
WITHDRAWAL_REQUEST_ADDRESS = _hex_address("0x00000961ef480eb55e80d19ad83579a64c007002")
CONSOLIDATION_REQUEST_ADDRESS = _hex_address("0x0000bbddc7ce488642fb579f8b00f3a590007251")

# System contracts by their EIP-7910 names, with the fork that added them. The deposit
# contract's address is the chain's own (``depositContractAddress``): None here.
_SYSTEM_CONTRACTS: tuple[tuple[str, str, bytes | None], ...] = (
    ("cancun", "BEACON_ROOTS_ADDRESS", BEACON_ROOTS_ADDRESS),
    ("prague", "CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS", CONSOLIDATION_REQUEST_ADDRESS),
    ("prague", "DEPOSIT_CONTRACT_ADDRESS", None),
    ("prague", "HISTORY_STORAGE_ADDRESS", HISTORY_STORAGE_ADDRESS),
    ("prague", "WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS", WITHDRAWAL_REQUEST_ADDRESS),
)


@dataclass(frozen=True, slots=True)
class Fork:
    """One fork's rules: what a block under it may hold and how it executes."""

    name: str
    """ethread's name, lower case (``"spurious_dragon"``, ``"osaka"``, ``"bpo1"``)."""
    index: int
    """Its place in activation order (frontier is 0)."""
    genesis_key: str | None
    """The geth genesis ``config`` key that schedules it (None for frontier)."""
    by_time: bool
    """Scheduled by timestamp (after the merge) rather than by block number."""
    title: str
    """The name execution-spec-tests fixtures use (``"Osaka"``, ``"BPO1"``)."""
    vm_base: str
    """The fork whose execution rules it runs (a BPO fork runs Osaka's with other blob parameters)."""
    transaction_types: frozenset[int]
    """The transaction types a block may carry."""
    low_s: bool
    """EIP-2: a signature's ``s`` in the lower half of the curve's order (Homestead on)."""
    creation_gas: int
    """What a creating transaction adds to its intrinsic gas (EIP-2: 32,000 from Homestead)."""
    nonzero_byte_gas: int
    """Intrinsic gas per non-zero calldata byte (EIP-2028: 16 from Istanbul, 68 before)."""
    replay_protection: bool
    """EIP-155 chain ids in legacy signatures (Spurious Dragon on)."""
    receipt_status: bool
    """EIP-658: a receipt commits to its outcome, not to the state after it (Byzantium on)."""
    sstore_sentry: bool
    """EIP-2200: SSTORE fails with no more than the call stipend left (Istanbul on)."""
    base_fee: bool
    """EIP-1559 base fee in headers (London on)."""
    proof_of_stake: bool
    """No proof of work, no uncles, prevrandao in mix hash (Paris on)."""
    withdrawals: bool
    """Withdrawals in blocks (Shanghai on)."""
    max_initcode_size: int | None
    """EIP-3860's initcode bound, None before Shanghai."""
    blob: BlobParams | None
    """Blob target, max and update fraction; None before Cancun."""
    beacon_root: bool
    """The parent beacon block root in headers and its system call (Cancun on)."""
    transient_storage: bool
    """EIP-1153's transient storage, cleared after each transaction (Cancun on)."""
    requests: bool
    """Execution-layer requests and the requests hash (Prague on)."""
    calldata_floor: bool
    """EIP-7623's calldata floor price (Prague on)."""
    tx_gas_cap: int | None
    """EIP-7825's per-transaction gas cap, None before Osaka."""
    max_block_rlp_size: int | None
    """EIP-7934's encoded block size bound, None before Osaka."""
    max_blobs_per_tx: int | None
    """EIP-7594's per-transaction blob bound (None: only the block's max bounds it)."""
    blob_reserve_price: bool
    """EIP-7918's blob base fee floor in the excess blob gas rule (Osaka on)."""
    cell_proofs: bool
    """EIP-7594: a blob transaction's sidecar carries cell proofs (version 1, Osaka on)."""
    precompiles: tuple[tuple[str, bytes], ...]
    """(EIP-7910 name, address) of every precompile active."""
    system_contracts: tuple[tuple[str, bytes | None], ...]
    """(EIP-7910 name, address) of every system contract; the deposit contract's address
    is the chain's (None here)."""

    def at_least(self, name: str) -> bool:
        """Whether this fork is ``name`` or a later one."""
        return self.index >= FORK_INDEX[name]


# (name, genesis key, by time, fixture title, execution base, default blob parameters)
_ROWS: tuple[tuple[str, str | None, bool, str, str, BlobParams | None], ...] = (
    ("frontier", None, False, "Frontier", "frontier", None),
    ("homestead", "homesteadBlock", False, "Homestead", "homestead", None),
    ("tangerine_whistle", "eip150Block", False, "EIP150", "tangerine_whistle", None),
    ("spurious_dragon", "eip158Block", False, "EIP158", "spurious_dragon", None),
    ("byzantium", "byzantiumBlock", False, "Byzantium", "byzantium", None),
    ("constantinople", "constantinopleBlock", False, "Constantinople", "constantinople", None),
    ("petersburg", "petersburgBlock", False, "ConstantinopleFix", "petersburg", None),
    ("istanbul", "istanbulBlock", False, "Istanbul", "istanbul", None),
    ("muir_glacier", "muirGlacierBlock", False, "MuirGlacier", "muir_glacier", None),
    ("berlin", "berlinBlock", False, "Berlin", "berlin", None),
    ("london", "londonBlock", False, "London", "london", None),
    ("arrow_glacier", "arrowGlacierBlock", False, "ArrowGlacier", "arrow_glacier", None),
    ("gray_glacier", "grayGlacierBlock", False, "GrayGlacier", "gray_glacier", None),
    ("paris", "mergeNetsplitBlock", False, "Paris", "paris", None),
    ("shanghai", "shanghaiTime", True, "Shanghai", "shanghai", None),
    ("cancun", "cancunTime", True, "Cancun", "cancun", BlobParams(3, 6, 3338477)),
    ("prague", "pragueTime", True, "Prague", "prague", BlobParams(6, 9, 5007716)),
    ("osaka", "osakaTime", True, "Osaka", "osaka", BlobParams(6, 9, 5007716)),
    ("bpo1", "bpo1Time", True, "BPO1", "osaka", None),
    ("bpo2", "bpo2Time", True, "BPO2", "osaka", None),
    ("bpo3", "bpo3Time", True, "BPO3", "osaka", None),
    ("bpo4", "bpo4Time", True, "BPO4", "osaka", None),
    ("bpo5", "bpo5Time", True, "BPO5", "osaka", None),
)

FORK_INDEX: dict[str, int] = {row[0]: i for i, row in enumerate(_ROWS)}

PUBLIC_BPO_BLOBS: dict[str, BlobParams] = {
    "bpo1": BlobParams(10, 15, 8346193),
    "bpo2": BlobParams(14, 21, 11684671),
}
"""The BPO forks' blob parameters as mainnet, Sepolia and Hoodi run them (EIP-7892; a BPO
fork has no default of its own: each chain's genesis names them)."""


def blob_schedule_entry(blob: BlobParams) -> dict[str, int]:
    """``blob`` as a genesis ``blobSchedule`` entry."""
    return {"target": blob.target, "max": blob.max, "baseFeeUpdateFraction": blob.update_fraction}


def fork_at_least(fork: str, minimum: str) -> bool:
    """Whether the fork named ``fork`` is ``minimum`` or a later one."""
    return FORK_INDEX[fork] >= FORK_INDEX[minimum]


def _row(index: int, name: str, key: str | None, by_time: bool, title: str, base: str,
         blob: BlobParams | None) -> Fork:
    types = {LEGACY}
    for first, kind in (("berlin", ACCESS_LIST), ("london", DYNAMIC_FEE), ("cancun", BLOB),
                        ("prague", SET_CODE)):
        if fork_at_least(name, first):
            types.add(kind)
    osaka = fork_at_least(name, "osaka")
    return Fork(
        name=name, index=index, genesis_key=key, by_time=by_time, title=title, vm_base=base,
        transaction_types=frozenset(types),
        low_s=fork_at_least(name, "homestead"),
        creation_gas=32000 if fork_at_least(name, "homestead") else 0,
        nonzero_byte_gas=16 if fork_at_least(name, "istanbul") else 68,
        replay_protection=fork_at_least(name, "spurious_dragon"),
        receipt_status=fork_at_least(name, "byzantium"),
        sstore_sentry=fork_at_least(name, "istanbul"),
        base_fee=fork_at_least(name, "london"),
        proof_of_stake=fork_at_least(name, "paris"),
        withdrawals=fork_at_least(name, "shanghai"),
        max_initcode_size=MAX_INITCODE_SIZE if fork_at_least(name, "shanghai") else None,
        blob=blob,
        beacon_root=fork_at_least(name, "cancun"),
        transient_storage=fork_at_least(name, "cancun"),
        requests=fork_at_least(name, "prague"),
        calldata_floor=fork_at_least(name, "prague"),
        tx_gas_cap=TX_GAS_LIMIT_CAP if osaka else None,
        max_block_rlp_size=MAX_RLP_BLOCK_SIZE if osaka else None,
        max_blobs_per_tx=MAX_BLOBS_PER_TX if osaka else None,
        blob_reserve_price=osaka,
        cell_proofs=osaka,
        precompiles=tuple((label, address) for first, label, address in _PRECOMPILES
                          if fork_at_least(name, first)),
        system_contracts=tuple((label, address) for first, label, address in _SYSTEM_CONTRACTS
                               if fork_at_least(name, first)),
    )


FORKS: tuple[Fork, ...] = tuple(_row(i, *row) for i, row in enumerate(_ROWS))
"""Every fork ethread knows, in activation order."""

FORK_BY_NAME: dict[str, Fork] = {fork.name: fork for fork in FORKS}
FORK_BY_KEY: dict[str, Fork] = {fork.genesis_key: fork for fork in FORKS if fork.genesis_key}
FORK_BY_TITLE: dict[str, Fork] = {fork.title.lower(): fork for fork in FORKS}
FORK_ORDER: tuple[str, ...] = tuple(fork.name for fork in FORKS)
BLOCK_FORKS: tuple[tuple[str, str], ...] = tuple(
    (f.genesis_key, f.name) for f in FORKS if f.genesis_key and not f.by_time)
"""(genesis config key, fork name) of the forks scheduled by block number."""
TIME_FORKS: tuple[tuple[str, str], ...] = tuple(
    (f.genesis_key, f.name) for f in FORKS if f.genesis_key and f.by_time)
"""(genesis config key, fork name) of the forks scheduled by timestamp."""
SHORT_NAMES: dict[str, str] = {"tangerine": "tangerine_whistle", "spurious": "spurious_dragon",
                               "merge": "paris"}
"""anvil's short spellings of forks ethread names in full."""


def fork_named(name: str) -> Fork:
    """The row of a fork by ethread's name or a fixture title (``"Osaka"``, ``"EIP158"``);
    raises ``KeyError`` naming the known ones."""
    fork = FORK_BY_NAME.get(name) or FORK_BY_TITLE.get(name.lower())
    if fork is None:
        raise KeyError(f"unknown fork {name!r}; known: {', '.join(FORK_ORDER)}")
    return fork

