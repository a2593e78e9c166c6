"""The dev chain's layout: :class:`DevChain` is put together from one class per concern, no
class of the package (the transaction pool's included) runs past 400 lines, and the chain
still answers to every name it had as one class."""

from __future__ import annotations

import ast
from pathlib import Path

import ethread.devchain
from ethread.devchain import DevChain
from ethread.devchain.anvil_controls import AnvilControls
from ethread.devchain.client_signing import ClientSigning
from ethread.devchain.core import ChainCore
from ethread.devchain.forked import ForkedReads
from ethread.devchain.mining import BlockMining
from ethread.devchain.pool_controls import PoolControls
from ethread.devchain.sending import TransactionSending
from ethread.devchain.snapshots import Snapshots
from ethread.devchain.state_files import StateFiles

MAX_CLASS_LINES = 400
PACKAGE = Path(ethread.devchain.__file__).parent

# DevChain's public methods and properties when it was one class (before the split).
PUBLIC_NAMES = {
    "account", "balance", "block", "call", "code", "deploy", "deploy_runtime",
    "drop_all_transactions", "drop_transaction", "dump_state", "edit", "fork", "fork_history",
    "fork_origin", "fork_proof", "forked_from", "fund", "head", "impersonate", "increase_time",
    "is_impersonated", "load_state", "local_accounts", "mine", "mine_until", "mine_until_fork",
    "next_base_fee", "next_fork", "next_gas_limit", "next_nonce", "nonce", "pending",
    "pending_block", "pending_state", "pending_transaction", "pool_account", "pool_arrivals",
    "receipt", "reset", "revert", "send", "send_request", "served_pool", "set_balance",
    "set_chain_id", "set_code", "set_gas_limit", "set_next_base_fee", "set_next_block_timestamp",
    "set_nonce", "set_storage", "sibling", "sign_message", "sign_request", "sign_typed_data",
    "signer", "snapshot", "snapshots", "stop_impersonating", "storage", "submit",
}


def _class_lengths() -> dict[str, int]:
    lengths = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lengths[f"{path.relative_to(PACKAGE)}:{node.name}"] = node.end_lineno - first + 1
    return lengths


def test_no_class_of_the_package_is_over_400_lines() -> None:
    lengths = _class_lengths()
    assert "builder.py:DevChain" in lengths and "core.py:ChainCore" in lengths
    assert "txpool.py:TxPool" in lengths and "txpool.py:PoolLines" in lengths
    too_long = {name: n for name, n in lengths.items() if n > MAX_CLASS_LINES}
    assert too_long == {}


def test_dev_chain_is_joined_from_its_concerns() -> None:
    parts = (ChainCore, ForkedReads, BlockMining, PoolControls, TransactionSending,
             ClientSigning, AnvilControls, Snapshots, StateFiles)
    assert all(issubclass(DevChain, part) for part in parts)
    # Each name is defined once: no part overrides another's method.
    owners: dict[str, list[str]] = {}
    for part in parts:
        for name in vars(part):
            if not name.startswith("__"):
                owners.setdefault(name, []).append(part.__name__)
    shared = {name: who for name, who in owners.items() if len(who) > 1}
    assert shared == {"edit": ["ChainCore", "BlockMining"]}  # declared by the core, made by mining
    assert getattr(ChainCore.edit, "__isabstractmethod__", False)


def test_dev_chain_keeps_every_public_name() -> None:
    public = {name for name in dir(DevChain) if not name.startswith("_")}
    assert PUBLIC_NAMES - public == set()
