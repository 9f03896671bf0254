# SPDX-License-Identifier: GPL-2.0
"""The session MAC of nswap2l_proto.h, for the Python test peers
(tests/lib/misbehaving-server, tests/host/attack.py):
Poly1305(HMAC-SHA256(key(dir), le64 seq), header || payload), and the
handshake proofs bound to its transcript."""
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


def handshake_transcript(hello_header, hello, reply_header, reply):
    """T: SHA-256 of the HELLO and its reply, headers and payloads as sent."""
    return hashlib.sha256(hello_header + hello + reply_header + reply).digest()


def client_proof(key, label, name, client_id, client_nonce, server_nonce, transcript):
    """The AUTH MAC the client sends (label: NSWAP2L_AUTH_CLIENT_LABEL)."""
    return hmac.new(key, label + name + client_id + client_nonce + server_nonce + transcript,
                    hashlib.sha256).digest()


def server_proof(key, label, name, client_id, client_nonce, server_nonce, transcript,
                 auth_reply_header):
    """The AUTH reply's MAC (label: NSWAP2L_AUTH_SERVER_LABEL), over its own header too."""
    return hmac.new(key, label + name + client_id + server_nonce + client_nonce + transcript +
                    auth_reply_header, hashlib.sha256).digest()
