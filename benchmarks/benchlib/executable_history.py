"""Dense history a node can execute: blocks of about 150 real signed transactions each, mined
by ethread's dev chain into an LMDB store, and kept as a geth-style genesis.json and each
block's signed raw transactions, so that anvil can replay the same chain (``--init`` and
``eth_sendRawTransaction``, see :func:`benchlib.targets.replay`).

Unlike :mod:`benchlib.synthetic_history` nothing is skipped: every transaction is signed by
its sender's key and executed by py-evm, so balances, nonces, gas and logs are what a node
computes. The chain (Prague rules from genesis, :data:`ethread.devchain.PRAGUE_FORKS`; the
dev chain's chain id and 10-second blocks):

- block 1: the first dev account deploys :data:`TOKENS` copies of the test suites' ERC-20
  (tests/contracts/Token.json, solc's output) and the log emitter
  (:data:`ethread.devchain.contracts.LOG_EMITTER`);
- block 2: it sends each of the other :data:`SENDERS` accounts a share of every token;
- blocks 3..head, ``per_block`` transactions each from those senders; by the order ``i`` they
  are sent in (a block holds them by price, then nonce), six in ten are token transfers (one
  Transfer log), one an approval (one Approval log), one a call to the log emitter (one log
  of two topics), two plain ETH transfers; the kinds turn over legacy (EIP-155),
  access-list and dynamic-fee; and the last :data:`CREATIONS` sent to each block create a
  small contract (the storage contract's runtime) instead.

Blob transactions are left out (the dev chain's carry no sidecar, which anvil's pool asks
for), and so are set-code ones.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from eth_utils import keccak

from benchlib import REPO
from benchlib.chain_files import ChainFiles, chain_blocks, loaded_raw_blocks, raw_blocks, write_genesis
from ethread.backends.lmdb import LMDBBackend
from ethread.devchain import PRAGUE_FORKS, DevChain, TxKind, contracts
from ethread.devchain.signing import DevAccount

SENDERS = 31
"""Dev accounts 1..31 send the dense blocks' transactions (account 0 deploys)."""
TOKENS = 4
CREATIONS = 2
"""Contract creations at the end of each dense block."""
KINDS: tuple[TxKind, ...] = ("legacy", "access-list", "dynamic-fee")
TOKEN_ARTIFACT = REPO / "tests" / "contracts" / "Token.json"
TRANSFER = keccak(b"transfer(address,uint256)")[:4]
APPROVE = keccak(b"approve(address,uint256)")[:4]
NOTE_TOPIC = keccak(b"Note(address,uint256)")
FORMAT = 1
"""Changes when what :func:`build` writes changes, so a kept chain of another shape is rebuilt."""


@dataclass(frozen=True)
class ExecutableChain(ChainFiles):
    """Where a built chain's files are (an LMDB store, no chain.rlp), and what a peer needs to
    replay it."""

    per_block: int
    transactions: int
    """Every transaction of blocks 1..head."""
    logs: int
    build_seconds: float

    @property
    def lmdb(self) -> Path:
        return self.folder / "lmdb"

    @property
    def ere(self) -> Path:
        """The chain as ``ere`` files (:func:`export_ere`)."""
        return self.folder / "ere"


def _word(value: int | bytes) -> bytes:
    return value.rjust(32, b"\x00") if isinstance(value, bytes) else value.to_bytes(32, "big")


def _dense_block(chain: DevChain, tokens: list[bytes], emitter: bytes, number: int,
                 per_block: int) -> None:
    """Queue block ``number``'s transactions (see the module's docstring)."""
    senders = chain.accounts[1:SENDERS + 1]
    for i in range(per_block):
        sender: DevAccount = senders[(i + number) % SENDERS]
        peer = senders[(7 * i + number + 3) % SENDERS].address
        kind = KINDS[(i + number) % len(KINDS)]
        token = tokens[(i + number) % len(tokens)]
        if i >= per_block - CREATIONS:
            chain.deploy_runtime(sender, contracts.STORAGE, kind=kind, gas=200_000)
        elif i % 10 < 6:
            chain.send(sender, token, data=TRANSFER + _word(peer) + _word(1_000 + i),
                       kind=kind, gas=80_000)
        elif i % 10 == 6:
            chain.send(sender, token, data=APPROVE + _word(peer) + _word(number * 1_000 + i),
                       kind=kind, gas=80_000)
        elif i % 10 == 7:
            chain.send(sender, emitter, kind=kind, gas=60_000, data=contracts.log_calldata(
                [NOTE_TOPIC, _word(sender.address)], _word(number)))
        else:
            chain.send(sender, peer, value=10**12 + i, kind=kind)


def build(folder: Path, blocks: int, per_block: int = 150, log: bool = True) -> ExecutableChain:
    """The chain up to block ``blocks`` (at least 3) in ``folder``, built unless the folder
    holds it already (a half-built one is built again)."""
    if blocks < 3 or per_block <= CREATIONS:
        raise ValueError(f"at least 3 blocks of more than {CREATIONS} transactions")
    meta = folder / "chain.json"
    if meta.exists():
        saved = json.loads(meta.read_text())
        if (saved.get("format"), saved.get("head"), saved.get("per_block")) == (
                FORMAT, blocks, per_block):
            return _from_saved(folder, saved)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    artifact = json.loads(TOKEN_ARTIFACT.read_text())["contracts"]["Token"]
    with LMDBBackend(folder / "lmdb", create=True) as backend:
        chain = DevChain(backend, forks=PRAGUE_FORKS, accounts=SENDERS + 1)
        owner = chain.accounts[0]
        tokens = [chain.deploy(owner, artifact["bytecode"], abi=artifact["abi"],
                               args=[f"Token {t}", f"TK{t}", 10**30]) for t in range(TOKENS)]
        emitter = chain.deploy_runtime(owner, contracts.LOG_EMITTER)
        chain.mine()
        for token in tokens:
            for account in chain.accounts[1:SENDERS + 1]:
                chain.send(owner, token, data=TRANSFER + _word(account.address) + _word(10**24),
                           gas=80_000)
        chain.mine()
        for number in range(3, blocks + 1):
            _dense_block(chain, tokens, emitter, number, per_block)
            mined = chain.mine()
            if len(mined.transactions) != per_block:
                raise RuntimeError(f"block {number} took {len(mined.transactions)} of "
                                   f"{per_block} transactions")
            if log and number % 64 == 0:
                print(f"  mined block {number} of {blocks} "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
        transactions, logs = 0, 0
        mined_blocks = chain_blocks(chain)
        for block in mined_blocks:
            transactions += len(block.transactions)
            logs += sum(len(r.logs) for r in backend.receipts(block.header.hash) or ())
        saved = {"format": FORMAT, "head": blocks, "per_block": per_block,
                 "transactions": transactions, "logs": logs,
                 "raw_blocks": raw_blocks(mined_blocks),
                 "block1_base_fee": mined_blocks[0].header.base_fee_per_gas,
                 "build_seconds": time.perf_counter() - started}
        write_genesis(chain, folder)
    meta.write_text(json.dumps(saved))
    return _from_saved(folder, saved)


def export_ere(chain: ExecutableChain) -> Path:
    """The chain's blocks 0..head as ``ere`` files (the post-merge archive; Era1 holds
    pre-merge blocks only) in :attr:`ExecutableChain.ere`, written unless there already."""
    from ethread.era1.ere_export import export_ere as write_ere

    done = chain.ere / ".exported"
    if not done.exists():
        shutil.rmtree(chain.ere, ignore_errors=True)
        with LMDBBackend(chain.lmdb, create=False) as backend:
            write_ere(backend, chain.ere, network="executable")
        done.write_text(str(chain.head))
    return chain.ere


def _from_saved(folder: Path, saved: dict[str, object]) -> ExecutableChain:
    return ExecutableChain(
        folder=folder, head=int(str(saved["head"])), per_block=int(str(saved["per_block"])),
        transactions=int(str(saved["transactions"])), logs=int(str(saved["logs"])),
        raw_blocks=loaded_raw_blocks(saved["raw_blocks"]),
        block1_base_fee=int(str(saved["block1_base_fee"])),
        build_seconds=float(str(saved["build_seconds"])))


AGREEING = ("transactionsRoot", "receiptsRoot", "logsBloom", "gasUsed", "baseFeePerGas",
            "timestamp", "number")
"""Header fields that two nodes holding the same executed chain must agree on (the block hash,
state root and parent hash differ with the fields each node fills its own way: fee recipient,
prevrandao, parent beacon block root, and the parent hash the history contract stores)."""


def disagreements(ours: Mapping[str, object], theirs: Mapping[str, object]) -> Iterator[str]:
    """The fields of :data:`AGREEING` where two JSON-RPC block objects differ, and the
    transactions' hashes if they differ."""
    for name in AGREEING:
        if ours.get(name) != theirs.get(name):
            yield f"{name}: {ours.get(name)} != {theirs.get(name)}"
    if _hashes(ours) != _hashes(theirs):
        yield "transaction hashes"


def _hashes(block: Mapping[str, object]) -> list[object]:
    txs = block.get("transactions")
    assert isinstance(txs, list)
    return [t["hash"] if isinstance(t, dict) else t for t in txs]
