"""EIP-7951's P256VERIFY precompile: an ECDSA signature check on secp256r1 (P-256).

The curve arithmetic is the ``cryptography`` package's (OpenSSL). An input refused (a length
other than 160 bytes, ``r`` or ``s`` outside ``[1, n-1]``, a coordinate outside the field, the
point at infinity or off the curve) or a signature that does not verify answers no output; a
valid one answers the 32-byte word 1. The gas is the same in every case."""

from __future__ import annotations

from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, encode_dss_signature
from eth_typing import Address

P256VERIFY_ADDRESS = Address((0x100).to_bytes(20, "big"))
"""Where the precompile sits (0x0000...0100)."""
GAS_P256VERIFY = 6900
"""Its gas, whatever the input."""
INPUT_LENGTH = 160
"""hash (32) | r (32) | s (32) | qx (32) | qy (32)."""

P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
"""The field's prime."""
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
"""The group order."""
P256_A = P256_P - 3
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B

VERIFIED = (1).to_bytes(32, "big")
"""The output of a signature that verifies."""

_ECDSA_PREHASHED = ec.ECDSA(Prehashed(hashes.SHA256()))
_CURVE = ec.SECP256R1()


def on_curve(x: int, y: int) -> bool:
    """Whether (x, y), both field elements, satisfies ``y^2 = x^3 + ax + b``."""
    return (y * y - (x * x * x + P256_A * x + P256_B)) % P256_P == 0


def p256_verify(data: bytes) -> bool:
    """Whether ``data`` is a well-formed P256VERIFY input whose signature verifies."""
    if len(data) != INPUT_LENGTH:
        return False
    digest = data[:32]
    r = int.from_bytes(data[32:64], "big")
    s = int.from_bytes(data[64:96], "big")
    qx = int.from_bytes(data[96:128], "big")
    qy = int.from_bytes(data[128:160], "big")
    if not (0 < r < P256_N and 0 < s < P256_N):
        return False
    if qx >= P256_P or qy >= P256_P or (qx == 0 and qy == 0) or not on_curve(qx, qy):
        return False
    key = ec.EllipticCurvePublicNumbers(qx, qy, _CURVE).public_key()
    try:
        key.verify(encode_dss_signature(r, s), digest, _ECDSA_PREHASHED)
    except InvalidSignature:
        return False
    return True


def p256verify(computation: Any) -> Any:
    """The precompile, as py-evm calls one: charge, then answer 1 or nothing."""
    computation.consume_gas(GAS_P256VERIFY, reason="P256VERIFY Precompile")
    computation.output = VERIFIED if p256_verify(computation.msg.data_as_bytes) else b""
    return computation
