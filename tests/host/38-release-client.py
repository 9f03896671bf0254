#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A client sending RELEASE (nswap2l_proto.h, NSWAP2L_MSG_RELEASE), for
38-release.sh, on caps.py's sessions with NSWAP2L_CAP_RELEASE.

38-release-client.py release PORT --key-file K --client NAME --client-id HEX
    stores keys 1-100, sends RELEASE: the reply must be OK without count
    nor payload, and the server must then close the connection.  Prints
    "released".
38-release-client.py shared PORT --key-file K --client NAME --client-id HEX
    two connections in one namespace: the first (without the capability)
    stores keys 1-10, the second keys 11-15, then the second RELEASEs and
    is closed.  The first goes on: its keys are gone (NOENT), a PUT of key
    20 is OK; it then closes.  Prints "shared".
38-release-client.py backlog PORT --key-file K --client NAME --client-id HEX
    stores keys 1-64, sends 40 GETs of them all and RELEASE at once, then
    waits a second before it reads (a small receive buffer): the server
    must send every GET reply, then the OK, then close.  Prints
    "backlog=40".
38-release-client.py malformed PORT CASE --key-file K --client NAME --client-id HEX
        [--peer-key-file P]
    a RELEASE with count 1 (CASE count), an 8-byte payload (length),
    without NSWAP2L_CAP_RELEASE (no-cap) or in a peer session (peer) in a
    namespace of its own with keys 1-5: answered INVALID and closed.  The
    namespace of --client-id (keys 1-50 stored before by the caller) must
    then give back its pages.  Prints "closed=invalid other=ok".
"""
import argparse
import importlib.util
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import caps  # noqa: E402
from caps import Failed, keys_bytes  # noqa: E402


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peer_client = load("peer_client", "33-peer-client.py")
copy_client = load("copy_client", "36-peer-copy-client.py")
reply_to, put, get, as_put, ident = (copy_client.reply_to, copy_client.put, copy_client.get,
                                     copy_client.as_put, copy_client.ident)

CAP_RELEASE = 1 << int(caps.re.search(r"#define NSWAP2L_CAP_RELEASE\s+\(1ULL << (\d+)\)",
                                      caps.PROTO).group(1))
RELEASE = int(caps.re.search(r"NSWAP2L_MSG_RELEASE\s*= (\d+)", caps.PROTO).group(1))
CAP_MOVED, CAP_PEER = peer_client.CAP_MOVED, peer_client.CAP_PEER
OTHER_KEYS = list(range(1, 51))
BACKLOG_GETS = 40


def session(args, client_id, release=True):
    conn = caps.Conn(args, caps.CAPS["both"] | (CAP_RELEASE if release else 0), client_id)
    if release and not conn.announced & CAP_RELEASE:
        raise Failed("the server does not announce NSWAP2L_CAP_RELEASE (caps %#x)"
                     % conn.announced)
    return conn


def release(conn):
    fields, payload = reply_to(conn, conn.send(RELEASE, 0, b""), RELEASE)
    if fields[6] != caps.OK or fields[4] or payload:
        raise Failed("RELEASE answered status %d count %d length %d"
                     % (fields[6], fields[4], len(payload)))
    peer_client.expect_eof(conn, "after the RELEASE reply")


def release_one(args):
    conn = session(args, args.client_id_bytes)
    put(conn, list(range(1, 101)))
    release(conn)
    print("released")


def shared(args):
    first = session(args, args.client_id_bytes, release=False)
    put(first, list(range(1, 11)))
    second = session(args, args.client_id_bytes)
    put(second, list(range(11, 16)))
    release(second)
    get(first, [1, 2], caps.ERR_NOENT)
    get(first, [11], caps.ERR_NOENT)
    put(first, [20])
    first.sock.close()
    print("shared")


def backlog(args):
    conn = session(args, args.client_id_bytes)
    keys = list(range(1, 65))
    put(conn, keys)
    # what the socket cannot take waits in the server's queue
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    tags = [conn.send(caps.GET, len(keys), keys_bytes(keys)) for _ in range(BACKLOG_GETS)]
    tag = conn.send(RELEASE, 0, b"")
    time.sleep(1)
    for get_tag in tags:
        fields, payload = reply_to(conn, get_tag, caps.GET)
        if fields[6] != caps.OK or payload != as_put(keys):
            raise Failed("GET tag %d answered %d, or other pages" % (get_tag, fields[6]))
    fields, payload = reply_to(conn, tag, RELEASE)
    if fields[6] != caps.OK:
        raise Failed("RELEASE behind GET replies answered %d" % fields[6])
    peer_client.expect_eof(conn, "after the RELEASE reply")
    print("backlog=%d" % len(tags))


def malformed(args):
    if args.case == "peer":
        args.client, args.key = ".peer", open(args.peer_key_file, "rb").read()
        bad = peer_client.MovedConn(args, CAP_PEER | CAP_MOVED | CAP_RELEASE, os.urandom(16))
        bad.send(RELEASE, 0, b"")
    else:
        bad = session(args, ident(args.client_id + 1), release=args.case != "no-cap")
        put(bad, list(range(1, 6)))
        count, payload = {"count": (1, b""), "length": (0, keys_bytes([1])),
                          "no-cap": (0, b"")}[args.case]
        bad.send(RELEASE, count, payload)
    peer_client.expect_closed(bad, "RELEASE %s" % args.case)
    # a fresh session: the pages stored before are all there
    args.client, args.key = args.client_name, open(args.key_file, "rb").read()
    other = session(args, args.client_id_bytes, release=False)
    if get(other, OTHER_KEYS) != as_put(OTHER_KEYS):
        raise Failed("the other namespace's pages changed")
    print("closed=invalid other=ok")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("release", "shared", "backlog", "malformed"))
    parser.add_argument("port", type=int)
    parser.add_argument("case", nargs="?", choices=("count", "length", "no-cap", "peer"))
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--client", default="default")
    parser.add_argument("--client-id", type=lambda v: int(v, 16), required=True)
    parser.add_argument("--peer-key-file")
    args = parser.parse_args()
    if (args.what == "malformed") != bool(args.case):
        parser.error("CASE goes with malformed only")
    args.key = open(args.key_file, "rb").read()
    args.client_name = args.client
    args.client_id_bytes = ident(args.client_id)
    try:
        {"release": release_one, "shared": shared, "backlog": backlog,
         "malformed": malformed}[args.what](args)
    except (Failed, OSError) as e:
        print("38-release-client.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
