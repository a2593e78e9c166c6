"""devchain/payload.py (testing_buildBlockV1): a block built on the head without storing it,
from the transactions given (each must apply, else the answer names the first that cannot) or
from the pool's best (what cannot pay the base fee is left out); its header, value to the fee
recipient, withdrawals and requests; geth's gas-limit step; refusals of bad timestamps and
withdrawals before Shanghai."""

from __future__ import annotations

import pytest
from eth_utils import keccak

import ethread
from ethread.devchain import DevChain, ForkSchedule
from ethread.devchain.payload import (
    GAS_CEIL,
    BuildFailed,
    BuiltPayload,
    PayloadAttributes,
    build_payload,
    calc_gas_limit,
)
from ethread.devchain.signing import sign_transaction
from ethread.models import DynamicFeeTransaction
from ethread.rlpcodec.transactions import encode_transaction

GWEI = 10**9
RECIPIENT = b"\xfe" * 20


def _transfer(chain: DevChain, sender: int, nonce: int, *, tip: int = GWEI,
              fee_cap: int = 30 * GWEI) -> bytes:
    tx = DynamicFeeTransaction(chain_id=chain.chain_id, nonce=nonce, max_priority_fee_per_gas=tip,
                               max_fee_per_gas=fee_cap, gas=21_000, to=b"\x01" * 20, value=1,
                               data=b"", access_list=(), y_parity=0, r=0, s=0)
    return encode_transaction(sign_transaction(tx, chain.accounts[sender]))


def _attributes(chain: DevChain, *, timestamp: int | None = None,
                withdrawals: tuple[()] | None = None) -> PayloadAttributes:
    return PayloadAttributes(timestamp=chain.head.timestamp + 12 if timestamp is None else timestamp,
                             prev_randao=b"\x07" * 32, fee_recipient=RECIPIENT,
                             withdrawals=withdrawals, beacon_root=b"\x09" * 32)


def _build(chain: DevChain, transactions: list[bytes] | None, *, timestamp: int | None = None,
           withdrawals: tuple[()] | None = None) -> BuiltPayload:
    attributes = _attributes(chain, timestamp=timestamp, withdrawals=withdrawals)
    return build_payload(chain.backend, chain.config, chain.head, attributes,
                         transactions, b"built", chain.pool)


@pytest.fixture
def chain() -> DevChain:
    return DevChain(ethread.MemoryBackend(), accounts=3, automine=False)


def test_the_gas_limit_moves_one_step_towards_the_target() -> None:
    step = 30_000_000 // 1024 - 1
    assert calc_gas_limit(30_000_000, GAS_CEIL) == 30_000_000 + step
    assert calc_gas_limit(30_000_000, 30_000_010) == 30_000_010  # not past the target
    assert calc_gas_limit(30_000_000, 10_000_000) == 30_000_000 - step
    assert calc_gas_limit(30_000_000, 30_000_000) == 30_000_000
    assert calc_gas_limit(6000, 0) == 6000 - (6000 // 1024 - 1)  # towards the least (5000)


def test_the_given_transactions_make_a_block_that_is_not_stored(chain: DevChain) -> None:
    head = chain.head
    raw = [_transfer(chain, 0, 0), _transfer(chain, 1, 0, tip=2 * GWEI)]
    built = _build(chain, raw)
    header = built.header
    assert header.number == head.number + 1 and header.parent_hash == head.hash
    assert header.coinbase == RECIPIENT and header.extra_data == b"built"
    assert header.mix_hash == b"\x07" * 32 and header.parent_beacon_block_root == b"\x09" * 32
    assert header.gas_used == 42_000 and header.gas_limit == calc_gas_limit(head.gas_limit, GAS_CEIL)
    assert built.transactions == tuple(raw)
    base_fee = header.base_fee_per_gas
    assert base_fee is not None
    assert built.block_value == 21_000 * (min(GWEI, 30 * GWEI - base_fee)
                                          + min(2 * GWEI, 30 * GWEI - base_fee))
    assert built.withdrawals == () and built.requests == () and built.sidecars == ()
    assert chain.head == head and chain.nonce(chain.accounts[0].address) == 0  # nothing stored


def test_without_transactions_given_the_pool_is_taken_by_price(chain: DevChain) -> None:
    cheap = chain.submit(_transfer(chain, 0, 0, tip=GWEI))
    dear = chain.submit(_transfer(chain, 1, 0, tip=3 * GWEI))
    chain.submit(_transfer(chain, 2, 0, tip=1, fee_cap=1))  # cannot pay the base fee
    built = _build(chain, None)
    assert [keccak(raw) for raw in built.transactions] == [dear, cheap]
    assert _build(chain, []).transactions == ()


@pytest.mark.parametrize(("given", "message"), [
    ([b""], "invalid transaction 0: typed transaction too short"),
    ([b"\x02\xc1\x80"], "invalid transaction 0: rlp: "),
])
def test_transactions_that_do_not_decode_are_named(chain: DevChain, given: list[bytes],
                                                  message: str) -> None:
    with pytest.raises(BuildFailed) as caught:
        _build(chain, given)
    assert caught.value.message.startswith(message) and caught.value.code == -32000


def test_the_first_transaction_that_cannot_apply_is_the_answer(chain: DevChain) -> None:
    with pytest.raises(BuildFailed, match="nonce too high"):
        _build(chain, [_transfer(chain, 0, 0), _transfer(chain, 0, 5)])
    with pytest.raises(BuildFailed, match="invalid chain id for signer: have 1 want 1337"):
        other = DevChain(ethread.MemoryBackend(), accounts=1, chain_id=1)
        _build(chain, [_transfer(other, 0, 0)])


def test_timestamps_and_withdrawals_are_checked(chain: DevChain) -> None:
    with pytest.raises(BuildFailed, match="invalid timestamp, parent 0 given 0"):
        _build(chain, [], timestamp=0)
    london = DevChain(ethread.MemoryBackend(), forks=ForkSchedule.from_genesis("london"), accounts=1)
    with pytest.raises(BuildFailed, match="unexpected withdrawals before shanghai"):
        _build(london, [], withdrawals=())
    built = _build(london, [])
    assert built.withdrawals is None and built.requests is None
