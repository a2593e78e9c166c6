"""A failed contract test explains itself: the pytest plugin shows the call tree of the
transaction that failed (revert reasons and custom errors decoded by the ABIs the test used),
and ``console.log`` lines of console.sol print in the test's output. The contracts are
tests/contracts/Vault.sol (compiled by solc-js into Vault.json): a bank that calls a vault
which logs to the console and reverts with a custom error."""

from __future__ import annotations

import json

import pytest

import ethread
from ethread.devchain import DevChain
from ethread.methods.tracing.explain import CONSOLE_ADDRESS as CONSOLE
from ethread.methods.tracing.explain import ContractAbis, console_line
from tests.support.paths import CONTRACTS

pytest_plugins = ["pytester"]
web3 = pytest.importorskip("web3")  # (imported before pytester's runs, which would unload it)

ARTIFACT = CONTRACTS / "Vault.json"

TEST_FILE = '''
import json
import pytest
from web3.exceptions import ContractCustomError, ContractLogicError

ARTIFACT = json.loads(open({artifact!r}).read())["contracts"]


@pytest.fixture
def bank(ethread_web3):
    w3 = ethread_web3
    Vault = w3.eth.contract(abi=ARTIFACT["Vault"]["abi"], bytecode=ARTIFACT["Vault"]["bytecode"])
    vault = w3.eth.get_transaction_receipt(Vault.constructor().transact()).contractAddress
    Bank = w3.eth.contract(abi=ARTIFACT["Bank"]["abi"], bytecode=ARTIFACT["Bank"]["bytecode"])
    bank = w3.eth.get_transaction_receipt(Bank.constructor(vault).transact()).contractAddress
    w3.eth.contract(address=vault, abi=ARTIFACT["Vault"]["abi"]).functions.deposit(
        w3.eth.default_account).transact({{"value": 5}})
    return w3.eth.contract(address=bank, abi=ARTIFACT["Bank"]["abi"])


def test_withdraw_too_much(bank):
    bank.functions.withdraw(7).transact()


def test_withdraw_within_balance(bank):
    bank.functions.withdraw(3).transact()


def test_require_message(bank):
    bank.functions.checked(500).call()
'''


def test_a_failing_test_shows_its_call_tree_and_console_lines(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(TEST_FILE.format(artifact=str(ARTIFACT)))
    result = pytester.runpytest("-p", "no:cacheprovider", "-rP")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    # the failed withdrawal: the tree, the custom error decoded with its arguments
    result.stdout.fnmatch_lines([
        "*ethread call trees*",
        "eth_estimateGas failed:",
        "CALL 0x*.withdraw(amount=7) [[]gas used *[]] REVERTED: Insufficient(account=0xf39F*2266, wanted=7, held=5)",
        "├─ console.log: withdraw 7",
        "└─ CALL 0x*.take(account=0xf39F*2266, amount=7) [[]gas used *[]] REVERTED: Insufficient(*)",
        "   └─ console.log: take, held: 5",
    ])
    # console.log lines in each test's captured output (the passing test's too, with -rP)
    assert "deposit for 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" in out
    assert "withdraw 3" in out and "take, held: 5" in out
    # a require message
    result.stdout.fnmatch_lines(["*checked(amount=500)*REVERTED: 'amount too large'"])


def test_explained_through_the_web3_provider_alone() -> None:
    """Without the plugin: the provider keeps the failure (``provider.explainer.failures``)."""
    from ethread.web3 import EthreadProvider

    artifact = json.loads(ARTIFACT.read_text())["contracts"]
    chain = DevChain(ethread.MemoryBackend())
    provider = EthreadProvider(chain)
    w3 = web3.Web3(provider)
    w3.eth.default_account = chain.local_accounts[0].address
    vault_factory = w3.eth.contract(abi=artifact["Vault"]["abi"], bytecode=artifact["Vault"]["bytecode"])
    address = w3.eth.get_transaction_receipt(vault_factory.constructor().transact()).contractAddress
    vault = w3.eth.contract(address=address, abi=artifact["Vault"]["abi"])
    provider.abis.add(artifact["Vault"]["abi"], bytes.fromhex(address[2:]), "Vault")
    with pytest.raises(web3.exceptions.ContractCustomError):
        vault.functions.take(w3.eth.default_account, 1).transact()  # (its gas estimate fails)
    assert provider.explainer is not None
    (failure,) = provider.explainer.failures
    assert failure.tree.startswith(f"CALL Vault[{address}].take(")
    assert failure.tree.splitlines()[0].endswith("REVERTED: Insufficient(account="
                                                f"{w3.eth.default_account}, wanted=1, held=0)")
    assert failure.console == ("take, held: 0",)
    # a transaction mined with status 0 (gas given, no estimate) is explained too
    provider.explainer.failures.clear()
    w3.eth.send_transaction({"to": address, "gas": 100_000, "data": vault.encode_abi(
        "take", [w3.eth.default_account, 1])})
    (mined,) = provider.explainer.failures
    assert mined.method == "eth_sendTransaction" and "Insufficient" in mined.tree
    assert failure.method == "eth_estimateGas"


def test_console_lines_decoded() -> None:
    from eth_abi.abi import encode
    from eth_utils import keccak

    def payload(signature: str, types: list[str], values: list[object]) -> bytes:
        return keccak(text=signature)[:4] + encode(types, values)

    assert console_line(payload("log(string,uint256)", ["string", "uint256"], ["n is %d!", 7])) == "n is 7!"
    assert console_line(payload("log(uint)", ["uint256"], [3])) == "3"
    assert console_line(payload("log(bool,address)", ["bool", "address"], [True, b"\x01" * 20])) == \
        "true 0x0101010101010101010101010101010101010101"
    assert console_line(payload("logBytes2(bytes2)", ["bytes2"], [b"\xab\xcd"])) == "0xabcd"
    assert console_line(b"\x00\x00\x00\x01").startswith("console.log: unknown selector")
    assert CONSOLE == b"\x00" * 9 + b"console.log"
    assert ContractAbis().error(b"\x12\x34\x56\x78") is None
