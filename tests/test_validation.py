"""The typed API refuses what it cannot take, once, at the boundary: strings where bytes or
block numbers are wanted, mistyped tags, bare topics. Never a silent wrong answer."""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread import methods
from ethread.devchain import DevChain
from ethread.errors import ArgumentTypeError, ArgumentValueError, InvalidParams
from ethread.models import BlockHashRef, CallRequest, LogFilter


@pytest.fixture(scope="module")
def chain() -> DevChain:
    chain = DevChain(ethread.MemoryBackend(), accounts=2)
    chain.fund(chain.accounts[1].address, 5)
    chain.mine()
    return chain


@pytest.mark.parametrize("block", ["0xa", "10", "1", " 0x1"])
def test_a_block_number_as_a_string_is_a_type_error(chain: DevChain, block: str) -> None:
    with pytest.raises(TypeError, match="as an int"):
        methods.get_block_by_number(chain.backend, block)  # type: ignore[arg-type]


def test_a_mistyped_tag_is_a_value_error_naming_the_tags(chain: DevChain) -> None:
    with pytest.raises(ValueError, match="unknown block tag 'lastest'; tags are latest"):
        methods.get_block_by_number(chain.backend, "lastest")  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError):
        methods.get_block_receipts(chain.backend, "Latest")  # type: ignore[arg-type]


@pytest.mark.parametrize("block", [True, -1, 1 << 63, 1.0, None, b"\x00" * 32])
def test_other_block_values_are_refused(chain: DevChain, block: Any) -> None:
    with pytest.raises(InvalidParams):
        methods.get_block_by_number(chain.backend, block)


def test_good_block_references_still_answer(chain: DevChain) -> None:
    head = methods.get_block_by_number(chain.backend, "latest")
    assert head is not None and head.number == 1
    assert methods.get_block_by_number(chain.backend, 1) == head
    assert methods.get_block_by_number(chain.backend, 5) is None  # past the head: absent
    by_hash = methods.get_block_receipts(chain.backend, BlockHashRef(hash=head.hash))
    assert by_hash is not None and len(by_hash) == 1


def test_hashes_as_hex_strings_are_refused_not_answered_none(chain: DevChain) -> None:
    tx_hash = chain.block(1).transactions[0].hash
    with pytest.raises(TypeError, match="pass 32 bytes, not the string"):
        methods.get_transaction_by_hash(chain.backend, "0x" + tx_hash.hex())  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError, match="expected 32 bytes, got 31"):
        methods.get_transaction_by_hash(chain.backend, tx_hash[:31])
    found = methods.get_transaction_by_hash(chain.backend, tx_hash)
    assert found is not None and found.hash == tx_hash
    with pytest.raises(TypeError):
        methods.get_block_by_hash(chain.backend, "0x" + "00" * 32)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        BlockHashRef(hash="0x" + "00" * 32)  # type: ignore[arg-type]


def test_indexes_must_be_ints(chain: DevChain) -> None:
    with pytest.raises(TypeError):
        methods.get_transaction_by_block_number_and_index(chain.backend, 1, "0")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        methods.get_uncle_by_block_number_and_index(chain.backend, 1, -1)


def test_log_filter_refuses_hex_addresses_and_bare_topics() -> None:
    with pytest.raises(TypeError, match="pass 20 bytes, not the string"):
        LogFilter(addresses=("0x" + "11" * 20,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\(address,\) for one"):
        LogFilter(addresses=b"\x11" * 20)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"topics\[0\]: pass a tuple of 32-byte topics"):
        LogFilter(topics=(b"\x22" * 32,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a bare bytes"):
        LogFilter(topics=b"\x22" * 32)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="matches nothing"):
        LogFilter(topics=((),))
    with pytest.raises(TypeError):
        LogFilter(from_block="0x0")  # type: ignore[arg-type]
    ok = LogFilter(addresses=[b"\x11" * 20], topics=[None, [b"\x22" * 32]])  # type: ignore[arg-type]
    assert ok.addresses == (b"\x11" * 20,) and ok.topics == (None, (b"\x22" * 32,))


def test_get_logs_wants_a_log_filter(chain: DevChain) -> None:
    with pytest.raises(TypeError, match="LogFilter"):
        methods.get_logs(chain.backend, {"fromBlock": 0})  # type: ignore[arg-type]


def test_call_and_proof_refuse_strings(chain: DevChain) -> None:
    with pytest.raises(TypeError):
        CallRequest(to="0x" + "11" * 20)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CallRequest(data="0xa9059cbb")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="CallRequest"):
        methods.call(chain.backend, {"to": "0x"}, "latest")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        methods.get_proof(chain.backend, "0x" + "11" * 20, [], "latest")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sequence of keys"):
        methods.get_proof(chain.backend, b"\x11" * 20, b"\x00" * 32, "latest")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        methods.decode_revert_reason("0x08c379a0")  # type: ignore[arg-type]


def test_errors_are_invalid_params_over_json_rpc_too(chain: DevChain) -> None:
    """What the codec parses never reaches these checks: over the wire a bad tag is still
    geth's -32602 message."""
    answer = ethread.handle(chain.backend, b'{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber",'
                                           b'"params":["lastest",false]}')
    assert answer is not None and b"-32602" in answer
    assert issubclass(ArgumentTypeError, InvalidParams) and issubclass(ArgumentTypeError, TypeError)
