"""The chain of the peer benchmark (``bench_vs_anvil.py``), built once with the dev chain and
written as a geth-style genesis.json and a concatenated-RLP block file, which ethread imports
(``ethread serve --genesis``, ``ethread import``) and anvil replays (``--init`` and the same
signed transactions).

Block 1 deploys the Ping contract; blocks 2..N each hold one call to it from the second dev
account. Ping, unless the first calldata byte is 0xff, emits one log (topic0 =
keccak("Ping(address,uint256)"), topic1 = the caller, data = block.number) and returns
block.number as one word; with 0xff first it reverts with ``Error("nope")``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from eth_utils import keccak

from benchlib.chain_files import ChainFiles, loaded_raw_blocks, raw_blocks, write_chain
from ethread.backends.memory import MemoryBackend
from ethread.devchain import DevChain
from ethread.devchain.contracts import ERROR_SELECTOR, assemble

PING_TOPIC = keccak(b"Ping(address,uint256)")
NOPE = b"nope"

PING = assemble(
    0, "CALLDATALOAD", 0xF8, "SHR", 0xFF, "EQ", "@nope", "JUMPI",
    "NUMBER", 0, "MSTORE",                        # memory[0:32] = block.number
    "CALLER", PING_TOPIC, 32, 0, "LOG2",          # Ping(caller, block.number)
    32, 0, "RETURN",
    "nope:",
    # Error("nope") at memory[28:128]: the selector ends word 0, then offset 32, length 4,
    # and the text left-aligned in its word
    ERROR_SELECTOR, 0, "MSTORE",
    32, 32, "MSTORE",
    len(NOPE), 64, "MSTORE",
    NOPE, 0xE0, "SHL", 96, "MSTORE",
    100, 28, "REVERT",
)


@dataclass(frozen=True)
class PeerChain(ChainFiles):
    """Where the chain's files are and what the load aims at."""

    ping: str
    """The contract's address, 0x-hex."""
    tx_hashes: tuple[str, ...]
    """Every transaction of blocks 2..head (the calls), 0x-hex."""


def build(folder: Path, head: int, log: bool = True) -> PeerChain:
    """The chain up to block ``head`` in ``folder``, built unless the folder holds it."""
    meta = folder / "chain.json"
    if meta.exists():
        saved = json.loads(meta.read_text())
        if saved["head"] == head and saved["ping_code"] == PING.hex():
            return _from_saved(folder, saved)
    chain, ping = ping_chain(MemoryBackend(), head, log)
    blocks = write_chain(chain, folder)
    tx_hashes = ["0x" + t.hash.hex() for block in blocks[1:] for t in block.transactions]
    saved = {"head": head, "ping": "0x" + ping.hex(), "ping_code": PING.hex(),
             "tx_hashes": tx_hashes, "raw_blocks": raw_blocks(blocks),
             "block1_base_fee": blocks[0].header.base_fee_per_gas}
    meta.write_text(json.dumps(saved))
    return _from_saved(folder, saved)


def ping_chain(backend: MemoryBackend, head: int, log: bool = False) -> tuple[DevChain, bytes]:
    """The chain up to block ``head`` in ``backend``, built with the dev chain; Ping's
    address."""
    started = time.perf_counter()
    chain = DevChain(backend)
    ping = chain.deploy_runtime(chain.accounts[0], PING)
    chain.mine()
    caller = chain.accounts[1]
    for number in range(2, head + 1):
        chain.send(caller, ping, data=number.to_bytes(4, "big"))
        chain.mine()
        if log and number % 500 == 0:
            print(f"  built block {number} of {head} ({time.perf_counter() - started:.0f} s)",
                  flush=True)
    return chain, ping


def _from_saved(folder: Path, saved: dict[str, object]) -> PeerChain:
    hashes = saved["tx_hashes"]
    assert isinstance(hashes, list)
    return PeerChain(folder=folder, head=int(str(saved["head"])), ping=str(saved["ping"]),
                     tx_hashes=tuple(hashes), raw_blocks=loaded_raw_blocks(saved["raw_blocks"]),
                     block1_base_fee=int(str(saved["block1_base_fee"])))
