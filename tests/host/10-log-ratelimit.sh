#!/bin/bash
# A peer cannot flood the log: 200 connections with a wrong key make a
# burst of 10 warnings, then at most one every 0.2 s, and a line that says
# how many were suppressed (the warnings and the suppressed counts add up
# to 200); the server still serves a client with the right key.
source "$(dirname "$0")/lib.sh"

BURST=10 INTERVAL_MS=200 ATTACKS=200

make_key k
make_key wrong
start_server s --key-file "$WORK/k.key" --max-unauth-per-address 256
probe_ok s --key-file "$WORK/k.key" --client-id 10 put 0-63 >/dev/null

auth_warnings() {
	grep -c "warn: peer 127\.0\.0\.1:[0-9]*: authentication failed" "$WORK/s.log" || true
}

suppressed_total() {
	awk '/warn: [0-9]+ log lines about peers suppressed/ { n += $2 } END { print n + 0 }' \
		"$WORK/s.log"
}

accounted_for() {
	(($(auth_warnings) + $(suppressed_total) == ATTACKS))
}

start=$(date +%s%N)
for ((batch = 0; batch < ATTACKS / 20; batch++)); do
	pids=()
	for ((i = 0; i < 20; i++)); do
		probe s --key-file "$WORK/wrong.key" --client-id bad --expect auth hello \
			>/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
done
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$(stat_field s auth_failures)" $ATTACKS "auth failures counted"

warnings=$(auth_warnings)
bound=$((BURST + elapsed_ms / INTERVAL_MS + 1))
log "$ATTACKS wrong keys in $elapsed_ms ms: $warnings warnings logged (at most $bound)"
((warnings <= bound)) || fail "$warnings warnings for $ATTACKS wrong keys in $elapsed_ms ms"
# the next tick with room says how many were dropped
wait_until 3 accounted_for ||
	fail "warnings ($(auth_warnings)) and suppressed ($(suppressed_total)) are not $ATTACKS"
assert_log s "warn: [0-9]+ log lines about peers suppressed"
log "suppressed: $(suppressed_total) lines, in $(grep -c 'peers suppressed' "$WORK/s.log") line(s)"

probe_ok s --key-file "$WORK/k.key" --client-id 10 get 0-63 >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id 10 put 64-127 >/dev/null
stop_server s
echo "ok"
