#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The owner's side of 35-max-file.sh's migration: a client with
NSWAP2L_CAP_MOVED (33-peer-client.py's sessions) connected to servers A and
B, that takes no EVICT.

35-max-file-client.py PORT_A PORT_B --key-file K --client NAME --pages N \\
        --max-file FILE --size SIZE --pid PID --expect M
    stores keys 0 to N-1 on A, then writes SIZE into FILE (A's --max-file)
    and sends A (process PID) SIGHUP.  Serves A: ASK_NAMESPACE naming B
    gets its namespace there, any other server NOENT; every MOVED must
    name B and that namespace and is taken whole.  Once at least M keys
    moved and A has sent nothing for 2 s, B must give back every moved key
    with its seal and page, and A none of them.  Prints "moved=N".
"""
import argparse
import importlib.util
import os
import select
import signal
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("peer_client",
                                               os.path.join(HERE, "33-peer-client.py"))
peer_client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peer_client)
caps = peer_client.caps
Failed = peer_client.Failed
QUIET_S = 2


def serve_moves(conn_a, b_id, id_b, expect, seconds=30):
    """Answers A until at least expect keys moved and A is quiet; returns the keys moved."""
    moved = []
    deadline = time.time() + seconds
    conn_a.sock.settimeout(10)
    while True:
        ready, _, _ = select.select([conn_a.sock], [], [], QUIET_S)
        if not ready:
            if len(moved) >= expect:
                return moved
            if time.time() > deadline:
                raise Failed("%d keys moved in %d s, expected at least %d" %
                             (len(moved), seconds, expect))
            continue
        fields, payload, _ = conn_a.recv()
        mtype, tag, count = fields[1], fields[3], fields[4]
        if mtype == peer_client.ASK_NAMESPACE:
            status, answer = (caps.OK, id_b) if payload == b_id else (caps.ERR_NOENT, b"")
            conn_a.sock.sendall(conn_a.answer(mtype, tag, status, 0, answer))
        elif mtype == peer_client.MOVED:
            if payload[:16] != b_id or payload[16:32] != id_b:
                raise Failed("MOVED names another server or namespace")
            moved += struct.unpack("<%dQ" % count, payload[32:])
            conn_a.sock.sendall(conn_a.answer(mtype, tag, caps.OK, 0, b""))
        elif mtype != peer_client.CAPACITY:
            raise Failed("unexpected message type %#x from A" % mtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port_a", type=int)
    parser.add_argument("port_b", type=int)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--client", default="default")
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--max-file", required=True)
    parser.add_argument("--size", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--expect", type=int, required=True)
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read()
    id_a, id_b = bytes.fromhex("%032x" % 0x35a), bytes.fromhex("%032x" % 0x35b)
    try:
        conn_b = peer_client.session(args.port_b, args, id_b, peer_client.CAP_MOVED)
        conn_a = peer_client.session(args.port_a, args, id_a, peer_client.CAP_MOVED)
        b_id = conn_b.server_id()
        keys = list(range(args.pages))
        for first in range(0, len(keys), 64):
            batch = keys[first:first + 64]
            conn_a.request(caps.PUT, len(batch), caps.put_payload(batch, []), caps.OK)
        with open(args.max_file, "w") as f:
            f.write(args.size + "\n")
        os.kill(args.pid, signal.SIGHUP)
        moved = serve_moves(conn_a, b_id, id_b, args.expect)
        if len(set(moved)) != len(moved) or not set(moved) <= set(keys):
            raise Failed("MOVED keys: %s" % sorted(moved))
        for k in sorted(moved):
            reply = peer_client.get_until(conn_b, [k], caps.OK)
            if reply != caps.seal_of(k) + caps.page_of(k):
                raise Failed("B gives back another seal or page for key %d" % k)
            peer_client.get_until(conn_a, [k], caps.ERR_NOENT)
    except (Failed, OSError) as e:
        print("35-max-file-client.py: %s" % e, file=sys.stderr)
        return 1
    print("moved=%d" % len(moved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
