"""devchain/pool.py: raw transactions decoded as eth_sendRawTransaction takes them (legacy,
typed, a blob transaction's network form; refusals for what is empty, oversized or not RLP),
senders recovered from signatures, and admission: each rule of the pool refusing in geth's
pool words, on the state given with what is pending counted in."""

from __future__ import annotations

import dataclasses

import pytest
import rlp

import ethread
from ethread.devchain import DevChain
from ethread.devchain.pool import (
    MAX_RAW_SIZE,
    PoolView,
    admit,
    cost,
    decode_raw,
    evm_transaction,
    placeholder_signature,
    recover_sender,
)
from ethread.devchain.signing import dev_accounts, sign_transaction, versioned_hash
from ethread.errors import TransactionRejected
from ethread.models import BlobTransaction, DynamicFeeTransaction, LegacyTransaction
from ethread.rlpcodec.transactions import encode_transaction

ACCOUNT = dev_accounts(1)[0]
TO = b"\x11" * 20
GWEI = 10**9


def _dynamic(**changes: object) -> DynamicFeeTransaction:
    tx = DynamicFeeTransaction(chain_id=1337, nonce=0, max_priority_fee_per_gas=GWEI,
                               max_fee_per_gas=2 * GWEI, gas=21_000, to=TO, value=5, data=b"",
                               access_list=(), y_parity=0, r=0, s=0)
    signed = sign_transaction(dataclasses.replace(tx, **changes), ACCOUNT)  # type: ignore[arg-type]
    assert isinstance(signed, DynamicFeeTransaction)
    return signed


def _legacy(chain_id: int | None) -> LegacyTransaction:
    tx = LegacyTransaction(nonce=0, gas_price=GWEI, gas=21_000, to=TO, value=1, data=b"",
                           v=0, r=0, s=0)
    signed = sign_transaction(tx, ACCOUNT, chain_id)
    assert isinstance(signed, LegacyTransaction)
    return signed


def _view(**changes: object) -> PoolView:
    view = PoolView(chain_id=1337, fork="prague", base_fee=GWEI, gas_limit=30_000_000,
                    next_nonce=0, spendable=10**18, code=b"")
    return dataclasses.replace(view, **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Decoding


def test_raw_transactions_of_each_form_decode_to_the_signed_transaction() -> None:
    for tx in (_legacy(1337), _legacy(None), _dynamic()):
        assert decode_raw(encode_transaction(tx)) == tx
    blob = BlobTransaction(chain_id=1337, nonce=0, max_priority_fee_per_gas=1, max_fee_per_gas=2,
                           gas=21_000, to=TO, value=0, data=b"", access_list=(),
                           max_fee_per_blob_gas=3, blob_versioned_hashes=(versioned_hash(b"a"),),
                           y_parity=0, r=1, s=2)
    plain = encode_transaction(blob)
    assert decode_raw(plain) == blob
    network = b"\x03" + rlp.encode([rlp.decode(plain[1:]), [b"blob"], [b"c" * 48], [b"p" * 48]])
    assert decode_raw(network) == blob  # the sidecar is dropped


@pytest.mark.parametrize(("raw", "message"), [
    (b"", "typed transaction too short"),
    (b"\x02" + b"\x00" * MAX_RAW_SIZE, f"oversized data: transaction size {MAX_RAW_SIZE + 1}, "
                                       f"limit {MAX_RAW_SIZE}"),
    (b"\x02\xc1\x80", "rlp: "),
    (b"\x80", "rlp: "),
    (b"\xc3\x01\x02\x03", "rlp: "),
])
def test_what_is_not_a_transaction_is_refused(raw: bytes, message: str) -> None:
    with pytest.raises(TransactionRejected) as caught:
        decode_raw(raw)
    assert str(caught.value).startswith(message)


def test_senders_are_recovered_and_a_bad_signature_refused() -> None:
    vm_class = DevChain(ethread.MemoryBackend(), accounts=1).config.vm_class(1, 10)
    assert recover_sender(evm_transaction(vm_class, _dynamic())) == ACCOUNT.address
    assert recover_sender(evm_transaction(vm_class, _legacy(1337))) == ACCOUNT.address
    unsigned = dataclasses.replace(_dynamic(), r=0, s=0)
    with pytest.raises(TransactionRejected, match="invalid sender"):
        recover_sender(evm_transaction(vm_class, unsigned))
    stand_in = placeholder_signature(_legacy(1337), 1337)
    assert isinstance(stand_in, LegacyTransaction)
    assert (stand_in.v, stand_in.r, stand_in.s) == (35 + 2 * 1337, 1, 1)
    typed = placeholder_signature(_dynamic(), 1337)
    assert isinstance(typed, DynamicFeeTransaction) and (typed.y_parity, typed.r, typed.s) == (0, 1, 1)


# --------------------------------------------------------------------------------------------
# Admission


def test_the_cost_is_gas_at_the_fee_cap_plus_value() -> None:
    assert cost(_dynamic()) == 21_000 * 2 * GWEI + 5
    assert cost(_legacy(1)) == 21_000 * GWEI + 1


def test_a_transaction_the_next_block_can_take_is_admitted() -> None:
    admit(_dynamic(), ACCOUNT.address, _view())
    admit(_legacy(1337), ACCOUNT.address, _view())
    admit(_legacy(None), ACCOUNT.address, _view())  # unprotected: any chain
    admit(_dynamic(nonce=2), ACCOUNT.address, _view(next_nonce=2, spendable=10**17))


@pytest.mark.parametrize(("tx", "view", "message"), [
    (_dynamic(), _view(fork="berlin"), "transaction type not supported"),
    (_dynamic(chain_id=1), _view(), "invalid chain id for signer: have 1 want 1337"),
    (_legacy(1), _view(), "invalid chain id for signer: have 1 want 1337"),
    (_dynamic(gas=40_000), _view(gas_limit=30_000), "exceeds block gas limit"),
    (_dynamic(gas=20_000), _view(), "intrinsic gas too low: gas 20000, minimum needed 21000"),
    (_dynamic(max_priority_fee_per_gas=3 * GWEI), _view(),
     "max priority fee per gas higher than max fee per gas"),
    (_dynamic(), _view(next_nonce=1), "nonce too low: next nonce 1, tx nonce 0"),
    (_dynamic(nonce=3), _view(next_nonce=2), "nonce too high: next nonce 2, tx nonce 3"),
    (_dynamic(), _view(base_fee=3 * GWEI), "max fee per gas less than block base fee"),
    (_dynamic(), _view(code=b"\x60\x00"), "sender not an eoa"),
    (_dynamic(), _view(spendable=100),
     f"insufficient funds for gas * price + value: balance 100, tx cost {21_000 * 2 * GWEI + 5}, "
     f"overshot {21_000 * 2 * GWEI + 5 - 100}"),
    (_dynamic(to=None, data=b"\x00" * 49_153, gas=10_000_000), _view(),
     "max initcode size exceeded: code size 49153, limit 49152"),
])
def test_each_refusal_in_the_pools_words(tx: DynamicFeeTransaction | LegacyTransaction,
                                         view: PoolView, message: str) -> None:
    with pytest.raises(TransactionRejected) as caught:
        admit(tx, ACCOUNT.address, view)
    assert str(caught.value).startswith(message)


def test_a_delegated_sender_is_still_an_eoa() -> None:
    admit(_dynamic(), ACCOUNT.address, _view(code=b"\xef\x01\x00" + TO))

