"""A benchmark chain kept as files: a geth-style genesis.json, for ethread the blocks as
concatenated RLP (``ethread serve --genesis --blocks``, ``ethread import``), and for anvil
each block's signed raw transactions (``--init`` and ``eth_sendRawTransaction``, see
:func:`benchlib.targets.replay`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import rlp

from ethread.devchain import DevChain
from ethread.models import Block
from ethread.rlpcodec.blocks import block_item
from ethread.rlpcodec.transactions import encode_transaction

RawBlocks = tuple[tuple[int, tuple[str, ...]], ...]
"""(timestamp, signed raw transactions, 0x-hex) per block from 1, in block order."""


@dataclass(frozen=True, kw_only=True)
class ChainFiles:
    """Where a built chain's files are, and what anvil needs to replay it."""

    folder: Path
    head: int
    raw_blocks: RawBlocks
    block1_base_fee: int

    @property
    def genesis(self) -> Path:
        return self.folder / "genesis.json"

    @property
    def blocks(self) -> Path:
        return self.folder / "chain.rlp"


def chain_blocks(chain: DevChain) -> tuple[Block, ...]:
    """The chain's blocks from 1 to its head, each read once."""
    return tuple(map(chain.block, range(1, chain.head.number + 1)))


def raw_blocks(blocks: Iterable[Block]) -> RawBlocks:
    """Each of ``blocks`` (the chain's from 1, in order) as anvil replays it."""
    return tuple(
        (block.header.timestamp,
         tuple("0x" + encode_transaction(t.transaction).hex() for t in block.transactions))
        for block in blocks)


def write_genesis(chain: DevChain, folder: Path) -> None:
    """``chain``'s genesis.json in ``folder``."""
    (folder / "genesis.json").write_text(json.dumps(chain.genesis))


def write_chain(chain: DevChain, folder: Path) -> tuple[Block, ...]:
    """``chain``'s genesis.json and its blocks from 1 as chain.rlp in ``folder``; the blocks
    written (:func:`chain_blocks`), for what else the caller takes from them."""
    folder.mkdir(parents=True, exist_ok=True)
    blocks = chain_blocks(chain)
    with (folder / "chain.rlp").open("wb") as out:
        for block in blocks:
            txs = [t.transaction for t in block.transactions]
            out.write(rlp.encode(block_item(block.header, txs, block.uncles, block.withdrawals)))
    write_genesis(chain, folder)
    return blocks


def loaded_raw_blocks(saved: object) -> RawBlocks:
    """:data:`RawBlocks` from their JSON form."""
    assert isinstance(saved, list | tuple)
    return tuple((int(t), tuple(txs)) for t, txs in saved)
