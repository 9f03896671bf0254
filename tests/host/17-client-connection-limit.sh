#!/bin/bash
# One client cannot take every connection: a key holder (under --clients)
# that opens more connections than --max-connections-per-client (by default
# a quarter of --max-connections: 8 of 32 here) and keeps them with
# heartbeats gets the rest closed after its AUTH, counted and logged at a
# limited rate; another client connects and is served meanwhile.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
mkdir "$WORK/clients"
for c in alice bob; do head -c 32 /dev/urandom >"$WORK/clients/$c"; done
start_server s --clients "$WORK/clients" --max-connections 32
BOB=(--client bob --key-file "$WORK/clients/bob" --client-id b0b)

"$ATTACK" "${SERVER_PORT[s]}" flood 40 --client alice --key-file "$WORK/clients/alice" \
	--heartbeat 0.5 --hold 4 >"$WORK/alice" 2>&1 &
ALICE_PID=$!
connected() {
	(($(stat_field s connections) >= 8))
}
wait_until 10 connected || fail "alice's flood did not arrive"
sleep 1		# the other 32 come in well under a second
probe_ok s "${BOB[@]}" --timeout 3 put 0-63 >/dev/null || fail "bob not served during alice's flood"
probe_ok s "${BOB[@]}" get 0-63 >/dev/null
assert_eq "$(stat_field s connections)" 8 "connections open during alice's flood"
assert_eq "$(stat_field s client_connections_refused)" 32 "alice's connections refused"
log "alice holds 8 connections, 32 refused; bob served"

wait "$ALICE_PID" || fail "alice's flood: $(cat "$WORK/alice")"
grep -q "^open=8 closed=32 " "$WORK/alice" || fail "alice's connections at the end: $(cat "$WORK/alice")"
assert_eq "$(stat_field s max_connections_per_client)" 8 "the default per-client limit"

# the refusals are warnings about peers: rate-limited, the rest counted
refusal_lines() {
	grep -c "client alice already has 8 connections (--max-connections-per-client), closing" \
		"$WORK/s.log" || true
}
suppressed() {
	awk '/warn: [0-9]+ log lines about peers suppressed/ { n += $2 } END { print n + 0 }' \
		"$WORK/s.log"
}
all_told() {
	(($(refusal_lines) + $(suppressed) == 32))
}
wait_until 3 all_told || fail "refusal lines ($(refusal_lines)) and suppressed ($(suppressed)) are not 32"
(($(refusal_lines) <= 10 + 4 * 5)) || fail "$(refusal_lines) refusal lines in about 4 s"
log "refusals: $(refusal_lines) lines, $(suppressed) suppressed"

# alice's limit counts her open connections: once they are gone she gets in again
probe_ok s --client alice --key-file "$WORK/clients/alice" put 1 >/dev/null
server_alive s
stop_server s
echo "ok"
