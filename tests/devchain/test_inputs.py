"""What the dev chain takes where it wants bytes (``ethread.devchain.inputs``): hex strings
converted once, anything else refused with what to pass, nothing consumed by a refusal."""

from __future__ import annotations

import pytest

from ethread.devchain import DevChain

STORE = bytes.fromhex("60003560005500")  # SSTORE(0, calldata word 0)


def test_hex_strings_are_converted_once(chain: DevChain) -> None:
    sender, target = chain.accounts[0], chain.deploy_runtime(chain.accounts[0], STORE)
    chain.mine()
    word = (7).to_bytes(32, "big")
    chain.send(sender, "0x" + target.hex(), data="0x" + word.hex())
    chain.mine()
    assert chain.storage("0x" + target.hex(), 0) == 7
    assert chain.block(2).transactions[0].transaction.data == word  # not the ASCII text


@pytest.mark.parametrize(("to", "data", "error", "message"), [
    ("f39fd6e51aad88f6f4ce6ab8827279cfffb92266", b"", TypeError, "0x-prefixed hex string"),
    (b"\x01" * 19, b"", ValueError, "expected 20 bytes, got 19"),
    (None, "a9059cbb", TypeError, "0x-prefixed hex string"),
    (None, 5, TypeError, "not int"),
    ("0xzz", b"", ValueError, "not hex"),
])
def test_what_cannot_be_bytes_is_refused_with_what_to_pass(
        chain: DevChain, to: object, data: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        chain.send(chain.accounts[0], to, data=data)  # type: ignore[arg-type]
    assert chain.pending == ()
