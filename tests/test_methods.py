"""The pure methods on the rpc-compat chain: typed answers, uncles, proofs that verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eth_utils import keccak

import ethread
from ethread import methods
from ethread.encoding import encode_header, encode_transaction
from ethread.errors import ExecutionReverted
from ethread.models import BlockHashRef, CallRequest, LegacyTransaction, LogFilter
from ethread.proofs import ProofError, verify_account_proof


def test_blocks_by_number_tag_and_hash(rpc_compat_memory: ethread.MemoryBackend) -> None:
    latest = methods.get_block_by_number(rpc_compat_memory, "latest")
    assert latest is not None and latest.number == 45
    for tag in ("pending", "safe", "finalized"):
        assert methods.get_block_by_number(rpc_compat_memory, tag) == latest
    assert methods.get_block_by_number(rpc_compat_memory, "earliest").number == 0  # type: ignore[union-attr]
    assert methods.get_block_by_hash(rpc_compat_memory, latest.hash) == latest
    assert methods.get_block_by_number(rpc_compat_memory, 46) is None
    assert methods.get_block_by_number(rpc_compat_memory, BlockHashRef(hash=latest.hash)) == latest


def test_every_block_hash_recomputes_and_links(rpc_compat_memory: ethread.MemoryBackend) -> None:
    parent = None
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        assert keccak(encode_header(block.header)) == block.hash
        if parent is not None:
            assert block.header.parent_hash == parent.hash
        for itx in block.transactions:
            assert keccak(encode_transaction(itx.transaction)) == itx.hash
            assert methods.get_transaction_by_hash(rpc_compat_memory, itx.hash) == itx
        parent = block


def test_uncles_by_hash_and_number(rpc_compat_memory: ethread.MemoryBackend) -> None:
    found = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        for index, uncle in enumerate(block.uncles):
            by_hash = methods.get_uncle_by_block_hash_and_index(rpc_compat_memory, block.hash, index)
            by_number = methods.get_uncle_by_block_number_and_index(rpc_compat_memory, number, index)
            assert by_hash == by_number
            assert by_hash is not None and by_hash.header == uncle
            assert keccak(encode_header(uncle)) == uncle.hash
            assert uncle.number < number
            found += 1
        assert methods.get_uncle_by_block_hash_and_index(rpc_compat_memory, block.hash, len(block.uncles)) is None
    assert found == 19


def test_uncle_json_is_a_bodiless_block(rpc_compat_memory: ethread.MemoryBackend) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"eth_getUncleByBlockNumberAndIndex","params":["0x3","0x0"]}'
    answer = json.loads(ethread.handle(rpc_compat_memory, body))  # type: ignore[arg-type]
    uncle = answer["result"]
    block = methods.get_block_by_number(rpc_compat_memory, 3)
    assert block is not None
    assert uncle["hash"] == "0x" + block.uncles[0].hash.hex()
    assert uncle["transactions"] == [] and uncle["uncles"] == []
    assert "totalDifficulty" not in uncle  # geth no longer answers it, and neither do we


def test_receipts_match_blocks(rpc_compat_memory: ethread.MemoryBackend) -> None:
    total_logs = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        receipts = methods.get_block_receipts(rpc_compat_memory, number)
        assert block is not None and receipts is not None
        assert [r.transaction_hash for r in receipts] == [t.hash for t in block.transactions]
        assert sum(r.gas_used for r in receipts) == block.header.gas_used
        index = 0
        for receipt in receipts:
            for log in receipt.logs:
                assert log.log_index == index
                assert log.block_timestamp == block.header.timestamp
                index += 1
        total_logs += index
        # Before Byzantium (block 9) receipts carry a state root, after it a status.
        for receipt in receipts:
            assert (receipt.root is not None) == (number < 9)
            assert (receipt.status is not None) == (number >= 9)
    logs = methods.get_logs(rpc_compat_memory, LogFilter(from_block="earliest", to_block="latest"))
    assert len(logs) == total_logs > 0


def test_legacy_chain_id_is_derived_from_v(rpc_compat_memory: ethread.MemoryBackend) -> None:
    protected = unprotected = 0
    for number in range(46):
        block = methods.get_block_by_number(rpc_compat_memory, number)
        assert block is not None
        for itx in block.transactions:
            tx = itx.transaction
            if isinstance(tx, LegacyTransaction):
                if tx.v in (27, 28):
                    assert tx.chain_id is None
                    unprotected += 1
                else:
                    assert tx.chain_id == 3503995874084926
                    protected += 1
    assert unprotected > 0


def test_every_proof_verifies(rpc_compat_dir: Path, rpc_compat_memory: ethread.MemoryBackend) -> None:
    genesis = json.loads((rpc_compat_dir / "genesis.json").read_text())
    addresses = [bytes.fromhex(a.removeprefix("0x")) for a in genesis["alloc"]]
    addresses.append(b"\x42" * 20)  # an account that does not exist: a proof of absence
    for number in (0, 9, 27, 45):
        header = methods.get_block_by_number(rpc_compat_memory, number).header  # type: ignore[union-attr]
        for address in addresses:
            slots = [b"\x00", b"\x01" * 32, b"\x02"]
            proof = methods.get_proof(rpc_compat_memory, address, slots, number)
            verify_account_proof(header.state_root, proof)
            assert proof.storage_proof[0].key == b"\x00"


def test_a_forged_proof_is_rejected(rpc_compat_memory: ethread.MemoryBackend) -> None:
    address = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
    proof = methods.get_proof(rpc_compat_memory, address, [b"\x00"], "latest")
    header = methods.get_block_by_number(rpc_compat_memory, "latest").header  # type: ignore[union-attr]
    verify_account_proof(header.state_root, proof)
    from dataclasses import replace

    with pytest.raises(ProofError):
        verify_account_proof(header.state_root, replace(proof, balance=proof.balance + 1))
    slot = replace(proof.storage_proof[0], value=proof.storage_proof[0].value + 1)
    with pytest.raises(ProofError):
        verify_account_proof(header.state_root, replace(proof, storage_proof=(slot,)))
    with pytest.raises(ProofError):
        verify_account_proof(b"\x00" * 32, proof)


def test_call_reverts_carry_reason_and_data(rpc_compat_memory: ethread.MemoryBackend) -> None:
    target = bytes.fromhex("0ee3ab1371c93e7c0c281cc0c2107cdebc8b1930")
    with pytest.raises(ExecutionReverted) as reverted:
        methods.call(rpc_compat_memory, CallRequest(to=target, data=b"\x01", gas=100_000), "latest")
    assert reverted.value.code == 3
    assert reverted.value.message == "execution reverted: user error"
    assert isinstance(reverted.value.data, str) and reverted.value.data.startswith("0x08c379a0")


def test_call_at_an_old_block_sees_old_state(rpc_compat_memory: ethread.MemoryBackend) -> None:
    callenv = bytes.fromhex("9344b07175800259691961298ca11c824e65032d")
    for number in (27, 33, 45):  # BASEFEE, which the contract reads, exists from London on
        output = methods.call(rpc_compat_memory, CallRequest(to=callenv), number)
        assert int.from_bytes(output[:32], "big") == number  # NUMBER is the block's own
    # Before Istanbul the contract's CHAINID is not an opcode yet: the call fails as geth's does.
    with pytest.raises(ethread.EthreadError, match="invalid opcode: CHAINID"):
        methods.call(rpc_compat_memory, CallRequest(to=callenv), 10)


def test_call_gas_is_capped(rpc_compat_memory: ethread.MemoryBackend) -> None:
    callenv = bytes.fromhex("9344b07175800259691961298ca11c824e65032d")
    # Far above the cap: still runs, with the cap (10x the block gas limit) as its gas.
    output = methods.call(rpc_compat_memory, CallRequest(to=callenv, gas=2**63), "latest")
    assert len(output) > 0


def test_revert_reason_decoding() -> None:
    from ethread.methods.call import decode_revert_reason

    assert decode_revert_reason(bytes.fromhex("4e487b71") + (0x11).to_bytes(32, "big")) == \
        "arithmetic underflow or overflow"
    assert decode_revert_reason(bytes.fromhex("4e487b71") + (0x99).to_bytes(32, "big")) == "unknown panic code: 0x99"
    assert decode_revert_reason(b"\x12\x34") is None
    assert decode_revert_reason(bytes.fromhex("08c379a0") + (32).to_bytes(32, "big") + (500).to_bytes(32, "big")) \
        is None
