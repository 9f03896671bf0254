#!/bin/bash
# A client's COPY (nswap2l_proto.h, "Copy"): two nswapd, A and B, each the
# other's --peer under one --peer-key, and a client with NSWAP2L_CAP_MOVED
# and NSWAP2L_CAP_COPY in a namespace on each.  It stores 100 pages on A
# (and one of their keys on B itself first) and asks A to copy 99 of them
# to B, with a key A does not hold and the one B holds, in another order:
# the reply names exactly the 98 keys B stored, B gives them back with A's
# seals and pages and the one it held as it was, A still gives back all of
# them, and A's pages_copied_out counts the 98.  A COPY to a server A has
# no peer with gets NOENT; three COPYs of 256 pages at once: the third
# NOSPC at once (A sends a peer at most 512 pages at a time), the second
# NOENT (B held them all after the first).  A client that closes its connection right
# after its COPY, before B answered A (B stopped meanwhile), never learns of
# the copies: A frees them on B (B's namespace holds none of them again).  Malformed COPYs (no key, one too
# many, a length not the count's, without NSWAP2L_CAP_COPY, in a peer
# session) close their connection, and another client's goes on.
source "$(dirname "$0")/lib.sh"

COPY_CLIENT=("$REPO_DIR/tests/host/36-peer-copy-client.py")

mkdir "$WORK/clients"
head -c 32 /dev/urandom >"$WORK/clients/alice"
make_key peer
# two free ports, so that each server can name the other
read -r PORT_A PORT_B < <(free_ports 2)
start_server b --clients "$WORK/clients" --peer-key "$WORK/peer.key" \
	--listen "127.0.0.1:$PORT_B" --peer "127.0.0.1:$PORT_A"
start_server a --clients "$WORK/clients" --peer-key "$WORK/peer.key" \
	--listen "127.0.0.1:$PORT_A" --peer "127.0.0.1:$PORT_B"

peers_connected() {
	[[ $(stats a --json | json_query "d['peers'][0]['connected']") == 1 &&
		$(stats b --json | json_query "d['peers'][0]['connected']") == 1 ]]
}
wait_until 10 peers_connected || fail "the peers did not connect: $(stats a --json)"
C=(--key-file "$WORK/clients/alice" --client alice)

# a copy: the keys B stored, as A had them
out=$(python3 "${COPY_CLIENT[@]}" copy "$PORT_A" "$PORT_B" "${C[@]}" 2>&1) || fail "copy: $out"
log "$out"
assert_eq "$out" "copied=98" "keys the COPY reply names"
assert_eq "$(stat_field a pages_copied_out)" 98 "pages A copied out"
assert_eq "$(stat_field a pages_migrated_out)" 0 "pages A migrated out (a copy is no move)"
assert_eq "$(stat_field a migrate_pending)" 0 "A's pages moving"
assert_eq "$(ns_field a "$(client_id a1)" pages)" 100 "pages A holds still"
assert_eq "$(ns_field b "$(client_id b1)" pages)" 99 "pages of the namespace on B: the 98 copies and its own"
assert_eq "$(stat_field b pages_migrated_in)" 98 "pages B took from A"
assert_log a "1 keys of client alice held there already, not copied"
stats a | grep -q "copies: *98 pages copied to peers" || fail "--stats does not show the copies: $(stats a)"

# more than A sends a peer at once: NOSPC, the client copies them itself
out=$(python3 "${COPY_CLIENT[@]}" nospc "$PORT_A" "$PORT_B" "${C[@]}" 2>&1) || fail "nospc: $out"
assert_eq "$out" "nospc: first=256 second=noent third=nospc" "three COPYs at once"
assert_eq "$(stat_field a pages_copied_out)" 354 "pages A copied out (98 before)"
assert_eq "$(ns_field b "$(client_id b5)" pages)" 256 "pages of B's namespace b5"

# the client leaves before the reply: what B stored is freed there
migrated_in=$(stat_field b pages_migrated_in)
freed=$(stat_field b keys_freed)
# B stopped until A has seen the close: a reply A sent before it would be
# the client's to lose, not A's to undo
out=$(python3 "${COPY_CLIENT[@]}" closed "$PORT_A" "$PORT_B" "${C[@]}" \
	--stop-pid "${SERVER_PID[b]}" 2>&1) || fail "copy closed: $out"
a2_closed() {
	local connections
	connections=$(ns_field a "$(client_id a2)" connections)
	[[ $connections == 0 || $connections == none ]]
}
wait_until 10 a2_closed || fail "A did not see namespace a2's connection close"
kill -CONT "${SERVER_PID[b]}"
b_took_and_freed() {
	(($(stat_field b pages_migrated_in) == migrated_in + 256 &&
		$(stat_field b keys_freed) == freed + 256))
}
wait_until 10 b_took_and_freed ||
	fail "B did not take and free the 256 copies: $(stat_field b pages_migrated_in) taken ($migrated_in before), $(stat_field b keys_freed) freed ($freed before)"
b2=$(ns_field b "$(client_id b2)" pages)
[[ $b2 == 0 || $b2 == none ]] || fail "B's namespace b2 holds $b2 pages"
assert_eq "$(stat_field a pages_copied_out)" 354 "pages A copied out (354 before; none named)"
assert_eq "$(ns_field a "$(client_id a2)" pages)" 256 "pages A holds of the closed namespace"
assert_log a "connection closed before its COPY reply; 256 pages copied to peer 127.0.0.1:$PORT_B freed there"

# malformed COPYs close their connection only
for case in count0 too-many length no-cap peer; do
	out=$(python3 "${COPY_CLIENT[@]}" malformed "$PORT_A" "$case" "${C[@]}" \
		--peer-key-file "$WORK/peer.key" 2>&1) || fail "malformed $case: $out"
	assert_eq "$out" "closed=invalid other=ok" "malformed COPY $case"
done
assert_log a "count zero"
assert_log a "count over limit"
assert_log a "length does not match type and count"
assert_log a "COPY without NSWAP2L_CAP_COPY"
assert_log a "client message in a peer session"
assert_eq "$(stat_field a pages_copied_out)" 354 "pages A copied out after the malformed COPYs"

server_alive a
server_alive b
stop_server a
stop_server b
