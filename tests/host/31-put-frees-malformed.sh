#!/bin/bash
# Malformed keys to free in a PUT: a length that leaves part of a key, more
# than NSWAP2L_PROTO_MAX_PUT_FREES keys, a key to free that is one of the
# PUT's own, keys to free without NSWAP2L_CAP_PUT_FREES.  Each gets an
# INVALID reply and closes that connection only, nothing of it freed or
# stored; another connection of the client goes on, and the daemon serves.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key"
CAPS=("$REPO_DIR/tests/host/caps.py" "${SERVER_PORT[s]}" --key-file "$WORK/k.key")

n=0
for case in partial too-many own-key no-cap; do
	n=$((n + 1))
	out=$(python3 "${CAPS[@]}" --client-id "$((n * 10))" malformed "$case" 2>&1) ||
		fail "$case: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	assert_eq "$out" "closed=invalid other=ok" "$case"
	assert_eq "$(stat_field s protocol_errors)" "$n" "$case: protocol errors counted"
	# the good connection's PUT of 50-51 and GET; the bad PUT neither freed 50 nor stored
	assert_eq "$(stat_field s keys_freed)" 0 "$case: keys freed"
	assert_eq "$(stat_field s held_pages)" $((2 * n)) "$case: pages held"
	assert_eq "$(stat_field s requests_put)" "$n" "$case: malformed PUTs are not counted"
	server_alive s
	log "$case: INVALID, that connection closed, the other served"
done
assert_log s "too many keys to free in PUT"
assert_log s "PUT frees one of its own keys"
assert_log s "length does not match type and count"
stop_server s
