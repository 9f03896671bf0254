#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A client of servers A and B sending COPY (nswap2l_proto.h, "Copy"), for
36-peer-copy.sh, on 33-peer-client.py's sessions with NSWAP2L_CAP_MOVED and
NSWAP2L_CAP_COPY.

36-peer-copy-client.py copy PORT_A PORT_B --key-file K --client NAME
    stores keys 1-100 on A (namespace a1) and key 50 on B (namespace b1)
    with other bytes (a mirror's copy there already); asks A to COPY to B,
    namespace b1, keys 1-100 but 50 and 70 in another order, one twice,
    with key 50 (held on B) and key 777 (not held on A).  The reply must
    name exactly the keys it stored: 1-100 but 50 and 70.  B must give them
    back with A's seals and pages, key 50 as B had it, not 70 nor 777; A
    must still give back all of 1-100.  A COPY to a server id A has no peer
    with gets NOENT without payload.  Prints "copied=N".
36-peer-copy-client.py nospc PORT_A PORT_B --key-file K --client NAME
    stores keys 3001-3256 on A (namespace a5) and sends, in one write, three
    COPYs of them all to B (namespace b5): the third comes while A has 512
    pages on their way to B and is answered NOSPC at once; then the first
    OK with all 256 keys, the second NOENT (B held them all already).
    Prints "nospc: first=N second=noent third=nospc".
36-peer-copy-client.py closed PORT_A PORT_B --key-file K --client NAME --stop-pid PID
    stores keys 1001-1256 on A (namespace a2), learns B's server id (a
    connection in namespace b2, closed again), stops B (SIGSTOP to PID: its
    answers to A's PEER_PUTs cannot come before A has seen the close; the
    caller continues it), sends A a COPY of them to B, namespace b2, and
    closes the connection at once, before the reply.  Prints "closed".
36-peer-copy-client.py malformed PORT_A CASE --key-file K --client NAME [--peer-key-file P]
    one good connection (namespace a3) stores keys 2001-2002 on A; another
    sends a malformed COPY: CASE count0 (no key), too-many
    (NSWAP2L_PROTO_MAX_COPY_KEYS + 1 keys), length (one key fewer than its
    count), no-cap (a connection without NSWAP2L_CAP_COPY) or peer (in a
    peer session, under --peer-key-file).  It must be answered
    INVALID and closed; the good connection must then GET its keys.
    Prints "closed=invalid other=ok".
"""
import argparse
import importlib.util
import os
import random
import signal
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import caps  # noqa: E402
from caps import Failed, keys_bytes, page_of, put_payload, seal_of  # noqa: E402

spec = importlib.util.spec_from_file_location("peer_client", os.path.join(HERE, "33-peer-client.py"))
peer_client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer_client)

CAP_MOVED, CAP_PEER, CAPACITY = peer_client.CAP_MOVED, peer_client.CAP_PEER, peer_client.CAPACITY
CAP_COPY = 1 << int(caps.re.search(r"#define NSWAP2L_CAP_COPY\s+\(1ULL << (\d+)\)",
                                   caps.PROTO).group(1))
COPY = int(caps.re.search(r"NSWAP2L_MSG_COPY\s*= (\d+)", caps.PROTO).group(1))
MAX_COPY_KEYS = caps.define("NSWAP2L_PROTO_MAX_COPY_KEYS")
ERR_NOSPC = 2
REPLY = caps.REPLY
B_SEAL, B_PAGE = peer_client.B_SEAL, peer_client.B_PAGE
KEYS = list(range(1, 101))
HELD_ON_B, LEFT_OUT, NOT_HELD = 50, 70, 777
CLOSED_KEYS = list(range(1001, 1001 + MAX_COPY_KEYS))
GOOD_KEYS = [2001, 2002]
NOSPC_KEYS = list(range(3001, 3001 + MAX_COPY_KEYS))


def ident(n):
    return bytes.fromhex("%032x" % n)


def session(port, args, client_id, extra_caps=CAP_MOVED | CAP_COPY):
    conn = peer_client.session(port, args, client_id, extra_caps)
    if extra_caps & CAP_COPY and not conn.announced & CAP_COPY:
        raise Failed("the server does not announce NSWAP2L_CAP_COPY (caps %#x)" % conn.announced)
    return conn


def copy_payload(server_id, client_id, keys):
    return server_id + client_id + keys_bytes(keys)


def reply_to(conn, tag, mtype):
    """The reply to the request tagged tag (CAPACITY messages skipped): (fields, payload)."""
    while True:
        fields, payload, _ = conn.recv()
        if fields[1] == CAPACITY:
            continue
        if fields[1] != mtype | REPLY or fields[3] != tag:
            raise Failed("type %#x tag %d, expected the reply to %#x tag %d"
                         % (fields[1], fields[3], mtype, tag))
        return fields, payload


def put(conn, keys):
    for first in range(0, len(keys), 64):
        batch = keys[first:first + 64]
        fields, _ = reply_to(conn, conn.send(caps.PUT, len(batch), put_payload(batch, [])), caps.PUT)
        if fields[6] != caps.OK:
            raise Failed("PUT of %d.. answered %d" % (batch[0], fields[6]))


def get(conn, keys, status=caps.OK):
    """GET keys in batches of 64; returns the seals and pages of each batch, joined."""
    got = b""
    for first in range(0, len(keys), 64):
        batch = keys[first:first + 64]
        fields, payload = reply_to(conn, conn.send(caps.GET, len(batch), keys_bytes(batch)),
                                   caps.GET)
        if fields[6] != status:
            raise Failed("GET of %s answered %d, expected %d" % (batch[:4], fields[6], status))
        got += payload
    return got


def as_put(keys):
    return b"".join(b"".join(seal_of(k) for k in keys[i:i + 64]) +
                    b"".join(page_of(k) for k in keys[i:i + 64]) for i in range(0, len(keys), 64))


def copy(args):
    id_a, id_b = ident(0xa1), ident(0xb1)
    conn_b = session(args.port_b, args, id_b)
    conn_a = session(args.port_a, args, id_a)
    b_id = conn_b.server_id()
    reply_to(conn_b, conn_b.send(caps.PUT, 1, keys_bytes([HELD_ON_B]) + B_SEAL + B_PAGE),
             caps.PUT)
    put(conn_a, KEYS)
    asked = [k for k in KEYS if k != LEFT_OUT] + [NOT_HELD, KEYS[3]]
    random.Random(36).shuffle(asked)
    fields, payload = reply_to(conn_a, conn_a.send(COPY, len(asked),
                                                   copy_payload(b_id, id_b, asked)), COPY)
    if fields[6] != caps.OK or fields[5] != 8 * fields[4]:
        raise Failed("COPY answered status %d count %d length %d"
                     % (fields[6], fields[4], fields[5]))
    copied = list(struct.unpack("<%dQ" % fields[4], payload))
    want = [k for k in KEYS if k not in (HELD_ON_B, LEFT_OUT)]
    if copied != want:
        raise Failed("COPY reply names %s, expected %s" % (copied, want))
    if get(conn_b, copied) != as_put(copied):
        raise Failed("B gives back other seals or pages than A had")
    if get(conn_b, [HELD_ON_B]) != B_SEAL + B_PAGE:
        raise Failed("the copy B held already was overwritten")
    get(conn_b, [LEFT_OUT], caps.ERR_NOENT)
    get(conn_b, [NOT_HELD], caps.ERR_NOENT)
    if get(conn_a, KEYS) != as_put(KEYS):
        raise Failed("A lost or changed pages it copied")
    # a server A has no peer with
    fields, payload = reply_to(conn_a, conn_a.send(COPY, 2, copy_payload(ident(0xdead), id_b,
                                                                         KEYS[:2])), COPY)
    if fields[6] != caps.ERR_NOENT or fields[4] or payload:
        raise Failed("COPY to an unknown server answered status %d count %d length %d"
                     % (fields[6], fields[4], len(payload)))
    print("copied=%d" % len(copied))


def nospc(args):
    conn_b = session(args.port_b, args, ident(0xb5))
    conn_a = session(args.port_a, args, ident(0xa5))
    put(conn_a, NOSPC_KEYS)
    where = copy_payload(conn_b.server_id(), ident(0xb5), NOSPC_KEYS)
    conn_a.sock.sendall(b"".join(conn_a.request_message(COPY, len(NOSPC_KEYS), where)
                                 for _ in range(3)))
    first, second, third = conn_a.tag - 2, conn_a.tag - 1, conn_a.tag
    replies = {}
    while len(replies) < 3:
        fields, payload, _ = conn_a.recv()
        if fields[1] == COPY | REPLY:
            replies[fields[3]] = (fields, payload)
            # the one refused at once comes before the others
            if fields[3] != third and third not in replies:
                raise Failed("COPY tag %d answered before the one A could not take" % fields[3])
        elif fields[1] != CAPACITY:
            raise Failed("unexpected message type %#x from A" % fields[1])
    fields, payload = replies[first]
    if fields[6] != caps.OK or list(struct.unpack("<%dQ" % fields[4], payload)) != NOSPC_KEYS:
        raise Failed("the first COPY answered %d with %d keys" % (fields[6], fields[4]))
    for tag, status in ((second, caps.ERR_NOENT), (third, ERR_NOSPC)):
        if replies[tag][0][6] != status or replies[tag][0][5]:
            raise Failed("COPY tag %d answered %d (%d bytes), expected %d"
                         % (tag, replies[tag][0][6], replies[tag][0][5], status))
    if get(conn_b, NOSPC_KEYS) != as_put(NOSPC_KEYS):
        raise Failed("B gives back other seals or pages than A had")
    print("nospc: first=%d second=noent third=nospc" % len(NOSPC_KEYS))


def closed(args):
    conn_b = session(args.port_b, args, ident(0xb2))
    b_id = conn_b.server_id()
    conn_b.sock.close()
    conn_a = session(args.port_a, args, ident(0xa2))
    put(conn_a, CLOSED_KEYS)
    os.kill(args.stop_pid, signal.SIGSTOP)
    conn_a.send(COPY, len(CLOSED_KEYS), copy_payload(b_id, ident(0xb2), CLOSED_KEYS))
    conn_a.sock.close()
    print("closed")


def malformed(args):
    good = session(args.port_a, args, ident(0xa3))
    put(good, GOOD_KEYS)
    where = ident(0xbb) + ident(0xb3)
    if args.case == "peer":
        args.client, args.key = ".peer", open(args.peer_key_file, "rb").read()
        bad = peer_client.MovedConn(args, CAP_PEER | CAP_MOVED | CAP_COPY, os.urandom(16))
        bad.send(COPY, 1, where + keys_bytes([1]))
    else:
        bad = session(args.port_a, args, ident(0xa4),
                      CAP_MOVED if args.case == "no-cap" else CAP_MOVED | CAP_COPY)
        count, keys = {"count0": (0, []), "too-many": (MAX_COPY_KEYS + 1, list(range(1, MAX_COPY_KEYS + 2))),
                       "length": (2, GOOD_KEYS[:1]), "no-cap": (2, GOOD_KEYS)}[args.case]
        bad.send(COPY, count, where + keys_bytes(keys))
    peer_client.expect_closed(bad, "COPY %s" % args.case)
    if get(good, GOOD_KEYS) != as_put(GOOD_KEYS):
        raise Failed("the other connection's pages changed")
    print("closed=invalid other=ok")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("copy", "nospc", "closed", "malformed"))
    parser.add_argument("port_a", type=int)
    parser.add_argument("arg")
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--client", default="default")
    parser.add_argument("--peer-key-file")
    parser.add_argument("--stop-pid", type=int)
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read()
    try:
        if args.what == "malformed":
            args.case = args.arg
        else:
            args.port_b = int(args.arg)
        {"copy": copy, "nospc": nospc, "closed": closed, "malformed": malformed}[args.what](args)
    except (Failed, OSError) as e:
        print("36-peer-copy-client.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
