"""The dev accounts (``ethread.devchain.signing``): the accounts every tool uses (anvil's and
hardhat's), with their keys and balances."""

from __future__ import annotations

from ethread.devchain import DevChain


def test_accounts_are_anvils_and_hardhats(chain: DevChain) -> None:
    assert [a.address.hex() for a in chain.accounts] == [
        "f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        "70997970c51812dc3a010c7d01b50e0d17dc79c8",
        "3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    ]
    first = chain.local_accounts[0]
    assert first.address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert first.key.hex().removeprefix("0x") == (
        "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
    assert chain.balance(first.address) == 1_000_000 * 10**18


def test_accounts_follow_another_derivation_path() -> None:
    from eth_account import Account

    from ethread.devchain import TEST_MNEMONIC, dev_accounts

    Account.enable_unaudited_hdwallet_features()
    (account,) = dev_accounts(1, TEST_MNEMONIC, "m/44'/60'/2'/0/")
    expected = Account.from_mnemonic(TEST_MNEMONIC, account_path="m/44'/60'/2'/0/0")
    assert account.private_key == bytes(expected.key)
    assert account.address.hex() == expected.address.lower().removeprefix("0x")
    assert account.address != dev_accounts(1)[0].address
