#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A client of nswapd with the capabilities NSWAP2L_CAP_SEALED_GET and
NSWAP2L_CAP_PUT_FREES on or off, for the host tests.  Every reply's
session MAC is checked as nswap2l_proto.h says: with SEALED_GET in effect
a GET reply's over its header and seals, else over its whole payload.

caps.py PORT --key-file K [--caps none|sealed|frees|both] [--client-id HEX] STEP...
    runs STEPs on one connection, in order, and fails (exit 1, a line on
    stderr) at the first that does not go as it says:
      put:FIRST-LAST[:free=A,B,...]   PUT of those keys (page i filled with
                                      byte i & 255, seal with i ^ 0x5e), with
                                      keys to free; reply OK
      get:FIRST-LAST                  GET, reply OK with those seals and pages
      noent:FIRST-LAST                GET, reply NOENT
      free:A,B,...                    FREE, reply OK
    Prints "caps=HEX" (what the HELLO reply announced), then "mac=pages" or
    "mac=seals" for each GET reply: what its MAC was found to cover (the
    other way must not verify).
caps.py PORT --key-file K malformed CASE [--client-id HEX]
    one good connection (both capabilities) stores keys 50-51, a second
    one sends a malformed PUT: CASE partial (keys to free with 4 bytes
    over), too-many (NSWAP2L_PROTO_MAX_PUT_FREES + 1 keys to free), own-key
    (frees 50 and one of its own keys), no-cap (a key to free on a
    connection without PUT_FREES).  The second must get an INVALID reply
    and be closed; the first must go on (GET 50-51) afterwards.  Prints
    "closed=invalid other=ok".
"""
import argparse
import hashlib
import hmac
import os
import re
import socket
import struct
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")
sys.path.insert(0, LIB)
from session_mac import client_proof, handshake_transcript, message_mac, server_proof  # noqa: E402

with open(os.path.join(LIB, "..", "..", "include", "uapi", "linux", "nswap2l_proto.h")) as f:
    PROTO = f.read()


def define(name):
    return int(re.search(r"#define %s\s+\(?(\w+)" % name, PROTO).group(1), 0)


VERSION = define("NSWAP2L_PROTO_VERSION")
MAX_PUT_FREES = define("NSWAP2L_PROTO_MAX_PUT_FREES")
SEAL_SIZE = define("NSWAP2L_PROTO_SEAL_SIZE")
CAP_SEALED_GET = 1 << int(re.search(r"#define NSWAP2L_CAP_SEALED_GET\s+\(1ULL << (\d+)\)",
                                    PROTO).group(1))
CAP_PUT_FREES = 1 << int(re.search(r"#define NSWAP2L_CAP_PUT_FREES\s+\(1ULL << (\d+)\)",
                                   PROTO).group(1))
MAGIC = 0x4C32574E
HELLO, AUTH, PUT, GET, FREE = 1, 2, 3, 4, 5
REPLY = 0x8000
OK, ERR_INVALID, ERR_NOENT = 0, 1, 3
PAGE_SIZE = 4096
MAC_SIZE = 16
CAPS = {"none": 0, "sealed": CAP_SEALED_GET, "frees": CAP_PUT_FREES,
        "both": CAP_SEALED_GET | CAP_PUT_FREES}


class Failed(Exception):
    pass


def header(mtype, tag=0, count=0, length=0):
    return struct.pack("<IHHIIIIQ", MAGIC, mtype, 0, tag, count, length, 0, 0)


def keys_bytes(keys):
    return b"".join(struct.pack("<Q", k) for k in keys)


def seal_of(key):
    return bytes([(key ^ 0x5E) & 255]) * SEAL_SIZE


def page_of(key):
    return bytes([key & 255]) * PAGE_SIZE


class Conn:
    def __init__(self, args, caps, client_id):
        self.caps = caps
        self.tag = 0
        self.sock = socket.create_connection(("127.0.0.1", args.port), timeout=10)
        name = args.client.encode().ljust(32, b"\0")
        nonce = os.urandom(32)
        hello_header = header(HELLO, length=96)
        hello = struct.pack("<IIQ", VERSION, VERSION, caps) + client_id + nonce + name
        self.sock.sendall(hello_header + hello)
        fields, reply_header, reply = self.recv_plain()
        if fields[6] != OK:
            raise Failed("HELLO refused with status %d" % fields[6])
        self.announced = struct.unpack("<Q", reply[8:16])[0]
        server_nonce = reply[16:48]
        transcript = handshake_transcript(hello_header, hello, reply_header, reply)
        proof = client_proof(args.key, b"nswap2l-client-v3", name, client_id, nonce,
                             server_nonce, transcript)
        self.sock.sendall(header(AUTH, length=32) + proof)
        fields, auth_header, proof = self.recv_plain()
        if fields[6] != OK:
            raise Failed("AUTH refused with status %d" % fields[6])
        if proof != server_proof(args.key, b"nswap2l-server-v3", name, client_id, nonce,
                                 server_nonce, transcript, auth_header):
            raise Failed("the server's proof is wrong")
        ids = name + client_id + nonce + server_nonce
        self.c2s = hmac.new(args.key, b"nswap2l-c2s-v3" + ids, hashlib.sha256).digest()
        self.s2c = hmac.new(args.key, b"nswap2l-s2c-v3" + ids, hashlib.sha256).digest()
        self.tx_seq = self.rx_seq = 0

    def recv_exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the server")
            data += chunk
        return data

    def recv_plain(self):
        raw = self.recv_exactly(32)
        fields = struct.unpack("<IHHIIIIQ", raw)
        return fields, raw, self.recv_exactly(fields[5])

    def send(self, mtype, count, payload):
        self.tag += 1
        message = header(mtype, self.tag, count, len(payload)) + payload
        self.sock.sendall(message + message_mac(self.c2s, self.tx_seq, message))
        self.tx_seq += 1
        return self.tag

    def recv(self):
        """The next reply, its MAC checked; returns (fields, payload, what the MAC covers)."""
        fields, raw, payload = self.recv_plain()
        mac = self.recv_exactly(MAC_SIZE)
        seq = self.rx_seq
        self.rx_seq += 1
        whole = message_mac(self.s2c, seq, raw + payload) == mac
        if fields[1] == GET | REPLY and fields[6] == OK:
            seals = message_mac(self.s2c, seq, raw + payload[:fields[4] * SEAL_SIZE]) == mac
            want = "seals" if self.caps & CAP_SEALED_GET else "pages"
            covers = "seals" if seals and not whole else "pages" if whole and not seals else None
            if covers != want:
                raise Failed("GET reply MAC over header and seals %s, over the whole "
                             "payload %s, expected over the %s"
                             % ("verifies" if seals else "fails", "verifies" if whole else "fails",
                                want))
            return fields, payload, covers
        if not whole:
            raise Failed("reply type %#x: MAC wrong" % fields[1])
        return fields, payload, None

    def request(self, mtype, count, payload, want_status):
        tag = self.send(mtype, count, payload)
        fields, reply, covers = self.recv()
        if fields[1] != mtype | REPLY or fields[3] != tag or fields[6] != want_status:
            raise Failed("reply type %#x tag %d status %d, expected type %#x tag %d status %d"
                         % (fields[1], fields[3], fields[6], mtype | REPLY, tag, want_status))
        return reply, covers


def put_payload(keys, frees):
    return (keys_bytes(keys) + b"".join(seal_of(k) for k in keys) + keys_bytes(frees)
            + b"".join(page_of(k) for k in keys))


def key_range(text):
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def key_list(text):
    return [int(k) for k in text.split(",") if k]


def run_steps(args):
    conn = Conn(args, CAPS[args.caps], args.client_id_bytes)
    print("caps=%#x" % conn.announced)
    for step in args.steps:
        what, _, rest = step.partition(":")
        if what == "put":
            span, _, frees = rest.partition(":free=")
            keys = key_range(span)
            conn.request(PUT, len(keys), put_payload(keys, key_list(frees)), OK)
        elif what in ("get", "noent"):
            keys = key_range(rest)
            reply, covers = conn.request(GET, len(keys), keys_bytes(keys),
                                         OK if what == "get" else ERR_NOENT)
            if what == "get":
                want = (b"".join(seal_of(k) for k in keys) + b"".join(page_of(k) for k in keys))
                if reply != want:
                    raise Failed("GET %s: seals or pages differ from what was stored" % rest)
                print("mac=%s" % covers)
        elif what == "free":
            keys = key_list(rest)
            conn.request(FREE, len(keys), keys_bytes(keys), OK)
        else:
            raise Failed("unknown step %s" % step)


def malformed(args):
    other = Conn(args, CAPS["both"], args.client_id_bytes)
    other.request(PUT, 2, put_payload([50, 51], []), OK)
    bad_id = bytes.fromhex("%032x" % (args.client_id + 1))
    conn = Conn(args, CAPS["none" if args.case == "no-cap" else "both"], bad_id)
    keys = [60, 61]
    if args.case == "partial":
        payload = (keys_bytes(keys) + b"".join(seal_of(k) for k in keys) + keys_bytes([50])
                   + b"\0" * 4 + b"".join(page_of(k) for k in keys))
    elif args.case == "too-many":
        payload = put_payload(keys, list(range(1000, 1001 + MAX_PUT_FREES)))
    elif args.case == "own-key":
        payload = put_payload(keys, [50, 61])
    else:
        payload = put_payload(keys, [50])
    tag = conn.send(PUT, len(keys), payload)
    fields, _, _ = conn.recv()
    if fields[1] != PUT | REPLY or fields[3] != tag or fields[6] != ERR_INVALID:
        raise Failed("malformed PUT answered with type %#x status %d, not INVALID"
                     % (fields[1], fields[6]))
    conn.sock.settimeout(5)
    try:
        if conn.sock.recv(1):
            raise Failed("the server sent more after INVALID")
    except socket.timeout:
        raise Failed("the connection stays open after INVALID")
    except ConnectionResetError:
        pass
    reply, _ = other.request(GET, 2, keys_bytes([50, 51]), OK)
    if reply[2 * SEAL_SIZE:] != page_of(50) + page_of(51):
        raise Failed("the other connection's pages changed")
    print("closed=invalid other=ok")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--client", default="default")
    parser.add_argument("--client-id", type=lambda v: int(v, 16), default=0xca95)
    parser.add_argument("--caps", choices=sorted(CAPS), default="both")
    parser.add_argument("steps", nargs="+")
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read()
    args.client_id_bytes = bytes.fromhex("%032x" % args.client_id)
    try:
        if args.steps[0] == "malformed":
            if len(args.steps) != 2 or args.steps[1] not in ("partial", "too-many", "own-key",
                                                              "no-cap"):
                parser.error("malformed CASE: partial, too-many, own-key or no-cap")
            args.case = args.steps[1]
            malformed(args)
        else:
            run_steps(args)
    except (Failed, OSError) as e:
        print("caps.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
