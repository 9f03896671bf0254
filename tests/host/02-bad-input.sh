#!/bin/bash
# Hostile and broken input: each case closes that connection only (with a
# warning naming the peer and the reason), and afterwards the same server
# still serves a well-behaved client.
source "$(dirname "$0")/lib.sh"

make_key k
make_key wrong
# 20 garbage connections at once, below: none closed for a newer one
start_server s --key-file "$WORK/k.key" --max-unauth-per-address 32
GOOD=(--key-file "$WORK/k.key" --client-id 600d)
probe_ok s "${GOOD[@]}" put 0-63 >/dev/null

# still_serving CASE: the server lives and a good client can PUT and GET
still_serving() {
	server_alive s
	probe_ok s "${GOOD[@]}" --seed 5 put 100 >/dev/null || fail "$1: PUT afterwards"
	probe_ok s "${GOOD[@]}" --seed 5 get 100 >/dev/null || fail "$1: GET afterwards"
	probe_ok s "${GOOD[@]}" get 0-63 >/dev/null || fail "$1: earlier pages afterwards"
}

# Warnings about peers are rate-limited (a burst of 10, then one every
# 0.2 s, and a tick may take one for "N suppressed"): a case that looks
# for its warning waits for room first.
peer_log_room() {
	sleep 0.5
}

# closed_with CASE HANDSHAKE FILE REASON: sending FILE after the handshake
# (full, hello or none) gets the connection closed, with REASON logged
closed_with() {
	local name=$1 handshake=$2 file=$3 reason=$4 out
	peer_log_room
	out=$(probe s --key-file "$WORK/k.key" --handshake "$handshake" --timeout 5 \
		--expect closed raw "$file" 2>&1) || fail "$name: connection not closed: $out"
	assert_log s "warn: peer 127\.0\.0\.1:[0-9]+: $reason, closing" "$name: no warning '$reason'"
	still_serving "$name"
	log "$name: closed ($reason)"
}

# wrong key: AUTH refused with status AUTH, then closed
probe_ok s --key-file "$WORK/wrong.key" --client-id 600d --expect auth hello >/dev/null
assert_log s "authentication failed for client default \(namespace $(client_id 600d)\): wrong key"
assert_eq "$(stat_field s auth_failures)" 1 "auth failures"
# the refused client got nothing of the namespace
still_serving "wrong key"
log "wrong key: refused"

head -c 100 /dev/urandom | tr '\000-\377' 'G' >"$WORK/garbage"
closed_with garbage none "$WORK/garbage" "bad magic"

{ header $MSG_PUT 1 $PUT_ITEM_SIZE; head -c 100 /dev/zero; } >"$WORK/truncated"
probe s --key-file "$WORK/k.key" raw-close "$WORK/truncated" >/dev/null || fail "truncated: probe"
sleep 0.2
still_serving "truncated message"
log "truncated message, then close: server fine"

header $MSG_PUT 1 0xffffffff >"$WORK/huge"
closed_with "huge length" full "$WORK/huge" "length over limit"

{ header $MSG_GET 65 520; head -c 520 /dev/zero; } >"$WORK/count"
closed_with "count over limit" full "$WORK/count" "count over limit"

{ header $MSG_FREE 1025 8200; head -c 8200 /dev/zero; } >"$WORK/free-count"
closed_with "FREE count over limit" full "$WORK/free-count" "count over limit"

{ header $MSG_GET 0 0; } >"$WORK/count0"
closed_with "count zero" full "$WORK/count0" "count zero"

{ header $MSG_GET 2 24; le 1 8; le 2 8; le 3 8; } >"$WORK/length"
closed_with "length mismatch" full "$WORK/length" "length does not match type and count"

# a PUT framed as in version 3: the key and the page, no seal
{ header $MSG_PUT 1 $((8 + 4096)); le 1 8; head -c 4096 /dev/zero; } >"$WORK/put-v3"
closed_with "PUT without a seal" full "$WORK/put-v3" "length does not match type and count"

{ header $MSG_GET 1 8; le $((1 << KEY_LIMIT_SHIFT)) 8; } >"$WORK/key"
closed_with "key over KEY_LIMIT" full "$WORK/key" "page key over limit"

{ header $MSG_GET 1 8; le 1 8; } >"$WORK/get1"
closed_with "GET before HELLO" none "$WORK/get1" "GET before authentication"
closed_with "GET before AUTH" hello "$WORK/get1" "GET before authentication"

# a well-formed HELLO (client name "x"), but too late
{ header $MSG_HELLO 0 96; head -c 64 /dev/zero; printf x; head -c 31 /dev/zero; } >"$WORK/hello"
closed_with "HELLO after AUTH" full "$WORK/hello" "HELLO after authentication"

header 99 0 0 >"$WORK/type"
closed_with "unknown type" full "$WORK/type" "unknown message type"

header $MSG_CAPACITY 0 0 >"$WORK/capacity"
closed_with "CAPACITY from a client" full "$WORK/capacity" "message type clients do not send"

{ header $((MSG_GET | MSG_REPLY)) 1 8; le 1 8; } >"$WORK/get-reply"
closed_with "GET reply from a client" full "$WORK/get-reply" "message type clients do not send"

{ header $MSG_GET 1 8 1; le 1 8; } >"$WORK/flags"
closed_with "flags set" full "$WORK/flags" "flags set"

{ header $MSG_GET 1 8 0 3; le 1 8; } >"$WORK/status"
closed_with "status set" full "$WORK/status" "status set in request"

header $((MSG_EVICT | MSG_REPLY)) 0 0 0 0 0x4c32574e 77 >"$WORK/evict-reply"
closed_with "EVICT reply never asked" full "$WORK/evict-reply" "EVICT reply with a tag not asked"

peer_log_room
# clients of versions 2 (the HMAC-SHA256 session MAC), 3 (pages without
# seals) and 4 (proofs without the handshake transcript), and ones too
# new; version 5 alone is enough
for versions in 2-4 6-7; do
	probe_ok s --key-file "$WORK/k.key" --versions $versions --expect version hello >/dev/null
done
probe_ok s --key-file "$WORK/k.key" --versions 5-5 hello >/dev/null
assert_log s "no common protocol version"
still_serving "no common version"
log "no common version: refused"

# many connections at once, each sending a piece of garbage
for i in $(seq 1 20); do
	probe s --handshake none --timeout 5 --expect closed raw "$WORK/garbage" >/dev/null 2>&1 &
done
errors_counted() {
	(($(stat_field s protocol_errors) >= $1))
}
wait_until 10 errors_counted 35 || fail "protocol errors not counted: $(stat_field s protocol_errors)"
still_serving "20 garbage connections"

# before authentication, a message longer than a handshake closes at once
closed_with "PUT before HELLO" none "$WORK/truncated" "message too long before authentication"

# a connection that never authenticates is closed after 10 s
peer_log_room
header $MSG_HELLO 0 96 >"$WORK/hello-header"
probe s --handshake none --timeout 15 --expect closed raw "$WORK/hello-header" >/dev/null 2>&1 ||
	fail "idle unauthenticated connection not closed"
assert_log s "not authenticated after 10 s, closing"
stop_server s
echo "ok"
