"""ethread switches eth-hash to pysha3's keccak when it is installed (ethread/keccak.py): the
digests must be pycryptodome's, bit for bit, and a backend chosen through ETH_HASH_BACKEND
must stand."""

from __future__ import annotations

import os

import pytest
from eth_hash.auto import keccak
from eth_hash.backends.pycryptodome import backend as pycryptodome
from hypothesis import given
from hypothesis import strategies as st

import ethread
from ethread.keccak import EMPTY_KECCAK, use_fastest_keccak

KNOWN = {
    b"": EMPTY_KECCAK,
    b"abc": bytes.fromhex("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
    # the ERC-20 Transfer event's topic
    b"Transfer(address,address,uint256)": bytes.fromhex(
        "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"),
}


def test_pysha3_is_used_when_installed_and_nobody_chose() -> None:
    pytest.importorskip("sha3", reason="safe-pysha3 is not installed on this platform")
    if os.environ.get("ETH_HASH_BACKEND"):
        assert ethread.KECCAK_BACKEND == "auto"
    else:
        from eth_hash.backends.pysha3 import backend as pysha3

        assert ethread.KECCAK_BACKEND == "pysha3"
        assert keccak.hasher == pysha3.keccak256


def test_an_environment_choice_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    before = keccak.hasher
    monkeypatch.setenv("ETH_HASH_BACKEND", "pycryptodome")
    assert use_fastest_keccak() == "auto"
    assert keccak.hasher == before


@pytest.mark.parametrize(("data", "digest"), KNOWN.items())
def test_known_digests(data: bytes, digest: bytes) -> None:
    assert keccak(data) == digest
    assert keccak.new(data).digest() == digest


@given(st.binary(max_size=600))
def test_the_same_digests_as_pycryptodome(data: bytes) -> None:
    assert keccak(data) == pycryptodome.keccak256(data)
    hasher = keccak.new(data[:7])
    hasher.update(data[7:])
    assert hasher.digest() == pycryptodome.keccak256(data)
