#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile clients of nswapd for the host tests, on many sockets at once.

attack.py PORT flood N [--source ADDR...] [--handshake none|hello|full]
    opens N connections (round-robin over the source addresses), holds them
    for --hold seconds and prints "open=N closed=N closed_first=N": how many
    the server left open, closed, and how many of the closed ones were the
    oldest (closed_first == closed: the server closed oldest first).
    With --heartbeat S, a FREE of key 0 every S seconds on each; with
    --half-header, each sends 10 bytes of a header after the handshake.
attack.py PORT nonreading N --gets M --keys K
    N authenticated connections each send M GETs of keys 0..K-1 and never
    read; holds them for --hold seconds, prints "sent=BYTES".
attack.py PORT partial --handshake MODE --bytes B
    sends the first B bytes of a one-page PUT, then waits for the server to
    close; prints "closed_after=SECONDS" (or "open" after --hold).
attack.py PORT churn N [--client-id FIRST]
    N connections one after another, namespaces FIRST, FIRST + 1, ...,
    each closed once authenticated; prints "authenticated=N refused=N
    seconds=S" (refused: closed at AUTH, at a per-client limit).
attack.py PORT puts N --keys K [--hold S]
    N connections, namespaces FIRST... as churn, send one PUT of K pages
    each, all before reading any reply, then read the replies; prints
    "stored=N" and holds the connections --hold seconds.
attack.py PORT handshake [--tamper FIELD]
    one handshake, where the client's view of FIELD differs from what went
    over the wire, as if someone on the path had changed it: the HELLO's
    capabilities, the HELLO reply's max_pages (the server then refuses the
    client's proof), the AUTH reply's namespace flag or free_pages (the
    server's proof then fails here).  Prints "auth=ok namespace=new|found
    free_pages=N", "auth=refused (...)" or "auth=badserver (...)".
"""
import argparse
import hashlib
import hmac
import os
import re
import socket
import struct
import sys
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")
sys.path.insert(0, LIB)
from session_mac import client_proof, handshake_transcript, message_mac, server_proof  # noqa: E402

with open(os.path.join(LIB, "..", "..", "include", "uapi", "linux", "nswap2l_proto.h")) as proto:
    VERSION = int(re.search(r"#define NSWAP2L_PROTO_VERSION\s+(\d+)", proto.read()).group(1))
MAGIC = 0x4C32574E
HELLO, AUTH, PUT, GET, FREE = 1, 2, 3, 4, 5
REPLY = 0x8000
ERR_AUTH = 4
FLAG_NAMESPACE_FOUND = 1
CAP_EVICT = 1
PAGE_SIZE = 4096
SEAL_SIZE = 24
CLIENT_LABEL, SERVER_LABEL = b"nswap2l-client-v3", b"nswap2l-server-v3"
C2S_LABEL = b"nswap2l-c2s-v3"


def header(mtype, tag=0, count=0, length=0):
    return struct.pack("<IHHIIIIQ", MAGIC, mtype, 0, tag, count, length, 0, 0)


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the server")
        data += chunk
    return data


def recv_message(sock):
    """(header fields, header bytes, payload) of the next message, no session MAC."""
    raw = recv_exactly(sock, 32)
    fields = struct.unpack("<IHHIIIIQ", raw)
    return fields, raw, recv_exactly(sock, fields[5])


class Refused(ConnectionError):
    """The server answered AUTH with an error status."""


# socket -> [key of its messages, sequence number of the next], once authenticated
sessions = {}


def sealed(sock, message):
    """message with its session MAC (nswap2l_proto.h), if sock has a session."""
    if sock not in sessions:
        return message
    key, seq = sessions[sock]
    sessions[sock][1] += 1
    return message + message_mac(key, seq, message)


def hello_payload(args, client_id, capabilities, nonce):
    return (struct.pack("<IIQ", VERSION, VERSION, capabilities) + client_id + nonce
            + args.name)


def handshake(sock, args, tamper=None, client_id=None):
    """HELLO and AUTH as nswap2l_proto.h says, as namespace client_id (default
    --client-id); with tamper, the client's view of one field differs from
    what went over the wire, as if someone on the path had changed it.
    Returns the AUTH reply's header fields once its proof checked."""
    nonce = os.urandom(32)
    client_id = client_id or args.client_id_bytes
    hello_header = header(HELLO, length=96)
    hello = hello_payload(args, client_id, 0, nonce)
    sock.sendall(hello_header + hello)
    if args.handshake != "full":
        return None
    fields, reply_header, reply = recv_message(sock)
    if fields[6] != 0:
        raise Refused("HELLO refused with status %d" % fields[6])
    server_nonce = reply[16:48]
    if tamper == "hello-capabilities":
        hello = hello_payload(args, client_id, CAP_EVICT, nonce)
    if tamper == "reply-max-pages":
        reply = reply[:4] + struct.pack("<I", 1) + reply[8:]
    transcript = handshake_transcript(hello_header, hello, reply_header, reply)
    mac = client_proof(args.key, CLIENT_LABEL, args.name, client_id, nonce, server_nonce,
                       transcript)
    sock.sendall(header(AUTH, length=32) + mac)
    fields, auth_header, proof = recv_message(sock)
    if fields[6] != 0:
        raise Refused("AUTH refused with status %d" % fields[6])
    if tamper == "auth-flags":
        auth_header = auth_header[:6] + struct.pack("<H", fields[2] ^ FLAG_NAMESPACE_FOUND) \
            + auth_header[8:]
    if tamper == "auth-free-pages":
        auth_header = auth_header[:24] + struct.pack("<Q", fields[7] + 1)
    if proof != server_proof(args.key, SERVER_LABEL, args.name, client_id, nonce,
                             server_nonce, transcript, auth_header):
        raise ValueError("the server's proof is wrong")
    ids = args.name + client_id + nonce + server_nonce
    sessions[sock] = [hmac.new(args.key, C2S_LABEL + ids, hashlib.sha256).digest(), 0]
    return fields


def connect(args, source, client_id=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect(("127.0.0.1", args.port))
    if args.handshake != "none":
        handshake(sock, args, client_id=client_id)
    return sock


def namespace_id(args, i):
    """The client id of the i-th namespace of a command that makes many."""
    return bytes.fromhex("%032x" % (args.client_id + i))


def closed_by_server(sock):
    """Whether the server closed sock; reads and drops what it sent."""
    sock.setblocking(False)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def flood(args):
    socks = []
    for i in range(args.n):
        try:
            socks.append(connect(args, args.source[i % len(args.source)]))
            if args.half_header:
                socks[-1].sendall(sealed(socks[-1], header(FREE, count=1, length=8))[:10])
        except OSError:
            socks.append(None)     # refused during the handshake: closed
    deadline = time.monotonic() + args.hold
    next_beat = time.monotonic() + (args.heartbeat or args.hold)
    while time.monotonic() < deadline:
        if args.heartbeat and time.monotonic() >= next_beat:
            for sock in socks:
                try:
                    if sock:
                        sock.send(sealed(sock, header(FREE, count=1, length=8)
                                         + struct.pack("<Q", 0)))
                except OSError:
                    pass
            next_beat += args.heartbeat
        time.sleep(0.1)
    closed = [sock is None or closed_by_server(sock) for sock in socks]
    n_closed = sum(closed)
    print("open=%d closed=%d closed_first=%d"
          % (len(socks) - n_closed, n_closed, sum(closed[:n_closed])))


def nonreading(args):
    keys = b"".join(struct.pack("<Q", k) for k in range(args.keys))
    socks = []
    for i in range(args.n):
        sock = connect(args, args.source[i % len(args.source)])
        sock.setblocking(False)
        gets = b"".join(sealed(sock, header(GET, tag=i + 1, count=args.keys, length=len(keys))
                               + keys) for i in range(args.gets))
        socks.append([sock, 0, gets])
    sent = 0
    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline:
        for entry in socks:
            try:
                n = entry[0].send(entry[2][entry[1]:])
                entry[1] += n
                sent += n
            except (BlockingIOError, OSError):
                pass
        time.sleep(0.05)
    print("sent=%d" % sent)


def churn(args):
    """One connection after another, each authenticating as a namespace of
    its own and closing at once."""
    refused = 0
    start = time.monotonic()
    for i in range(args.n):
        try:
            connect(args, args.source[i % len(args.source)], namespace_id(args, i)).close()
        except ConnectionError:     # closed after AUTH: at a limit
            refused += 1
    print("authenticated=%d refused=%d seconds=%.2f"
          % (args.n - refused, refused, time.monotonic() - start))


def puts(args):
    """N connections, namespaces of their own, each sending one PUT of --keys
    pages (all PUTs sent before any reply is read) and reading its reply;
    prints how many were stored, then holds the connections open."""
    count = args.keys
    payload = (b"".join(struct.pack("<Q", k) for k in range(count)) + bytes(SEAL_SIZE * count)
               + os.urandom(PAGE_SIZE) * count)
    socks = [connect(args, args.source[i % len(args.source)], namespace_id(args, i))
             for i in range(args.n)]
    for sock in socks:
        sock.settimeout(30)
        sock.sendall(sealed(sock, header(PUT, tag=1, count=count, length=len(payload))
                            + payload))
    stored = sum(struct.unpack("<IHHIIIIQ", recv_exactly(sock, 32 + 16)[:32])[6] == 0
                 for sock in socks)
    print("stored=%d" % stored, flush=True)
    time.sleep(args.hold)


def partial(args):
    sock = connect(args, args.source[0])
    length = 8 + SEAL_SIZE + PAGE_SIZE     # key, seal, page
    message = header(PUT, tag=1, count=1, length=length) + bytes(length)
    sock.sendall(message[:args.bytes])
    start = time.monotonic()
    sock.settimeout(args.hold)
    try:
        while sock.recv(65536):
            pass
        print("closed_after=%.1f" % (time.monotonic() - start))
    except socket.timeout:
        print("open")
    except OSError:
        print("closed_after=%.1f" % (time.monotonic() - start))


def tampered(args):
    sock = socket.create_connection(("127.0.0.1", args.port), timeout=5)
    try:
        fields = handshake(sock, args, args.tamper)
        print("auth=ok namespace=%s free_pages=%d"
              % ("found" if fields[2] & FLAG_NAMESPACE_FOUND else "new", fields[7]))
    except Refused as refused:
        print("auth=refused (%s)" % refused)
    except ValueError as wrong:
        print("auth=badserver (%s)" % wrong)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("command", choices=("flood", "nonreading", "partial", "handshake",
                                            "churn", "puts"))
    parser.add_argument("n", type=int, nargs="?", default=1)
    parser.add_argument("--source", nargs="+", default=["127.0.0.1"])
    parser.add_argument("--handshake", choices=("none", "hello", "full"), default="full")
    parser.add_argument("--key-file")
    parser.add_argument("--client", default="default")
    parser.add_argument("--client-id", type=lambda v: int(v, 16), default=0xa77ac)
    parser.add_argument("--hold", type=float, default=3)
    parser.add_argument("--heartbeat", type=float, default=0)
    parser.add_argument("--half-header", action="store_true")
    parser.add_argument("--gets", type=int, default=100)
    parser.add_argument("--keys", type=int, default=64)
    parser.add_argument("--bytes", type=int, default=100)
    parser.add_argument("--tamper", choices=("none", "hello-capabilities", "reply-max-pages",
                                             "auth-flags", "auth-free-pages"), default="none")
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read() if args.key_file else b""
    args.name = args.client.encode().ljust(32, b"\0")
    args.client_id_bytes = bytes.fromhex("%032x" % args.client_id)
    {"flood": flood, "nonreading": nonreading, "partial": partial, "handshake": tampered,
     "churn": churn, "puts": puts}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
