#!/bin/bash
# Server-to-server migration (nswap2l_proto.h, "Migration"): two nswapd,
# each the other's --peer under one --peer-key.  A client with
# NSWAP2L_CAP_MOVED stores 100 pages on A; A's memory goes (its
# --memavailable-file says 0): A asks the client its namespace on B, puts
# the pages there as stored, and MOVEs them; the client refuses one and
# frees another while it moves; one it stored on B too (a mirror's other
# copy) is left there as it was, named back by B's PEER_PUT reply, and is
# neither MOVED nor freed on B; one it writes on B itself while it is moved
# (a mirror's new copy) and refuses stays there as it wrote it: A's
# PEER_FREE takes back only what the client did not write since.  B then gives back every page taken with
# its seal, A holds none of them, the refused one stays on A, and the
# freed and refused ones are freed on B; a client without CAP_MOVED is
# asked for its pages back (EVICT) meanwhile.  A MOVED whose connection
# closes unanswered is sent again when the owner connects again, and its
# answer settled as the first would have been; if the owner does not come
# back within A's --grace, the pages stay on B (the owner may have taken
# them: freeing them there could lose them).  A wrong peer key is
# refused, whether a server or a script gives it; a PEER_PUT in a client
# session and a PUT in a peer session close them.
source "$(dirname "$0")/lib.sh"

PEER_CLIENT=("$REPO_DIR/tests/host/33-peer-client.py")

mkdir "$WORK/clients"
head -c 32 /dev/urandom >"$WORK/clients/alice"
make_key peer
make_key wrong
# two free ports, so that each server can name the other
read -r PORT_A PORT_B < <(free_ports 2)
echo "MemAvailable: 8388608 kB" >"$WORK/mem"
start_server b --clients "$WORK/clients" --peer-key "$WORK/peer.key" \
	--listen "127.0.0.1:$PORT_B" --peer "127.0.0.1:$PORT_A"
start_server a --clients "$WORK/clients" --peer-key "$WORK/peer.key" \
	--listen "127.0.0.1:$PORT_A" --peer "127.0.0.1:$PORT_B" --memavailable-file "$WORK/mem" \
	--grace 15

# peer_field NAME FIELD: of the server's only peer
peer_field() {
	stats "$1" --json | json_query "d['peers'][0]['$2']"
}
peers_connected() {
	[[ $(peer_field a connected) == 1 && $(peer_field b connected) == 1 ]]
}
# C has another peer key: B refuses it, C says so and keeps trying
start_server c --clients "$WORK/clients" --peer-key "$WORK/wrong.key" --peer "127.0.0.1:$PORT_B"
wait_until 10 peers_connected || fail "the peers did not connect: $(stats a --json)"
c_refused() {
	grep -q "peer 127.0.0.1:$PORT_B: refused our peer key" "$WORK/c.log"
}
wait_until 10 c_refused ||
	fail "C does not say that B refused its peer key"
assert_eq "$(peer_field c connected)" 0 "C connected to B with a wrong peer key"
(($(peer_field a free_pages) > 100)) || fail "A does not know B's room: $(peer_field a free_pages)"
log "A and B connected to each other, B can take $(peer_field a free_pages) pages"

# a client of A that does not take MOVED: its pages go back through EVICT
P=(--key-file "$WORK/clients/alice" --client alice --client-id e1)
probe_ok a "${P[@]}" put 0-19 >/dev/null
probe a "${P[@]}" --verify --duration 8 serve-evict >"$WORK/evict.out" 2>&1 &
evict_pid=$!
wait_until 10 ns_connected a "$(client_id e1)" || fail "serve-evict did not connect"
out=$(python3 "${PEER_CLIENT[@]}" move "$PORT_A" "$PORT_B" --key-file "$WORK/clients/alice" \
	--client alice --shrink "$WORK/mem" 2>&1) || fail "migration: $out"
log "$out"
wait "$evict_pid" || fail "serve-evict: $(tail -n 3 "$WORK/evict.out")"
grep -Eq "serve-evict: [0-9]+ EVICT messages, 20 keys freed" "$WORK/evict.out" || fail "the client without CAP_MOVED was not asked its pages back: $(tail -n 3 "$WORK/evict.out")"
assert_eq "$out" "asked=1 moved=98 taken=96" "what the owner was asked and took"
assert_eq "$(stat_field a pages_migrated_out)" 96 "pages migrated out of A"
# the refused key goes again in A's next move, refused again: then EVICT;
# the one written on B is held there then, not moved
assert_eq "$(stat_field a moves_refused)" 3 "keys A's owner refused (one of them twice)"
assert_eq "$(stat_field b pages_migrated_in)" 100 "pages B took from A (the freed one too, the refused one twice, not the mirrored one)"
assert_eq "$(stat_field a held_pages)" 3 "pages A holds: the refused ones and the mirrored one"
assert_eq "$(ns_field b "$(client_id b1)" pages)" 98 "pages of the namespace on B: the taken ones and the two the owner wrote there"
assert_log a "moving 100 pages to peer 127.0.0.1:$PORT_B"
assert_log a "1 keys of client alice held there already, not moved"

# a MOVED reply lost with its connection: sent again on the next one
out=$(python3 "${PEER_CLIENT[@]}" lost "$PORT_A" "$PORT_B" --key-file "$WORK/clients/alice" \
	--client alice --shrink "$WORK/mem" 2>&1) || fail "lost MOVED reply: $out"
log "$out"
assert_eq "$out" "lost: moved=32 again=32" "the MOVED sent again"
assert_eq "$(stat_field a pages_migrated_out)" 127 "pages migrated out of A (96 before)"
assert_eq "$(ns_field b "$(client_id b2)" pages)" 31 "pages of the second namespace on B"
assert_log a "MOVED of 32 pages sent again"

# a MOVED reply lost with an owner that does not come back: the pages stay on B
out=$(python3 "${PEER_CLIENT[@]}" gone "$PORT_A" "$PORT_B" --key-file "$WORK/clients/alice" \
	--client alice --shrink "$WORK/mem" --wait 18 2>&1) || fail "owner gone: $out"
log "$out"
assert_eq "$out" "gone: moved=16 kept=16" "pages kept on B"
assert_log a "namespace $(client_id a3) of client alice: gone before its MOVED was answered; 16 pages left on peer"

# the peer key is checked, and a session is a peer's or a client's, not both
out=$(python3 "${PEER_CLIENT[@]}" peer "$PORT_B" --key-file "$WORK/wrong.key" 2>&1) ||
	fail "wrong peer key: $out"
assert_eq "$out" "peer=refused" "a wrong peer key"
assert_log b "peer server .* refused: wrong peer key" "B does not log the wrong peer key"
out=$(python3 "${PEER_CLIENT[@]}" peer "$PORT_B" --key-file "$WORK/peer.key" 2>&1) ||
	fail "peer session: $out"
assert_eq "$out" $'peer=ok\nput-in-peer=closed' "a PUT in a peer session"
out=$(python3 "${PEER_CLIENT[@]}" client-peer-put "$PORT_B" --key-file "$WORK/clients/alice" \
	--client alice 2>&1) || fail "PEER_PUT from a client: $out"
assert_eq "$out" "client-peer-put=closed" "a PEER_PUT in a client session"
assert_log b "peer message in a client session"
assert_log b "client message in a peer session"

server_alive a
server_alive b
server_alive c
stop_server a
stop_server b
stop_server c
