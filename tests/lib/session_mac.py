# SPDX-License-Identifier: GPL-2.0
"""The session MAC of nswap2l_proto.h, for the Python test peers
(tests/lib/misbehaving-server, tests/host/attack.py):
Poly1305(HMAC-SHA256(key(dir), le64 seq), header || payload)."""
import hashlib
import hmac
import struct


def poly1305(key, message):
    """Poly1305 (RFC 8439) of message under the 32-byte one-time key."""
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:], "little")
    acc = 0
    for start in range(0, len(message), 16):
        block = int.from_bytes(message[start:start + 16] + b"\x01", "little")
        acc = (acc + block) * r % (2**130 - 5)
    return ((acc + s) % 2**128).to_bytes(16, "little")


def message_mac(key, seq, message):
    """The MAC of the direction keyed by key, for its message number seq."""
    return poly1305(hmac.new(key, struct.pack("<Q", seq), hashlib.sha256).digest(), message)
