# SPDX-License-Identifier: GPL-2.0
"""The session MAC of nswap2l_proto.h, for the Python test peers
(tests/lib/misbehaving-server, tests/host/attack.py):
Poly1305(HMAC-SHA256(key(dir), le64 seq), header || payload), and the
handshake proofs bound to its transcript."""
import hashlib
import hmac
import struct

# OpenSSL's, not a loop over 16-byte blocks in Python: the misbehaving server
# MACs every page it sends and checks every page it receives, and at 6 ms per
# 64 KiB a pure-Python Poly1305 made it the slowest part of its guest tests.
from cryptography.hazmat.primitives.poly1305 import Poly1305


def poly1305(key, message):
    """Poly1305 (RFC 8439) of message under the 32-byte one-time key."""
    return Poly1305.generate_tag(key, message)


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
