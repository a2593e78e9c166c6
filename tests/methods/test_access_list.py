"""eth_createAccessList (``ethread.methods.access_list``) on the rpc-compat chain, with contracts
written into accounts by state overrides, and on a block before Berlin."""

from __future__ import annotations

import ethread
from ethread import methods
from ethread.models import AccessListEntry, AccountOverride, CallRequest

CALLER = bytes.fromhex("00000000000000000000000000000000000ca11e")
SENDER = bytes.fromhex("2222222222222222222222222222222222222222")
OTHER = bytes.fromhex("1111111111111111111111111111111111111111")


def test_access_list_of_a_contract_that_reads(rpc_compat_memory: ethread.MemoryBackend) -> None:
    # SLOAD(7); BALANCE(OTHER); BALANCE(SENDER); STOP: the sender is left out, OTHER is in.
    code = bytes.fromhex("600754" + "73" + OTHER.hex() + "31" + "73" + SENDER.hex() + "31" + "00")
    overrides = (AccountOverride(address=CALLER, code=code), AccountOverride(address=SENDER, balance=10**24))
    result = methods.create_access_list(rpc_compat_memory, CallRequest(sender=SENDER, to=CALLER), "latest",
                                        lambda: 1, state_override=tuple(sorted(overrides, key=lambda o: o.address)))
    assert result.error is None
    assert result.access_list == (
        AccessListEntry(address=CALLER, storage_keys=((7).to_bytes(32, "big"),)),
        AccessListEntry(address=OTHER, storage_keys=()),
    )
    # The gas with that list: 21,000 + 2,400 + 1,900 (list) + 3 PUSH + 100 warm SLOAD
    # + 3 + 100 warm BALANCE + 3 + 100 warm BALANCE (the sender is warm anyway).
    assert result.gas_used == 21_000 + 2_400 * 2 + 1_900 + 3 + 100 + 3 + 100 + 3 + 100


def test_an_access_list_is_made_on_a_block_before_berlin() -> None:
    """Before Berlin a message carries no access-list transaction kind, yet
    eth_createAccessList traces one: it runs as a legacy message whose list is charged its
    intrinsic gas (2,400 an address, 1,900 a key, as geth charges any message's list), never an
    internal error."""
    from ethread.devchain import DevChain
    from ethread.devchain.contracts import assemble
    from ethread.devchain.genesis import ForkSchedule
    from ethread.methods.message import execution

    for fork, listed in (("istanbul", True), ("berlin", False)):
        backend = ethread.MemoryBackend()
        chain = DevChain(backend, forks=ForkSchedule.from_genesis(fork), accounts=1)
        reader = chain.deploy_runtime(chain.accounts[0], assemble(  # reads another's balance
            b"\x42" * 20, "BALANCE", 0, "MSTORE", 32, 0, "RETURN"))
        chain.mine()
        request = CallRequest(sender=chain.accounts[0].address, to=reader)
        made = methods.create_access_list(backend, request, "latest", lambda: 0)
        assert made.error is None
        assert [entry.address for entry in made.access_list] == [b"\x42" * 20]
        with execution(backend, request, "latest") as run:
            plain = run.run(1_000_000).gas_used
        if listed:  # the list costs its intrinsic gas and warms nothing
            assert made.gas_used == plain + 2_400
        else:  # from Berlin the listed address is warm: 2,400 up front, 2,500 less to read it
            assert made.gas_used == plain + 2_400 - 2_500
