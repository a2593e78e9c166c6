"""The dev chain's signing methods (``ethread.rpc.signing``): eth_sign and personal_sign,
typed data (v4, as an object or as text), eth_signTransaction without sending, no key no
signature, bad input as invalid params, and a plain backend that does not sign."""

from __future__ import annotations

import json
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data

import ethread
from ethread.devchain import DevChain
from ethread.web3 import EthreadProvider
from tests.support.provider_calls import address_of, error, ok

TYPED_DATA: dict[str, Any] = {
    "types": {
        "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}],
        "Mail": [{"name": "to", "type": "address"}, {"name": "contents", "type": "string"}],
    },
    "primaryType": "Mail",
    "domain": {"name": "Ether Mail", "chainId": 1337},
    "message": {"to": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "contents": "Hello"},
}


def test_eth_sign_and_personal_sign_recover_to_the_account(chain: DevChain) -> None:
    me = address_of(chain, 1)
    signature = ok(chain, "eth_sign", me, "0x" + b"hello".hex())
    assert len(bytes.fromhex(signature[2:])) == 65 and signature[-2:] in ("1b", "1c")
    assert Account.recover_message(encode_defunct(b"hello"), signature=signature) == me
    assert ok(chain, "personal_sign", "0x" + b"hello".hex(), me) == signature


def test_typed_data_v4_recovers_and_is_taken_as_an_object_or_as_text(chain: DevChain) -> None:
    me = address_of(chain, 0)
    signature = ok(chain, "eth_signTypedData_v4", me, TYPED_DATA)
    assert Account.recover_message(encode_typed_data(full_message=TYPED_DATA),
                                   signature=signature) == me
    assert ok(chain, "eth_signTypedData_v4", me, json.dumps(TYPED_DATA)) == signature
    assert ok(chain, "eth_signTypedData", me, TYPED_DATA) == signature


def test_eth_sign_transaction_signs_what_send_would_send_without_sending(chain: DevChain) -> None:
    me, you = address_of(chain, 0), address_of(chain, 1)
    answer = ok(chain, "eth_signTransaction", {"from": me, "to": you, "value": "0x5"})
    assert Account.recover_transaction(answer["raw"]) == me
    tx = answer["tx"]
    assert (tx["to"], tx["value"], tx["nonce"], tx["type"], tx["gas"]) == (
        you.lower(), "0x5", "0x0", "0x2", "0x5208")
    assert chain.head.number == 0 and chain.pending == ()
    # the signed bytes are a transaction the chain takes as they are
    sent = ok(chain, "eth_sendRawTransaction", answer["raw"])
    assert sent == tx["hash"] and chain.receipt(sent) is not None


@pytest.mark.parametrize(("method", "params"), [
    ("eth_sign", ["0x" + "11" * 20, "0x00"]),
    ("personal_sign", ["0x00", "0x" + "11" * 20]),
    ("eth_signTypedData_v4", ["0x" + "11" * 20, TYPED_DATA]),
    ("eth_signTransaction", [{"from": "0x" + "11" * 20, "to": "0x" + "11" * 20}]),
])
def test_no_key_no_signature(chain: DevChain, method: str, params: list[Any]) -> None:
    assert error(chain, method, *params) == (-32602, "No Signer available")
    chain.impersonate("0x" + "11" * 20)  # anvil sends for impersonated accounts, never signs
    assert error(chain, method, *params) == (-32602, "No Signer available")


@pytest.mark.parametrize(("document", "words"), [
    ("not json", "not valid JSON"),
    ([1, 2], "expected an object"),
    ({**TYPED_DATA, "message": {"to": [], "contents": 1}}, "typed data"),
    ({**TYPED_DATA, "types": {**TYPED_DATA["types"],
                              "Person": [{"name": "wallet", "type": "address"}],
                              "Mail": [{"name": "to", "type": "Person[2]"},
                                       {"name": "contents", "type": "string"}]},
      "message": {"to": [{"wallet": "0x" + "bb" * 20}], "contents": "x"}},
     "Expected 2 items for array type Person[2], got 1 items"),
])
def test_bad_typed_data_is_invalid_params(chain: DevChain, document: Any, words: str) -> None:
    code, message = error(chain, "eth_signTypedData_v4", address_of(chain, 0), document)
    assert code == -32602 and words in message


def test_bad_signing_params_are_invalid_params(chain: DevChain) -> None:
    assert error(chain, "eth_sign", address_of(chain, 0), "hello")[0] == -32602
    assert error(chain, "eth_sign", "0x12", "0x00")[0] == -32602
    assert error(chain, "eth_signTransaction", {"to": address_of(chain, 0)})[0] == -32602
    assert error(chain, "eth_sign", address_of(chain, 0))[0] == -32602


def test_a_plain_backend_does_not_sign(rpc_compat_memory: ethread.MemoryBackend) -> None:
    answer = EthreadProvider(rpc_compat_memory).make_request(
        "eth_sign", ["0x" + "11" * 20, "0x00"])  # type: ignore[arg-type]
    assert answer["error"]["code"] == -32601  # type: ignore[typeddict-item]
