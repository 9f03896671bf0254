#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The owner's side of server-to-server migration, for 33-peer-migration.sh:
a client with NSWAP2L_CAP_MOVED (caps.py's sessions) connected to servers
A and B.

33-peer-client.py move PORT_A PORT_B --key-file K --client NAME --shrink FILE
    stores keys 0-99 on A and key 50 on B too, with other bytes (a mirror's
    other copy), then writes "MemAvailable: 0 kB" into FILE (A's
    --memavailable-file) and serves A: ASK_NAMESPACE naming B gets its
    namespace there (with a FREE of key 7 in the same write, so that it
    comes while the PEER_PUTs are in flight), any other server NOENT; a
    MOVED must name B and that namespace, not key 7 nor key 50 (held on B
    already); the reply refuses key 9, and key 11, which it first PUTs on B
    itself (a mirror's new copy written there while the move ran).  Then B
    must give back every other key with its seal and page, A none of them;
    keys 9, 11 and 50 stay on A; keys 7 and 9 end up freed on B, keys 11 and
    50 keep the owner's bytes written on B (A's PEER_FREE of 11 leaves it).
    Prints "asked=N moved=N taken=N".
33-peer-client.py lost PORT_A PORT_B --key-file K --client NAME --shrink FILE
    a MOVED whose reply is lost: writes "MemAvailable: 8388608 kB" into
    FILE, stores keys 200-231 on A (namespace a2), then writes 0 kB again;
    at A's MOVED it closes the connection unanswered, connects again in the
    same namespace, and A must send the same MOVED again (no ASK_NAMESPACE:
    it knows), which it answers refusing key 201.  Then B gives back every
    other key, A none of them; key 201 stays on A and is freed on B.
    Prints "lost: moved=N again=N".
33-peer-client.py gone PORT_A PORT_B --key-file K --client NAME --shrink FILE --wait S
    the same with keys 300-315 (namespace a3), but the owner never comes
    back: S seconds later (past A's --grace) B must still give back every
    key with its seal and page (which the owner may have taken).
    Prints "gone: moved=N kept=N".
33-peer-client.py peer PORT --key-file K        (K: a peer key)
    a peer session: prints "peer=ok" when it authenticates, "peer=refused"
    when the server refuses the key; then, with the key right, a PUT in it
    must be answered INVALID and the session closed ("put-in-peer=closed").
33-peer-client.py client-peer-put PORT --key-file K --client NAME
    a client session sending PEER_PUT: INVALID and closed.
"""
import argparse
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import caps  # noqa: E402
from caps import Conn, Failed, keys_bytes, page_of, put_payload, seal_of  # noqa: E402

CAP_MOVED, CAP_PEER = 1 << 4, 1 << 5
CAPACITY, ASK_NAMESPACE, MOVED, PEER_PUT = 6, 8, 9, 10
REPLY = caps.REPLY
HELLO_REPLY_SIZE, SERVER_ID_SIZE = 48, 16
FREED_IN_FLIGHT, REFUSED, REWRITTEN, MIRRORED = 7, 9, 11, 50
KEYS = list(range(100))
# the other copy of MIRRORED, on B: bytes of its own
B_SEAL, B_PAGE = b"\xbb" * caps.SEAL_SIZE, b"\xbb" * caps.PAGE_SIZE
LOST_KEYS, LOST_REFUSED = list(range(200, 232)), 201
GONE_KEYS = list(range(300, 316))


class MovedConn(Conn):
    """caps.Conn, keeping the HELLO reply: its server id follows the 48 bytes of the reply."""

    def recv_plain(self):
        fields, raw, payload = super().recv_plain()
        if not hasattr(self, "hello_reply"):
            self.hello_reply = payload
        return fields, raw, payload

    def server_id(self):
        if len(self.hello_reply) != HELLO_REPLY_SIZE + SERVER_ID_SIZE:
            raise Failed("HELLO reply without a server id (%d bytes)" % len(self.hello_reply))
        return self.hello_reply[HELLO_REPLY_SIZE:]

    def sealed(self, message):
        """message and its MAC, under the next sequence number."""
        self.tx_seq += 1
        return message + caps.message_mac(self.c2s, self.tx_seq - 1, message)

    def answer(self, mtype, tag, status, count, payload):
        return self.sealed(struct.pack("<IHHIIIIQ", caps.MAGIC, mtype | REPLY, 0, tag, count,
                                       len(payload), status, 0) + payload)

    def request_message(self, mtype, count, payload):
        self.tag += 1
        return self.sealed(caps.header(mtype, self.tag, count, len(payload)) + payload)


def session(port, args, client_id, extra_caps):
    args.port = port
    return MovedConn(args, caps.CAPS["both"] | extra_caps, client_id)


def expect_eof(conn, what):
    """The server closes conn, sending nothing more."""
    conn.sock.settimeout(5)
    try:
        if conn.sock.recv(1):
            raise Failed("%s: the server sent more" % what)
    except socket.timeout:
        raise Failed("%s: the connection stays open" % what)
    except ConnectionResetError:
        pass


def expect_closed(conn, what):
    fields, _, _ = conn.recv()
    if fields[6] != caps.ERR_INVALID:
        raise Failed("%s answered with status %d, not INVALID" % (what, fields[6]))
    expect_eof(conn, "%s, after INVALID" % what)


def get_until(conn, keys, status, seconds=10):
    """GET keys until the answer has that status (frees on the peer come a little later)."""
    deadline = time.time() + seconds
    while True:
        tag = conn.send(caps.GET, len(keys), keys_bytes(keys))
        fields, reply, _ = conn.recv()
        # A goes on moving what it holds: this owner uses no other peer now
        while fields[1] in (ASK_NAMESPACE, MOVED, CAPACITY):
            if fields[1] == ASK_NAMESPACE:
                conn.sock.sendall(conn.answer(ASK_NAMESPACE, fields[3], caps.ERR_NOENT, 0, b""))
            elif fields[1] == MOVED:
                conn.sock.sendall(conn.answer(MOVED, fields[3], caps.OK, fields[4], reply[32:]))
            fields, reply, _ = conn.recv()
        if fields[1] != caps.GET | REPLY or fields[3] != tag:
            raise Failed("GET answered with type %#x tag %d" % (fields[1], fields[3]))
        if fields[6] == status:
            return reply
        if time.time() > deadline:
            raise Failed("GET %s: status %d, expected %d" % (keys[:4], fields[6], status))
        time.sleep(0.1)


def serve_moves(conn_a, conn_b, b_id, id_b):
    """Answers A until every key but the freed and mirrored ones was MOVED and a MOVED
    of refused keys alone came (A moves on while its owner takes some keys, and
    sends the rest through EVICT once it takes none), writing REWRITTEN on B
    before it refuses it; returns (asks, moved, taken)."""
    asked, moved, taken = 0, [], []
    took_none = False
    conn_a.sock.settimeout(20)
    while len(set(moved)) < len(KEYS) - 2 or not took_none:
        fields, payload, _ = conn_a.recv()
        mtype, tag, count = fields[1], fields[3], fields[4]
        if mtype == ASK_NAMESPACE:
            asked += 1
            if payload != b_id:
                conn_a.sock.sendall(conn_a.answer(ASK_NAMESPACE, tag, caps.ERR_NOENT, 0, b""))
                continue
            # the FREE right behind: A handles it while its PEER_PUTs are out
            conn_a.sock.sendall(conn_a.answer(ASK_NAMESPACE, tag, caps.OK, 0, id_b) +
                                conn_a.request_message(caps.FREE, 1,
                                                       keys_bytes([FREED_IN_FLIGHT])))
        elif mtype == MOVED:
            if payload[:16] != b_id or payload[16:32] != id_b:
                raise Failed("MOVED names another server or namespace")
            keys = list(struct.unpack("<%dQ" % count, payload[32:]))
            if FREED_IN_FLIGHT in keys:
                raise Failed("MOVED names key %d, freed while it moved" % FREED_IN_FLIGHT)
            if MIRRORED in keys:
                raise Failed("MOVED names key %d, held on B already" % MIRRORED)
            if REWRITTEN in keys:
                conn_b.request(caps.PUT, 1, keys_bytes([REWRITTEN]) + B_SEAL + B_PAGE, caps.OK)
            refused = [k for k in keys if k in (REFUSED, REWRITTEN)]
            moved += keys
            taken += [k for k in keys if k not in refused]
            took_none = len(refused) == len(keys)
            conn_a.sock.sendall(conn_a.answer(MOVED, tag, caps.OK, len(refused),
                                              keys_bytes(refused)))
        elif mtype not in (caps.FREE | REPLY, CAPACITY):
            raise Failed("unexpected message type %#x from A" % mtype)
    return asked, sorted(moved), sorted(taken)


def move(args):
    id_a, id_b = bytes.fromhex("%032x" % 0xa1), bytes.fromhex("%032x" % 0xb1)
    conn_b = session(args.port_b, args, id_b, CAP_MOVED)
    conn_a = session(args.port_a, args, id_a, CAP_MOVED)
    b_id = conn_b.server_id()
    if conn_a.server_id() == b_id:
        raise Failed("A and B have the same server id")
    conn_a.request(caps.PUT, 64, put_payload(KEYS[:64], []), caps.OK)
    conn_a.request(caps.PUT, 36, put_payload(KEYS[64:], []), caps.OK)
    conn_b.request(caps.PUT, 1, keys_bytes([MIRRORED]) + B_SEAL + B_PAGE, caps.OK)
    with open(args.shrink, "w") as f:
        f.write("MemAvailable: 0 kB\n")
    asked, moved, taken = serve_moves(conn_a, conn_b, b_id, id_b)
    if sorted(set(moved)) != [k for k in KEYS if k not in (FREED_IN_FLIGHT, MIRRORED)]:
        raise Failed("MOVED keys: %s" % moved)
    for first in range(0, len(taken), 64):
        batch = taken[first:first + 64]
        reply = get_until(conn_b, batch, caps.OK)
        if reply != b"".join(seal_of(k) for k in batch) + b"".join(page_of(k) for k in batch):
            raise Failed("B gives back other seals or pages than A had")
        for k in batch:
            get_until(conn_a, [k], caps.ERR_NOENT)
    if get_until(conn_a, [REFUSED], caps.OK) != seal_of(REFUSED) + page_of(REFUSED):
        raise Failed("the refused key changed on A")
    if get_until(conn_a, [MIRRORED], caps.OK) != seal_of(MIRRORED) + page_of(MIRRORED):
        raise Failed("the mirrored key changed on A")
    if get_until(conn_a, [REWRITTEN], caps.OK) != seal_of(REWRITTEN) + page_of(REWRITTEN):
        raise Failed("the key refused after its write on B changed on A")
    # a while for a PEER_FREE that should not come
    time.sleep(1)
    if get_until(conn_b, [MIRRORED], caps.OK) != B_SEAL + B_PAGE:
        raise Failed("the other copy on B was overwritten")
    get_until(conn_b, [REFUSED], caps.ERR_NOENT)
    # its PEER_FREE came with REFUSED's: the owner's write on B made the page the owner's
    if get_until(conn_b, [REWRITTEN], caps.OK, seconds=0) != B_SEAL + B_PAGE:
        raise Failed("B lost the page the owner wrote there while A moved it")
    get_until(conn_b, [FREED_IN_FLIGHT], caps.ERR_NOENT)
    get_until(conn_a, [FREED_IN_FLIGHT], caps.ERR_NOENT)
    print("asked=%d moved=%d taken=%d" % (asked, len(set(moved)), len(taken)))


def moved_then_closed(args, id_a, id_b, keys):
    """Stores keys on A, shrinks it, closes the connection at its MOVED; returns (conn_b, b_id, MOVED keys)."""
    with open(args.shrink, "w") as f:
        f.write("MemAvailable: 8388608 kB\n")
    conn_b = session(args.port_b, args, id_b, CAP_MOVED)
    conn_a = session(args.port_a, args, id_a, CAP_MOVED)
    b_id = conn_b.server_id()
    # A takes pages again once its next tick reads the memory back
    deadline = time.time() + 10
    while True:
        tag = conn_a.send(caps.PUT, len(keys), put_payload(keys, []))
        fields, _, _ = conn_a.recv()
        while fields[1] == CAPACITY:
            fields, _, _ = conn_a.recv()
        if fields[3] == tag and fields[6] == caps.OK:
            break
        if time.time() > deadline:
            raise Failed("A takes no pages again: status %d" % fields[6])
        time.sleep(0.2)
    with open(args.shrink, "w") as f:
        f.write("MemAvailable: 0 kB\n")
    first = None
    conn_a.sock.settimeout(20)
    while first is None:
        fields, payload, _ = conn_a.recv()
        mtype, tag, count = fields[1], fields[3], fields[4]
        if mtype == ASK_NAMESPACE:
            status, answer = (caps.OK, id_b) if payload == b_id else (caps.ERR_NOENT, b"")
            conn_a.sock.sendall(conn_a.answer(ASK_NAMESPACE, tag, status, 0, answer))
        elif mtype == MOVED:
            first = sorted(struct.unpack("<%dQ" % count, payload[32:]))
        elif mtype != CAPACITY:
            raise Failed("unexpected message type %#x from A" % mtype)
    # the reply is lost with the connection
    conn_a.sock.close()
    return conn_b, b_id, first


def lost(args):
    id_a, id_b = bytes.fromhex("%032x" % 0xa2), bytes.fromhex("%032x" % 0xb2)
    conn_b, b_id, first = moved_then_closed(args, id_a, id_b, LOST_KEYS)
    conn_a = session(args.port_a, args, id_a, CAP_MOVED)
    conn_a.sock.settimeout(20)
    while True:
        fields, payload, _ = conn_a.recv()
        mtype, tag, count = fields[1], fields[3], fields[4]
        if mtype == MOVED:
            break
        if mtype != CAPACITY:
            raise Failed("unexpected message type %#x from A, not MOVED again" % mtype)
    again = sorted(struct.unpack("<%dQ" % count, payload[32:]))
    if payload[:16] != b_id or payload[16:32] != id_b or again != first:
        raise Failed("MOVED sent again names other keys or another place: %s, first %s" %
                     (again, first))
    conn_a.sock.sendall(conn_a.answer(MOVED, tag, caps.OK, 1, keys_bytes([LOST_REFUSED])))
    taken = [k for k in again if k != LOST_REFUSED]
    for k in taken:
        if get_until(conn_b, [k], caps.OK) != seal_of(k) + page_of(k):
            raise Failed("B gives back another seal or page for key %d" % k)
        get_until(conn_a, [k], caps.ERR_NOENT)
    if get_until(conn_a, [LOST_REFUSED], caps.OK) != seal_of(LOST_REFUSED) + page_of(LOST_REFUSED):
        raise Failed("the refused key changed on A")
    get_until(conn_b, [LOST_REFUSED], caps.ERR_NOENT)
    print("lost: moved=%d again=%d" % (len(first), len(again)))


def gone(args):
    id_a, id_b = bytes.fromhex("%032x" % 0xa3), bytes.fromhex("%032x" % 0xb3)
    conn_b, _, first = moved_then_closed(args, id_a, id_b, GONE_KEYS)
    time.sleep(args.wait)
    for k in first:
        if get_until(conn_b, [k], caps.OK) != seal_of(k) + page_of(k):
            raise Failed("B gives back another seal or page for key %d" % k)
    print("gone: moved=%d kept=%d" % (len(first), len(first)))


def peer(args):
    args.client = ".peer"
    try:
        conn = MovedConn(args, CAP_PEER | CAP_MOVED, os.urandom(16))
    except Failed as e:
        if "AUTH refused with status 4" in str(e):
            print("peer=refused")
            return
        raise
    print("peer=ok")
    conn.send(caps.PUT, 1, put_payload([1], []))
    expect_closed(conn, "PUT in a peer session")
    print("put-in-peer=closed")


def client_peer_put(args):
    conn = session(args.port, args, bytes.fromhex("%032x" % 0xc1), CAP_MOVED)
    where = args.client.encode().ljust(32, b"\0") + bytes(16)
    conn.send(PEER_PUT, 1, where + put_payload([1], []))
    expect_closed(conn, "PEER_PUT in a client session")
    print("client-peer-put=closed")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("move", "lost", "gone", "peer", "client-peer-put"))
    parser.add_argument("ports", type=int, nargs="+")
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--client", default="default")
    parser.add_argument("--shrink")
    parser.add_argument("--wait", type=float, default=0)
    args = parser.parse_args()
    args.key = open(args.key_file, "rb").read()
    try:
        if args.what in ("move", "lost", "gone"):
            args.port_a, args.port_b = args.ports
            {"move": move, "lost": lost, "gone": gone}[args.what](args)
        else:
            args.port = args.ports[0]
            (peer if args.what == "peer" else client_peer_put)(args)
    except (Failed, OSError) as e:
        print("33-peer-client.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
