"""The ``ethread`` provider of Ape's local (and ``-fork``) networks.

One class, two ways to reach the chain (``ethread: mode:`` in ``ape-config.yaml``):

- ``process`` (the default): a :class:`~ethread.devchain.DevChain` in Ape's own process,
  answered by ethread's in-process web3.py provider: no server, no socket, no JSON over HTTP.
- ``node``: ``ethread node`` over HTTP, started and stopped by the plugin as ape-foundry
  starts anvil (or one already running at ``host``).

Either way every request is JSON-RPC through ethread's dispatcher, so the two behave alike: the
test controls are anvil's methods (``evm_snapshot``, ``anvil_mine``, ``anvil_setBalance``...),
traces are geth's callTracer (see :mod:`.trace`), failures are geth's error objects, which
Ape's :class:`~ape_ethereum.provider.Web3Provider` turns into its ``ContractLogicError`` (and,
with the contract's ABI, the custom error's own class).
"""

from __future__ import annotations

import socket
import sys
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ape.api import ForkedNetworkAPI, SubprocessProvider, TestProviderAPI
from ape.exceptions import (
    ContractLogicError,
    ProviderError,
    TransactionError,
)
from ape.logging import logger
from ape.types.gas import AutoGasLimit
from ape.utils.misc import gas_estimation_error_message
from ape_ethereum._print import CONSOLE_ADDRESS
from ape_ethereum.provider import Web3Provider
from ape_test.config import ApeTestConfig
from eth_pydantic_types import HexBytes
from eth_utils import to_hex
from web3 import HTTPProvider, Web3
from web3.exceptions import ContractLogicError as Web3ContractLogicError

try:
    from web3.exceptions import Web3RPCError
except ImportError:  # (web3.py 6)
    Web3RPCError = ValueError  # type: ignore[assignment,misc]

from .config import EthreadConfig, EthreadForkConfig
from .trace import EthreadCallTrace, EthreadTransactionTrace

if TYPE_CHECKING:
    from ape.api import TraceAPI, TransactionAPI
    from ape.types import AddressType, BlockID, ContractCode, SnapshotID

    from ethread.devchain import DevChain

ETHER = 10**18
TX_GAS_CAP = 2**24
"""EIP-7825: no transaction takes more gas, from Osaka on."""


class EthreadProviderError(ProviderError):
    """The ethread provider could not start or reach its chain."""


class EthreadProvider(SubprocessProvider, Web3Provider, TestProviderAPI):
    """Ape's ``ethereum:local:ethread``: ethread's dev chain, in this process or as a node."""

    _chain: DevChain | None = None
    _host: str | None = None
    _console_seen: bool = False
    """Whether a transaction or code edit has carried the console's address (hardhat's
    console.sol, Vyper's ``print``): until then no contract on an in-process chain can call it,
    and the debug logs Ape looks for after each transaction need no trace."""

    # -- settings ------------------------------------------------------------------------------

    @property
    def settings(self) -> EthreadConfig:  # type: ignore[override]
        return cast(EthreadConfig, super().settings)

    @cached_property
    def _test_config(self) -> ApeTestConfig:
        return cast(ApeTestConfig, self.config_manager.get_config("test"))

    @property
    def in_process(self) -> bool:
        return self.settings.mode == "process"

    @property
    def process_name(self) -> str:
        return "ethread node"

    @property
    def may_log_to_console(self) -> bool:
        """Whether a transaction may have called the console (so that its debug logs need its
        trace): always on a node (other clients deploy there too) and on a fork (its contracts
        were not seen deployed); in process, once the console's address has been seen."""
        return not self.in_process or self._console_seen or self.network.is_fork

    def _notice_console(self, data: bytes | str | None) -> None:
        if self._console_seen or not data:
            return
        # (the address's non-zero bytes, "console.log": compilers push it without its zeros)
        self._console_seen = HexBytes(CONSOLE_ADDRESS).lstrip(b"\x00") in HexBytes(data)

    def _send_transaction(self, txn: TransactionAPI) -> str:
        self._notice_console(txn.data)
        return super()._send_transaction(txn)

    @property
    def chain(self) -> DevChain | None:
        """The dev chain itself in process mode (None in node mode)."""
        return self._chain

    # -- where the chain is --------------------------------------------------------------------

    @property
    def uri(self) -> str:
        if self.in_process:
            return ""
        if self._host is None:
            self._host = self.settings.host or f"http://127.0.0.1:{_free_port()}"
        return self._host

    @property
    def http_uri(self) -> str | None:
        return None if self.in_process else self.uri

    @property
    def ws_uri(self) -> str | None:
        return None if self.in_process else "ws" + self.uri[4:]

    @property
    def connection_str(self) -> str:
        return "ethread (in process)" if self.in_process else self.uri

    @property
    def connection_id(self) -> str | None:
        return f"{self.network_choice}:{self.connection_str}"

    @property
    def is_connected(self) -> bool:
        if self._web3 is None:
            return False
        if self.in_process:
            return True
        if self.process is not None and self.process.poll() is not None:
            raise EthreadProviderError(
                f"ethread node exited with code {self.process.returncode} (its output: "
                f"{self.stderr_logs_path}; the node needs ethread's server extra: "
                "pip install 'ethread[server]')")
        try:
            return bool(self._web3.is_connected())
        except Exception:  # (a node not up yet)
            return False

    def connect(self) -> None:
        self._client_version = None
        if self.in_process:
            self._connect_in_process()
        else:
            self._connect_node()
        if not self.settings.auto_mine:
            self.auto_mine = False

    def _connect_in_process(self) -> None:
        from ethread.web3 import EthreadProvider as InProcess

        self._chain = self._build_chain()
        provider = InProcess(self._chain)
        provider.explainer = None  # (Ape traces and shows failures itself)
        self._web3 = Web3(provider)

    def _build_chain(self) -> DevChain:
        from ethread import MemoryBackend
        from ethread.devchain import DevChain

        options = self._chain_options()
        return DevChain(MemoryBackend(), **options)

    def _chain_options(self) -> dict[str, Any]:
        """DevChain's options for Ape's test config: its mnemonic's first accounts along its
        path, each with its balance; a wall clock for block times (as eth-tester and anvil
        keep them)."""
        import time

        from ethread.devchain import ForkSchedule

        test = self._test_config
        options: dict[str, Any] = {
            "chain_id": self.settings.chain_id, "gas_limit": self.settings.gas_limit,
            "genesis_timestamp": int(time.time()), "clock": time.time,
            "accounts": test.number_of_accounts, "mnemonic": test.mnemonic,
            "derivation_path": _derivation_path(test.hd_path), "balance": test.balance,
        }
        if self.settings.hardfork:
            options["forks"] = ForkSchedule.from_genesis(self.settings.hardfork)
        return options

    def _connect_node(self) -> None:
        self._set_node_web3()
        if self.is_connected:
            logger.info(f"Connecting to the ethread node at {self.uri}.")
            return
        local = any(name in self.uri for name in ("127.0.0.1", "localhost"))
        if not (self.settings.manage_process and local):
            raise EthreadProviderError(f"no ethread node answers at {self.uri}")
        SubprocessProvider.connect(self)
        self.start(timeout=60)
        self._set_node_web3()

    def _set_node_web3(self) -> None:
        self._web3 = Web3(HTTPProvider(self.uri,
                                       request_kwargs={"timeout": self.settings.request_timeout}))

    def build_command(self) -> list[str]:
        test = self._test_config
        balance = test.balance / ETHER
        command = [
            *_ethread_command(), "node", "--host", "127.0.0.1", "--port", str(_port(self.uri)),
            "--chain-id", str(self.settings.chain_id),
            "--mnemonic", test.mnemonic, "--accounts", str(test.number_of_accounts),
            "--derivation-path", _derivation_path(test.hd_path),
            "--balance", f"{int(balance)}" if balance == int(balance) else f"{balance}",
            "--gas-limit", str(self.settings.gas_limit),
        ]
        if self.settings.hardfork:
            command += ["--hardfork", self.settings.hardfork]
        if not self.settings.auto_mine:
            command.append("--no-mining")
        return command

    def disconnect(self) -> None:
        self._web3 = None
        self._chain = None
        self._client_version = None
        self._call_trace_approach = None
        if self.process is not None:
            self.stop()
        self._host = None

    def update_settings(self, new_settings: dict[str, Any]) -> None:
        self.disconnect()
        self.provider_settings.update(new_settings)
        self.connect()

    # -- what the chain is ---------------------------------------------------------------------

    @cached_property
    def chain_id(self) -> int:
        if self._web3 is None:
            return self.settings.chain_id
        return int(self.make_request("eth_chainId", []), 16)

    @property
    def gas_price(self) -> int:
        return int(self.make_request("eth_gasPrice", []), 16)

    @property
    def priority_fee(self) -> int:
        return 0  # (a dev chain's blocks take any tip)

    @property
    def max_gas(self) -> int:
        """The most gas a transaction may take: the block's gas limit, and from Osaka on at
        most EIP-7825's cap (Ape's local networks send with ``gas_limit: max``)."""
        block_limit = int(self._get_latest_block_rpc()["gasLimit"], 16)
        return min(block_limit, TX_GAS_CAP) if _capped(self.settings.hardfork) else block_limit

    @property
    def supports_tracing(self) -> bool:
        return True

    @property
    def auto_mine(self) -> bool:
        return bool(self.make_request("anvil_getAutomine", []))

    @auto_mine.setter
    def auto_mine(self, value: bool) -> None:
        self.make_request("evm_setAutomine", [bool(value)])

    # -- test controls -------------------------------------------------------------------------

    def snapshot(self) -> SnapshotID:
        return cast("SnapshotID", self.make_request("evm_snapshot", []))

    def restore(self, snapshot_id: SnapshotID) -> None:
        if snapshot_id is None:
            return
        key = to_hex(snapshot_id) if isinstance(snapshot_id, int) else snapshot_id
        if not self.make_request("evm_revert", [key]):
            from ape.exceptions import UnknownSnapshotError

            raise UnknownSnapshotError(snapshot_id)

    def set_timestamp(self, new_timestamp: int) -> None:
        pending = self.get_block("pending").timestamp
        if new_timestamp == pending:
            return
        self.make_request("evm_setNextBlockTimestamp", [new_timestamp])

    def mine(self, num_blocks: int = 1) -> None:
        self.make_request("anvil_mine", [hex(num_blocks)])

    def set_balance(self, address: AddressType, amount: int | float | str | bytes) -> None:
        if isinstance(amount, str) and " " in amount:
            amount = self.conversion_manager.convert(amount, int)  # "1000 ETH"
        if isinstance(amount, str):
            value = amount if amount.startswith("0x") else hex(int(amount))
        elif isinstance(amount, bytes):
            value = to_hex(amount)
        else:
            value = hex(int(amount))
        self.make_request("anvil_setBalance", [address, value])

    def set_code(self, address: AddressType, code: ContractCode) -> bool:
        data = to_hex(code) if isinstance(code, bytes) else \
            (code if code.startswith("0x") else "0x" + code)
        self._notice_console(data)
        self.make_request("anvil_setCode", [address, data])
        return True

    def set_storage(self, address: AddressType, slot: int, value: HexBytes) -> None:
        self.make_request("anvil_setStorageAt", [
            address, to_hex(HexBytes(slot).rjust(32, b"\x00")),
            to_hex(HexBytes(value).rjust(32, b"\x00"))])

    def set_block_gas_limit(self, gas_limit: int) -> bool:
        return self.make_request("evm_setBlockGasLimit", [hex(gas_limit)]) is True

    def unlock_account(self, address: AddressType) -> bool:
        self.make_request("anvil_impersonateAccount", [address])
        return True

    def relock_account(self, address: AddressType) -> None:
        self.make_request("anvil_stopImpersonatingAccount", [address])

    @property
    def unlocked_accounts(self) -> list[AddressType]:
        return list(self.account_manager.test_accounts._impersonated_accounts)

    # -- traces and failures -------------------------------------------------------------------

    def get_transaction_trace(self, transaction_hash: str, **kwargs: Any) -> TraceAPI:
        if isinstance(transaction_hash, bytes):
            transaction_hash = to_hex(transaction_hash)
        cached = self._transaction_trace_cache.get(transaction_hash)
        if cached is None:
            cached = EthreadTransactionTrace(transaction_hash=transaction_hash, **kwargs)
            self._transaction_trace_cache[transaction_hash] = cached
        return cached

    def send_call(self, txn: TransactionAPI, block_id: BlockID | None = None,
                  state: dict[str, Any] | None = None, **kwargs: Any) -> HexBytes:
        """Web3Provider's call, with a call's trace (for ``--gas`` and ``show_trace``) from
        callTracer rather than the struct logger."""
        runner = self._test_runner
        wants_trace = (kwargs.get("show_gas_report") or kwargs.get("show_trace") or (
            runner is not None and runner.gas_tracker.enabled))
        if not wants_trace or kwargs.get("skip_trace") or (
                runner is not None and runner.coverage_tracker.enabled):
            return super().send_call(txn, block_id=block_id, state=state, **kwargs)
        if block_id is not None:
            kwargs["block_identifier"] = block_id
        if state is not None:
            kwargs["state_override"] = state
        show_gas = kwargs.pop("show_gas_report", False)
        show_trace = kwargs.pop("show_trace", False)
        arguments = self._prepare_call(txn, **kwargs)
        tracking = runner is not None and runner.gas_tracker.enabled
        # (use_symbol_for_tokens: an extra field, as Ape passes it to its own CallTrace)
        trace = EthreadCallTrace(  # type: ignore[call-arg]
            tx=arguments[0], arguments=arguments[1:],
            use_symbol_for_tokens=tracking or show_gas)
        if tracking and runner is not None and txn.receiver:
            runner.gas_tracker.append_gas(trace, txn.receiver)
        if "error" in trace._call_frame:  # reverted: raised (or returned) as eth_call has it
            return self._eth_call(arguments, raise_on_revert=kwargs.get(
                "raise_on_revert", txn.raise_on_revert))
        if show_gas:
            trace.show_gas_report()
        if show_trace:
            trace.show()
        return HexBytes(trace.return_value)

    def estimate_gas_cost(self, txn: TransactionAPI, block_id: BlockID | None = None) -> int:
        """Web3Provider's estimate, a failure's trace from callTracer (when Ape shows it)."""
        params = txn.model_dump(by_alias=True, mode="json")
        if isinstance(params.get("type"), int):
            params["type"] = to_hex(params["type"])
        if params.get("gas") == "auto" or isinstance(params.get("gas"), AutoGasLimit):
            for key in ("gas", "maxFeePerGas", "maxPriorityFeePerGas"):
                params.pop(key, None)
        try:
            return self.web3.eth.estimate_gas(params, block_identifier=block_id)  # type: ignore[arg-type]
        except (ValueError, Web3ContractLogicError, Web3RPCError) as err:
            traced = {key: hex(value) if isinstance(value, int) else value
                      for key, value in params.items()}
            failure = self.get_virtual_machine_error(
                err, txn=txn, trace=lambda: EthreadCallTrace(tx=traced),
                set_ape_traceback=False)
            if isinstance(failure, ContractLogicError):
                raise failure from err
            raise TransactionError(gas_estimation_error_message(failure), base_err=failure,
                                   txn=txn, source_traceback=lambda: failure.source_traceback,
                                   set_ape_traceback=True) from err


class EthreadForkProvider(EthreadProvider):
    """``ethereum:<network>-fork:ethread``: a dev chain continuing the upstream network's
    chain (its provider's URL), each account and slot read from it as first needed and checked
    against the forked block's state root (``eth_getProof``)."""

    @property
    def forked_network(self) -> ForkedNetworkAPI:
        return cast(ForkedNetworkAPI, self.network)

    @property
    def _fork_config(self) -> EthreadForkConfig:
        ecosystem = self.network.ecosystem.name
        upstream = self.network.name.removesuffix("-fork")
        return self.settings.fork.get(ecosystem, {}).get(upstream) or EthreadForkConfig()

    @property
    def fork_url(self) -> str:
        config = self._fork_config
        network = self.forked_network.upstream_network
        provider = network.get_provider(config.upstream_provider) if config.upstream_provider \
            else self.forked_network.upstream_provider
        url = getattr(provider, "connection_str", None) or getattr(provider, "uri", None)
        if not url:
            raise EthreadProviderError(
                f"the upstream provider of {network.choice} has no URL to fork")
        return str(url)

    def _build_chain(self) -> DevChain:
        from ethread import MemoryBackend
        from ethread.devchain import DevChain

        options = self._chain_options()
        options.pop("chain_id", None)  # (the forked chain's own)
        options.pop("genesis_timestamp", None)
        config = self._fork_config
        return DevChain.fork(self.fork_url, config.block_number, backend=MemoryBackend(),
                             cache=config.cache, **options)

    @cached_property
    def chain_id(self) -> int:
        if self._web3 is None:
            return self.forked_network.upstream_network.chain_id
        return int(self.make_request("eth_chainId", []), 16)

    def build_command(self) -> list[str]:
        command = super().build_command()
        at = command.index("--chain-id")
        del command[at:at + 2]
        command += ["--fork-url", self.fork_url]
        if self._fork_config.block_number is not None:
            command += ["--fork-block-number", str(self._fork_config.block_number)]
        return command


def _derivation_path(hd_path: str) -> str:
    """Ape's ``hd_path`` as ethread (and anvil) take it: the prefix the index is appended to
    (Ape also accepts a ``{}`` placeholder at the end)."""
    return hd_path.removesuffix("{}").rstrip("/") + "/"


def _capped(hardfork: str | None) -> bool:
    """Whether a chain running ``hardfork`` (ethread's newest when None) caps a
    transaction's gas (EIP-7825, from Osaka)."""
    from ethread.forks import FORK_ORDER

    name = (hardfork or FORK_ORDER[-1]).lower()
    return name not in FORK_ORDER or FORK_ORDER.index(name) >= FORK_ORDER.index("osaka")


def _ethread_command() -> list[str]:
    """``ethread`` as installed with this Python (the console script beside it, else the same
    entry point through this interpreter): never another environment's from ``PATH``."""
    beside = Path(sys.executable).with_name("ethread")
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-c", "import sys; from ethread.cli import main; sys.exit(main())"]


def _port(uri: str) -> int:
    from urllib.parse import urlparse

    return urlparse(uri).port or 8545


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
