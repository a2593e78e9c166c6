"""codec/serialize.py: models written as geth writes them, checked against geth's own answers
recorded in the conformance cases (rpc-compat, recorded from geth 1.16; osaka, from 1.17):
blocks with hashes or whole transactions, from the model or from its outline, transactions,
block receipts, eth_feeHistory, eth_config and eth_capabilities. The writers are called
directly on the models the chains hold (not through the JSON-RPC pipeline), with and without
a fragment cache; and the fragment cache's own rules (bounds, sharing between processes)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from ethread.backends.memory import MemoryBackend
from ethread.codec.answers import DEFAULT_ANSWERS, GETH_1_16, AnswerStyle
from ethread.codec.serialize import (
    FragmentCache,
    block_json,
    block_json_by_hash,
    block_receipts_json,
    capabilities_json,
    chain_forks_json,
    fee_history_json,
    go_float,
    header_json,
    receipts_answer,
    to_json,
)
from ethread.methods.config import get_config
from ethread.methods.fees import fee_history
from ethread.models import Block
from ethread.results import EMPTY_HISTORY, Availability, Capabilities, FeeHistory
from ethread.rlpcodec.blocks import outline_of_block
from tests.support.paths import conformance_dir
from tests.support.rpc_cases import read_case

CHAINS = {"rpc-compat": GETH_1_16, "osaka": DEFAULT_ANSWERS}
"""Each chain's cases, and the answer style of the geth release that recorded them."""


@pytest.fixture(scope="module")
def chains(rpc_compat_memory: MemoryBackend, osaka_memory: MemoryBackend) -> dict[str, MemoryBackend]:
    return {"rpc-compat": rpc_compat_memory, "osaka": osaka_memory}


def _cases(method: str) -> list[tuple[str, str, list[Any], Any]]:
    """(chain, case name, params, geth's result) of every case of ``method`` with a result."""
    out = []
    for chain in CHAINS:
        for folder in ("cases", "read-side"):
            for path in sorted((conformance_dir() / chain / folder / method).glob("*.io")):
                for exchange in read_case(path):
                    if "result" in exchange.expected:
                        params = json.loads(exchange.request)["params"]
                        out.append((chain, path.stem, params, exchange.expected["result"]))
    return out


def _ids(cases: list[tuple[str, str, list[Any], Any]]) -> list[str]:
    return [f"{chain}/{name}" for chain, name, _, _ in cases]


def _block_hash(backend: MemoryBackend, ref: str) -> bytes | None:
    """The block a request names (a hash, a hex number or a tag), resolved by hand."""
    if len(ref) == 66:
        return bytes.fromhex(ref[2:])
    number = backend.pointer(ref) if not ref.startswith("0x") else int(ref, 16)  # type: ignore[arg-type]
    return None if number is None else backend.canonical_hash(number)


def _block(backend: MemoryBackend, ref: str) -> Block | None:
    block_hash = _block_hash(backend, ref)
    return None if block_hash is None else backend.block_by_hash(block_hash)


def _plain(value: Any) -> Any:
    """JSON values with any fragments in them written out and read back."""
    return orjson.loads(orjson.dumps(value))


BLOCK_CASES = _cases("eth_getBlockByNumber") + _cases("eth_getBlockByHash")


@pytest.mark.parametrize(("chain", "name", "params", "expected"), BLOCK_CASES, ids=_ids(BLOCK_CASES))
def test_a_block_is_written_as_geth_wrote_it(chains: dict[str, MemoryBackend], chain: str,
                                             name: str, params: list[Any], expected: Any) -> None:
    backend, style = chains[chain], CHAINS[chain]
    ref, full = params
    block = _block(backend, ref)
    assert (block is None) == (expected is None)
    block_hash = _block_hash(backend, ref) or b"\x00" * 32
    assert _plain(block_json_by_hash(block_hash, full, lambda: block, FragmentCache(), style)) == expected
    assert block_json_by_hash(block_hash, full, lambda: block, None, style) == expected
    if block is None:
        return
    assert block_json(block, full, None, style) == expected
    fragments = FragmentCache()
    assert _plain(block_json(block, full, fragments, style)) == expected
    assert _plain(block_json(block, full, fragments, style)) == expected  # from the cache
    if not full:  # an outline (no transaction decoded) writes the same object
        outline = outline_of_block(block)
        assert block_json_by_hash(block.hash, False, lambda: outline, None, style) == expected


def test_an_outline_cannot_answer_whole_transactions(rpc_compat_memory: MemoryBackend) -> None:
    block = _block(rpc_compat_memory, "latest")
    assert block is not None
    outline = outline_of_block(block)
    with pytest.raises(TypeError, match=r"^whole transactions are answered from a block, not its outline$"):
        block_json_by_hash(block.hash, True, lambda: outline)


def test_geth_1_17_adds_the_block_timestamp_to_transaction_objects(
        rpc_compat_memory: MemoryBackend) -> None:
    block = _block(rpc_compat_memory, "0x1b")  # a block with transactions
    assert block is not None and block.transactions
    old = block_json(block, True, None, GETH_1_16)
    new = block_json(block, True, None, DEFAULT_ANSWERS)
    for before, after in zip(old["transactions"], new["transactions"], strict=True):
        assert "blockTimestamp" not in before
        assert after == {**before, "blockTimestamp": old["timestamp"]}
    assert {k: v for k, v in new.items() if k != "transactions"} == {
        k: v for k, v in old.items() if k != "transactions"}


def test_header_json_is_the_block_object_without_its_body(rpc_compat_memory: MemoryBackend) -> None:
    block = _block(rpc_compat_memory, "0x2d")
    assert block is not None
    whole = block_json(block, False)
    assert header_json(block.header, block.size) == {
        k: v for k, v in whole.items() if k not in ("transactions", "uncles", "withdrawals")}


TX_CASES = _cases("eth_getTransactionByHash")


@pytest.mark.parametrize(("chain", "name", "params", "expected"), TX_CASES, ids=_ids(TX_CASES))
def test_a_transaction_is_written_as_geth_wrote_it(chains: dict[str, MemoryBackend], chain: str,
                                                   name: str, params: list[Any], expected: Any) -> None:
    backend, style = chains[chain], CHAINS[chain]
    location = backend.transaction_location(bytes.fromhex(params[0][2:]))
    assert (location is None) == (expected is None)
    if location is None:
        return
    block = backend.block_by_hash(location[0])
    assert block is not None
    itx = block.transactions[location[1]]
    assert to_json(itx, None, style) == expected
    assert _plain(to_json(itx, FragmentCache(), style)) == expected


RECEIPTS_CASES = _cases("eth_getBlockReceipts")


@pytest.mark.parametrize(("chain", "name", "params", "expected"), RECEIPTS_CASES,
                         ids=_ids(RECEIPTS_CASES))
def test_block_receipts_are_written_as_geth_wrote_them(
        chains: dict[str, MemoryBackend], chain: str, name: str, params: list[Any],
        expected: Any) -> None:
    backend, style = chains[chain], CHAINS[chain]
    block_hash = _block_hash(backend, params[0]) or b"\x00" * 32

    def load() -> Any:
        return backend.receipts(block_hash)

    assert block_receipts_json(block_hash, load, None, style) == expected
    assert _plain(block_receipts_json(block_hash, load, FragmentCache(), style)) == expected
    receipts = load()
    if receipts is not None:
        assert orjson.loads(receipts_answer(receipts, style)) == expected
        assert _plain(to_json(receipts, FragmentCache(), style)) == expected
        logs = [log for receipt in receipts for log in receipt.logs]
        assert to_json(logs, None, style) == [log for r in expected for log in r["logs"]]


FEE_CASES = _cases("eth_feeHistory")


@pytest.mark.parametrize(("chain", "name", "params", "expected"), FEE_CASES, ids=_ids(FEE_CASES))
def test_fee_history_is_written_as_geth_wrote_it(chains: dict[str, MemoryBackend], chain: str,
                                                 name: str, params: list[Any], expected: Any) -> None:
    count, newest, percentiles = params
    history = fee_history(chains[chain], int(count, 16), int(newest, 16), percentiles)
    assert fee_history_json(history) == expected


def test_an_empty_fee_history_keeps_only_the_keys_geth_always_writes() -> None:
    assert fee_history_json(EMPTY_HISTORY) == {"oldestBlock": "0x0", "gasUsedRatio": None}
    history = FeeHistory(oldest_block=3, reward=(), base_fee_per_gas=(7, 8), gas_used_ratio=(0.0,),
                         base_fee_per_blob_gas=(), blob_gas_used_ratio=())
    assert fee_history_json(history) == {"oldestBlock": "0x3", "baseFeePerGas": ["0x7", "0x8"],
                                         "gasUsedRatio": [0]}


@pytest.mark.parametrize(("value", "written"), [(0.0, "0"), (1.0, "1"), (0.5, "0.5"),
                                                (0.123456789, "0.123456789"), (3e20, "300000000000000000000")])
def test_go_float_writes_whole_numbers_without_a_fraction(value: float, written: str) -> None:
    assert json.dumps(go_float(value)) == written


def test_eth_config_is_written_as_geth_wrote_it(osaka_memory: MemoryBackend) -> None:
    (exchange,) = read_case(conformance_dir() / "osaka" / "cases" / "eth_config" / "get-config.io")
    forks = get_config(osaka_memory)
    assert forks is not None
    assert chain_forks_json(forks) == exchange.expected["result"]


def test_eth_capabilities_has_geths_shape() -> None:
    """The recorded answer (speconly: its values are the recording node's), rebuilt from the
    values it shows: a window of retention writes deleteStrategy, none leaves it out."""
    (exchange,) = read_case(conformance_dir() / "osaka" / "cases" / "eth_capabilities"
                            / "get-capabilities.io")
    expected = exchange.expected["result"]
    kept = Availability(disabled=False, oldest_block=0)
    capabilities = Capabilities(
        head_number=0x36, head_hash=bytes.fromhex(expected["head"]["hash"][2:]), state=kept,
        tx=kept, logs=Availability(disabled=False, oldest_block=0, retention_blocks=0x23DBB0),
        receipts=kept, blocks=kept, state_proofs=kept)
    assert capabilities_json(capabilities) == expected
    disabled = capabilities_json(Capabilities(
        head_number=1, head_hash=b"\x01" * 32, state=Availability(disabled=True, oldest_block=None),
        tx=kept, logs=kept, receipts=kept, blocks=kept, state_proofs=kept))
    assert disabled["state"] == {"disabled": True}


# the fragment cache


def test_a_fragment_is_built_once_and_embedded_as_it_was_encoded() -> None:
    fragments = FragmentCache()
    built: list[int] = []

    def build() -> Any:
        built.append(1)
        return {"a": 1}

    first = fragments.get("k", build)
    assert fragments.get("k", build) is first and built == [1]
    assert fragments.cached("k") is first and fragments.cached("other") is None
    assert orjson.dumps([first]) == b'[{"a":1}]'
    assert len(fragments) == 1 and fragments.bytes == len(b'{"a":1}')


@pytest.mark.parametrize(("max_entries", "max_bytes", "sizes", "kept"), [
    (2, 1000, [3, 3, 3], ["k2"]),  # the third entry empties a full cache
    (10, 10, [4, 4, 4], ["k2"]),  # 12 bytes would pass the bound
    (10, 12, [4, 4, 4], ["k0", "k1", "k2"]),
])
def test_a_full_fragment_cache_starts_over(max_entries: int, max_bytes: int, sizes: list[int],
                                           kept: list[str]) -> None:
    fragments = FragmentCache(max_entries=max_entries, max_bytes=max_bytes)
    for n, size in enumerate(sizes):
        fragments.put(f"k{n}", b"1" * size)
    assert [f"k{n}" for n in range(len(sizes)) if fragments.cached(f"k{n}") is not None] == kept
    assert fragments.bytes == sum(sizes[int(k[1:])] for k in kept)


class SharedDict:
    """A SharedFragments double: one dict for every process."""

    def __init__(self) -> None:
        self.store: dict[bytes, bytes] = {}

    def get(self, name: bytes) -> bytes | None:
        return self.store.get(name)

    def put(self, name: bytes, encoded: bytes) -> None:
        self.store[name] = encoded


def test_block_receipts_are_decoded_by_one_process_and_shared(rpc_compat_memory: MemoryBackend) -> None:
    shared = SharedDict()
    first, second = FragmentCache(), FragmentCache()
    first.shared = second.shared = shared
    block_hash = rpc_compat_memory.canonical_hash(0x1b)
    assert block_hash is not None
    loads: list[int] = []

    def load() -> Any:
        loads.append(1)
        return rpc_compat_memory.receipts(block_hash)

    one = block_receipts_json(block_hash, load, first)
    two = block_receipts_json(block_hash, load, second)
    assert loads == [1]  # the second process read the first one's answer
    assert orjson.dumps(one) == orjson.dumps(two)
    assert shared.store == {b"receipts:" + block_hash: orjson.dumps(one)}
    assert orjson.loads(orjson.dumps(one)) == block_receipts_json(block_hash, load)


def test_styles_are_kept_apart_in_a_shared_store(rpc_compat_memory: MemoryBackend) -> None:
    shared = SharedDict()
    fragments = FragmentCache()
    fragments.shared = shared
    block = _block(rpc_compat_memory, "0x1b")
    assert block is not None
    styles: list[AnswerStyle] = [DEFAULT_ANSWERS, GETH_1_16]
    answers = [_plain(block_json_by_hash(block.hash, True, lambda: block, fragments, s)) for s in styles]
    assert answers[0] != answers[1]
    assert set(shared.store) == {b"block+txs:" + block.hash, b"block+txs@geth-1.16:" + block.hash}


def test_nothing_is_kept_for_a_block_not_held() -> None:
    shared = SharedDict()
    fragments = FragmentCache()
    fragments.shared = shared
    assert block_json_by_hash(b"\x00" * 32, False, lambda: None, fragments) is None
    assert block_receipts_json(b"\x00" * 32, lambda: None, fragments) is None
    assert len(fragments) == 0 and shared.store == {}
