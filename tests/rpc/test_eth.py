"""eth_getBlockReceipts keeps each block's answer under the block's hash: asked again by
number (hex or a JSON number), hash or tag (with no answer cache) it answers the same bytes without
reading the receipts again, and those bytes are the receipts' JSON. The block rows, which read
the store through the fragment cache, answer as the methods they skip."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from eth_utils import to_checksum_address

import ethread
from ethread.codec.response_cache import ResponseCache
from ethread.codec.serialize import FragmentCache, block_json, block_receipts_json, to_json
from ethread.devchain import DevChain, contracts
from ethread.models import Hash32, Receipt
from ethread.rpc.dispatcher import Dispatcher
from tests.support.provider_calls import address_of, error, ok


class CountingReads:
    """A backend that counts its receipts reads."""

    def __init__(self, backend: ethread.MemoryBackend) -> None:
        self._backend = backend
        self.reads = 0

    def receipts(self, block_hash: Hash32) -> tuple[Receipt, ...] | None:
        self.reads += 1
        return self._backend.receipts(block_hash)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _result(dispatcher: Dispatcher, *params: object) -> bytes:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "eth_getBlockReceipts",
                         "params": list(params)})
    answer = dispatcher.handle(body)
    assert answer is not None
    result: bytes = orjson.dumps(orjson.loads(answer)["result"])
    return result


def test_block_receipts_answered_from_the_block_hash(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    counting = CountingReads(rpc_compat_memory)
    dispatcher = Dispatcher(counting, cache=ResponseCache(max_entries=0))  # type: ignore[arg-type]
    head = rpc_compat_memory.pointer("latest")
    assert head is not None
    with_receipts = 0
    for number in range(head + 1):
        block_hash = rpc_compat_memory.canonical_hash(number)
        assert block_hash is not None
        receipts = rpc_compat_memory.receipts(block_hash)
        assert receipts is not None
        with_receipts += bool(receipts)
        expected = orjson.dumps(to_json(receipts))
        reads = counting.reads
        assert _result(dispatcher, hex(number)) == expected
        assert counting.reads == reads + 1
        assert _result(dispatcher, number) == expected  # a JSON number, as geth takes it
        assert _result(dispatcher, {"blockHash": "0x" + block_hash.hex()}) == expected
        assert _result(dispatcher, "0x" + block_hash.hex()) == expected
        if number == head:
            assert _result(dispatcher, "latest") == expected
        assert counting.reads == reads + 1  # every later one from the kept answer
    assert with_receipts > 5
    assert _result(dispatcher, hex(head + 1)) == b"null"


def test_block_receipts_json_without_a_cache_and_for_a_missing_block(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    block_hash = rpc_compat_memory.canonical_hash(1)
    assert block_hash is not None
    receipts = rpc_compat_memory.receipts(block_hash)
    assert receipts
    plain = block_receipts_json(block_hash, lambda: receipts)
    assert orjson.dumps(plain) == orjson.dumps(to_json(receipts))
    fragments = FragmentCache()
    assert block_receipts_json(b"\x01" * 32, lambda: None, fragments) is None
    assert len(fragments) == 0  # nothing is kept for a block without receipts


def test_account_info_is_balance_nonce_and_code_of_one_state(chain: DevChain) -> None:
    emitter = chain.deploy_runtime(chain.accounts[0], contracts.LOG_EMITTER)
    chain.mine()
    me = address_of(chain, 0)
    for address in (me, to_checksum_address(emitter), "0x" + "00" * 19 + "42"):
        info = ok(chain, "eth_getAccountInfo", address, "latest")
        assert info == {"balance": ok(chain, "eth_getBalance", address, "latest"),
                        "nonce": ok(chain, "eth_getTransactionCount", address, "latest"),
                        "code": ok(chain, "eth_getCode", address, "latest")}
    assert ok(chain, "eth_getAccountInfo", me, "0x0")["nonce"] == "0x0"
    assert ok(chain, "eth_getAccountInfo", me)["nonce"] == "0x1"
    code, message = error(chain, "eth_getAccountInfo", me, "0x99")
    assert code == -32000 and "not found" in message
    assert error(chain, "eth_getAccountInfo", "0x12")[0] == -32602


def test_a_stores_block_objects_with_hashes_are_the_memory_backends(
        rpc_compat_memory: Any, osaka_memory: Any, tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """eth_getBlockByNumber and eth_getBlockByHash with transaction hashes, answered from a
    store's outline of each block (no block decoded: the decoder is disabled meanwhile), are
    byte for byte the memory backend's answers (from the decoded block), for every block of
    both conformance chains; and whole transactions asked after are unchanged."""
    from ethread.backends import history
    from ethread.backends.lmdb import LMDBBackend
    from ethread.backends.memory import MemoryBackend
    from tests.support.storage_backends import lmdb_from

    def no_decoding(*args: Any) -> Any:
        raise AssertionError("a block was decoded for its hashes")

    for n, memory in enumerate((rpc_compat_memory, osaka_memory)):
        assert isinstance(memory, MemoryBackend)
        lmdb_from(memory, tmp_path / f"store{n}").close()
        store = LMDBBackend(tmp_path / f"store{n}", create=False)  # nothing cached
        try:
            plain, outlined = Dispatcher(memory), Dispatcher(store)
            head = memory.pointer("latest")
            assert head is not None
            for full in (False, True):
                with monkeypatch.context() as patch:
                    if not full:
                        patch.setattr(history, "block_from_parts", no_decoding)
                    for number in range(head + 1):
                        block_hash = memory.canonical_hash(number)
                        assert block_hash is not None
                        for method, ref in (("eth_getBlockByNumber", hex(number)),
                                            ("eth_getBlockByHash", "0x" + block_hash.hex())):
                            body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                 "params": [ref, full]})
                            assert outlined.handle(body) == plain.handle(body), (method, number)
        finally:
            store.close()


def test_the_block_rows_answer_as_the_methods_they_skip(rpc_compat_memory: ethread.MemoryBackend
                                                         ) -> None:
    """eth_getBlockByHash, eth_getBlockByNumber and eth_getBlockReceipts read the store through
    the fragment cache instead of calling ``ethread.methods``: on every block of the rpc-compat
    chain (both ways for full transactions), asked twice so that the second answer comes from
    the cache, they are the JSON of what the methods return."""
    from ethread import methods
    from ethread.rpc.context import DEFAULT_CONTEXT
    from ethread.rpc.table import call_method

    ctx = DEFAULT_CONTEXT.for_backend()
    head = rpc_compat_memory.pointer("latest")
    assert head is not None and head > 30
    for number in range(head + 1):
        block_hash = rpc_compat_memory.canonical_hash(number)
        assert block_hash is not None
        block = methods.get_block_by_hash(rpc_compat_memory, block_hash)
        assert block is not None
        for full in (False, True):
            expected = orjson.dumps(block_json(block, full))
            for _ in range(2):
                assert call_method(rpc_compat_memory, "eth_getBlockByHash",
                                   ["0x" + block_hash.hex(), full], ctx) == expected
                assert call_method(rpc_compat_memory, "eth_getBlockByNumber",
                                   [hex(number), full], ctx) == expected
        receipts = orjson.dumps(to_json(methods.get_block_receipts(rpc_compat_memory, number)))
        for _ in range(2):
            assert call_method(rpc_compat_memory, "eth_getBlockReceipts", [hex(number)],
                               ctx) == receipts
