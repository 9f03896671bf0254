#!/bin/bash
# RELEASE (nswap2l_proto.h, NSWAP2L_CAP_RELEASE): a client whose device
# goes has its namespace's pages freed now, not a grace period (60 s here)
# after it left.  Bob stores 50 pages and leaves (his namespace lives out
# the grace period); alice stores 100 and RELEASEs: OK, the server closes
# the connection, and at once her namespace is gone, held_pages is back to
# bob's 50, keys_freed and namespaces_released count it.  Two connections
# in one namespace: one RELEASEs, the other finds its pages gone too, goes
# on, and the namespace ends with it.  A RELEASE behind GET replies the
# client has not read: they all come, then the OK, then the close.
# Malformed RELEASEs (a count, a payload, without the capability, in a
# peer session) close their connection only: bob's pages are all there.
source "$(dirname "$0")/lib.sh"

RELEASE_CLIENT=("$REPO_DIR/tests/host/38-release-client.py")

mkdir "$WORK/clients"
head -c 32 /dev/urandom >"$WORK/clients/alice"
head -c 32 /dev/urandom >"$WORK/clients/bob"
make_key peer
start_server a --clients "$WORK/clients" --peer-key "$WORK/peer.key" --grace 60
A=${SERVER_PORT[a]}
ALICE=(--key-file "$WORK/clients/alice" --client alice)

# bob's namespace b0: 50 pages, kept for the grace period after he leaves
out=$(python3 "$REPO_DIR/tests/host/caps.py" "$A" --key-file "$WORK/clients/bob" --client bob \
	--client-id b0 put:1-50 2>&1) || fail "bob's PUT: $out"
assert_eq "$(stat_field a held_pages)" 50 "pages held after bob's PUT"

out=$(python3 "${RELEASE_CLIENT[@]}" release "$A" "${ALICE[@]}" --client-id a1 2>&1) ||
	fail "release: $out"
assert_eq "$out" "released" "alice's RELEASE"
# the client saw the close: the namespace is gone already, not in 60 s
assert_eq "$(ns_field a "$(client_id a1)" pages)" none "alice's namespace after RELEASE"
assert_eq "$(stat_field a held_pages)" 50 "pages held after the RELEASE (bob's)"
assert_eq "$(stat_field a keys_freed)" 100 "keys freed by the RELEASE"
assert_eq "$(stat_field a namespaces_released)" 1 "namespaces released"
assert_eq "$(ns_field a "$(client_id b0)" pages)" 50 "bob's namespace"
assert_log a "client alice: namespace $(client_id a1) released, 100 pages freed"
stats a | grep -q "released: *1 namespaces" || fail "--stats does not show the release: $(stats a)"

# two connections in one namespace: it ends with the last, no grace either
out=$(python3 "${RELEASE_CLIENT[@]}" shared "$A" "${ALICE[@]}" --client-id a2 2>&1) ||
	fail "shared: $out"
assert_eq "$out" "shared" "a RELEASE with another connection in the namespace"
a2_gone() {
	[[ $(ns_field a "$(client_id a2)" pages) == none ]]
}
wait_until 5 a2_gone || fail "namespace a2 outlived its last connection: $(stats a --json)"
assert_eq "$(stat_field a held_pages)" 50 "pages held after the shared namespace ended"
assert_eq "$(stat_field a keys_freed)" 115 "keys freed by both RELEASEs"
assert_eq "$(stat_field a namespaces_released)" 2 "namespaces released"
assert_log a "namespace $(client_id a2): released, its last connection closed"

# the OK comes after every reply queued before it, then the close
out=$(python3 "${RELEASE_CLIENT[@]}" backlog "$A" "${ALICE[@]}" --client-id a3 2>&1) ||
	fail "backlog: $out"
assert_eq "$out" "backlog=40" "a RELEASE behind GET replies not read yet"
assert_eq "$(ns_field a "$(client_id a3)" pages)" none "namespace a3 after RELEASE"
assert_eq "$(stat_field a namespaces_released)" 3 "namespaces released"

# malformed RELEASEs close their connection only
for case in count length no-cap peer; do
	out=$(python3 "${RELEASE_CLIENT[@]}" malformed "$A" "$case" --key-file "$WORK/clients/bob" \
		--client bob --client-id b0 --peer-key-file "$WORK/peer.key" 2>&1) ||
		fail "malformed $case: $out"
	assert_eq "$out" "closed=invalid other=ok" "malformed RELEASE $case"
done
assert_log a "count in a message without items"
assert_log a "length does not match type and count"
assert_log a "RELEASE without NSWAP2L_CAP_RELEASE"
assert_log a "client message in a peer session"
assert_eq "$(stat_field a namespaces_released)" 3 "namespaces released after the malformed ones"
assert_eq "$(ns_field a "$(client_id b0)" pages)" 50 "bob's namespace after the malformed RELEASEs"

server_alive a
stop_server a
