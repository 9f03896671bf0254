#!/bin/bash
# Authenticated connections that fill --max-connections and then send
# nothing lock legitimate clients out until --idle-timeout closes them (a
# log line each, as far as the rate limit of peer warnings lets them
# through, the others counted); connections that send the heartbeat stay.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
make_key k
start_server s --key-file "$WORK/k.key" --max-connections 32 --idle-timeout 2 \
	--max-connections-per-client 32
GOOD=(--key-file "$WORK/k.key" --client-id 600d)

connections() {
	(($(stat_field s connections) == $1))
}

"$ATTACK" "${SERVER_PORT[s]}" flood 28 --key-file "$WORK/k.key" --hold 6 >"$WORK/idle" 2>&1 &
IDLE_PID=$!
"$ATTACK" "${SERVER_PORT[s]}" flood 4 --key-file "$WORK/k.key" --source 127.0.0.3 \
	--heartbeat 0.5 --hold 6 >"$WORK/beating" 2>&1 &
BEATING_PID=$!
wait_until 5 connections 32 || fail "the flood did not fill the cap: $(stat_field s connections)"
probe s "${GOOD[@]}" --timeout 2 hello >/dev/null 2>&1 && fail "served over the cap"
log "32 authenticated connections: a legitimate client is refused"

wait_until 5 connections 4 || fail "idle connections not closed: $(stat_field s connections) left"
probe_ok s "${GOOD[@]}" put 0-63 >/dev/null
probe_ok s "${GOOD[@]}" get 0-63 >/dev/null
log "idle ones closed after 2 s, the 4 with a heartbeat kept; legitimate client served"

wait "$IDLE_PID" "$BEATING_PID"
assert_eq "$(cat "$WORK/idle")" "open=0 closed=28 closed_first=28" "idle flood"
assert_eq "$(cat "$WORK/beating")" "open=4 closed=0 closed_first=0" "connections with a heartbeat"
idle_lines() {
	grep -c "nothing received for [0-9]* s, closing" "$WORK/s.log" || true
}
suppressed() {
	awk '/warn: [0-9]+ log lines about peers suppressed/ { n += $2 } END { print n + 0 }' \
		"$WORK/s.log"
}
all_told() {
	(($(idle_lines) + $(suppressed) == 28))
}
wait_until 3 all_told || fail "idle lines ($(idle_lines)) and suppressed ($(suppressed)) are not 28"
log "idle connections: $(idle_lines) lines, $(suppressed) suppressed"
server_alive s
lines=$(wc -l <"$WORK/s.log")
((lines <= 80)) || fail "log of $lines lines"
log "log: $lines lines"
stop_server s
echo "ok"
