"""A method's row and its one argument reader: geth's words, byte for byte, for too many
arguments, a missing required one and one that does not parse (naming its position, or not,
as the row says); optional arguments left out or null take their defaults."""

from __future__ import annotations

from typing import Any

import pytest

import ethread
from ethread.errors import InvalidParams, MethodNotFound
from ethread.rpc.context import Context
from ethread.rpc.row import (
    REQUIRED,
    Method,
    Param,
    Scope,
    Source,
    Where,
    check_arity,
    control,
    not_available,
    opt,
    read_args,
)
from ethread.rpc.table import TABLE
from tests.support.rpc_cases import error


def _number(value: Any) -> int:
    if not isinstance(value, int):
        raise InvalidParams("expected a number", b"\x01")
    return value


def _echo(scope: Scope, *args: Any) -> Any:
    return list(args)


ROW = Method("test_echo", _echo, (Param("a", _number), Param("b", _number), opt("c", _number, 7)))


def _message(method: Method, params: list[Any]) -> str:
    with pytest.raises(InvalidParams) as caught:
        check_arity(method, params)
        read_args(method, params)
    return caught.value.message


def test_the_reader_gives_geths_words() -> None:
    assert _message(ROW, [1, 2, 3, 4]) == "too many arguments, want at most 3"
    assert _message(ROW, []) == "missing value for required argument 0"
    assert _message(ROW, [1]) == "missing value for required argument 1"
    assert _message(ROW, [1, "x"]) == "invalid argument 1: expected a number"
    assert _message(ROW, ["x", "y"]) == "invalid argument 0: expected a number"  # the first


def test_a_parse_error_keeps_its_data() -> None:
    with pytest.raises(InvalidParams) as caught:
        read_args(ROW, [1, None])
    assert caught.value.data == b"\x01"


def test_a_control_refuses_in_the_parsers_words_alone() -> None:
    row = control("test_control", _echo, Param("a", _number))
    assert _message(row, ["x"]) == "expected a number"
    assert _message(row, []) == "missing value for required argument 0"
    assert row.where is Where.DEV_CHAIN and not row.cacheable


def test_optional_arguments_left_out_or_null_take_their_defaults() -> None:
    assert read_args(ROW, [1, 2]) == [1, 2, 7]
    assert read_args(ROW, [1, 2, None]) == [1, 2, 7]
    assert read_args(ROW, [1, 2, 3]) == [1, 2, 3]
    assert Param("a", _number).default is REQUIRED and opt("c", _number).default is None


def test_a_required_null_is_parsed_and_refused() -> None:
    assert _message(ROW, [None, 1]) == "invalid argument 0: expected a number"


def test_the_messages_are_those_of_the_table_as_served(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    backend, zero = rpc_compat_memory, "0x" + "00" * 20
    assert error(backend, "eth_getBalance") == (
        InvalidParams.code, "missing value for required argument 0")
    assert error(backend, "eth_getBalance", zero, "latest", 1) == (
        InvalidParams.code, "too many arguments, want at most 2")
    code, message = error(backend, "eth_getBalance", "0x12", "latest")
    assert code == InvalidParams.code and message.startswith("invalid argument 0: ")
    code, message = error(backend, "eth_getBalance", zero, "bad")
    assert code == InvalidParams.code and message.startswith("invalid argument 1: ")


def test_the_declared_sources_read_as_flags() -> None:
    assert TABLE["eth_chainId"].sources == Source.CHAIN
    assert TABLE["eth_getTransactionByHash"].sources == (
        Source.CHAIN | Source.FORK_HISTORY | Source.DEV_POOL | Source.SERVED_POOL)
    assert TABLE["eth_call"].sources == Source.CHAIN | Source.PENDING_STATE
    assert TABLE["eth_getProof"].sources == Source.CHAIN | Source.DEV_POOL


def test_the_counts_of_the_rows() -> None:
    assert (TABLE["eth_call"].required, len(TABLE["eth_call"].params)) == (1, 4)
    assert (TABLE["eth_getStorageAt"].required, TABLE["eth_getStorageAt"].pending) == (2, 2)


def test_a_method_not_offered_is_geths_minus_32601() -> None:
    error = not_available("anvil_mine")
    assert isinstance(error, MethodNotFound)
    assert error.message == "the method anvil_mine does not exist/is not available"


def test_the_scope_of_a_network_without_a_dev_chain_or_pool_refuses_them(
        rpc_compat_memory: ethread.MemoryBackend) -> None:
    scope = Scope(rpc_compat_memory, Context(), "anvil_mine")
    with pytest.raises(MethodNotFound):
        _ = scope.dev
    with pytest.raises(MethodNotFound):
        _ = scope.pool


def test_a_required_parameter_after_an_optional_one_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="test_bad: an optional parameter before a required one"):
        Method("test_bad", _echo, (opt("a", _number), Param("b", _number)))
