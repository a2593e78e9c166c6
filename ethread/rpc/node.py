"""The net and web3 namespaces: what the node says of itself."""

from __future__ import annotations

from typing import Any

from ..codec.client import CLIENT_VERSION
from ..codec.hex import parse_bytes_param
from ..methods import node
from .row import Method, Param, Scope


def _net_version(scope: Scope) -> Any:
    config = scope.backend.chain_config()
    return None if config is None else str(config.chain_id)


def _client_version(scope: Scope) -> Any:
    return CLIENT_VERSION


def _listening(scope: Scope) -> Any:
    return node.listening()


def _peer_count(scope: Scope) -> Any:
    return hex(node.peer_count())


def _sha3(scope: Scope, data: bytes) -> Any:
    return "0x" + node.sha3(data).hex()


ROWS = (
    Method("net_version", _net_version),
    Method("net_listening", _listening, (), 5),
    Method("net_peerCount", _peer_count, (), 80),
    Method("web3_clientVersion", _client_version),
    Method("web3_sha3", _sha3, (Param("data", parse_bytes_param),), 80),
)
