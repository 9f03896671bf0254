#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile clients of nswapd for the host tests, on many sockets at once.

attack.py PORT flood N [--source ADDR...] [--handshake none|hello|full]
    opens N connections (round-robin over the source addresses), holds them
    for --hold seconds and prints "open=N closed=N closed_first=N": how many
    the server left open, closed, and how many of the closed ones were the
    oldest (closed_first == closed: the server closed oldest first).
    With --heartbeat S, a FREE of key 0 every S seconds on each.
attack.py PORT nonreading N --gets M --keys K
    N authenticated connections each send M GETs of keys 0..K-1 and never
    read; holds them for --hold seconds, prints "sent=BYTES".
attack.py PORT partial --handshake MODE --bytes B
    sends the first B bytes of a one-page PUT, then waits for the server to
    close; prints "closed_after=SECONDS" (or "open" after --hold).
"""
import argparse
import hashlib
import hmac
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from session_mac import message_mac  # noqa: E402

MAGIC = 0x4C32574E
VERSION = 4
HELLO, AUTH, PUT, GET, FREE = 1, 2, 3, 4, 5
PAGE_SIZE = 4096
SEAL_SIZE = 24


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


# socket -> [key of its messages, sequence number of the next], once authenticated
sessions = {}


def sealed(sock, message):
    """message with its session MAC (nswap2l_proto.h), if sock has a session."""
    if sock not in sessions:
        return message
    key, seq = sessions[sock]
    sessions[sock][1] += 1
    return message + message_mac(key, seq, message)


def connect(args, source):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect(("127.0.0.1", args.port))
    client_id = bytes.fromhex("%032x" % args.client_id)
    name = args.client.encode().ljust(32, b"\0")
    nonce = os.urandom(32)
    if args.handshake in ("hello", "full"):
        sock.sendall(header(HELLO, length=96) + struct.pack("<IIQ", VERSION, VERSION, 0)
                     + client_id + nonce + name)
    if args.handshake == "full":
        reply = recv_exactly(sock, 32 + 48)
        server_nonce = reply[-32:]
        ids = name + client_id + nonce + server_nonce
        mac = hmac.new(args.key, b"nswap2l-client-v2" + ids, hashlib.sha256).digest()
        sock.sendall(header(AUTH, length=32) + mac)
        recv_exactly(sock, 32 + 32)
        sessions[sock] = [hmac.new(args.key, b"nswap2l-c2s-v3" + ids, hashlib.sha256).digest(), 0]
    return sock


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("command", choices=("flood", "nonreading", "partial"))
    parser.add_argument("n", type=int, nargs="?", default=1)
    parser.add_argument("--source", nargs="+", default=["127.0.0.1"])
    parser.add_argument("--handshake", choices=("none", "hello", "full"), default="full")
    parser.add_argument("--key-file")
    parser.add_argument("--client", default="default")
    parser.add_argument("--client-id", type=lambda v: int(v, 16), default=0xa77ac)
    parser.add_argument("--hold", type=float, default=3)
    parser.add_argument("--heartbeat", type=float, default=0)
    parser.add_argument("--gets", type=int, default=100)
    parser.add_argument("--keys", type=int, default=64)
    parser.add_argument("--bytes", type=int, default=100)
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read() if args.key_file else b""
    {"flood": flood, "nonreading": nonreading, "partial": partial}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
