#!/bin/bash
# A key holder cannot flood the log: 250 connections that authenticate,
# each as a new namespace, and close make info lines ("authenticated",
# "namespace ... new") at the rate peer lines have (a burst of 10, then one
# every 0.2 s, the rest counted in "N log lines about peers suppressed");
# 30 connections that leave a message half sent, closed at the same tick
# by --message-timeout, make a burst of warnings, not one each.  Every
# event is still counted: the lines and the suppressed add up.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
BURST=10 INTERVAL_MS=200 CHURN=250 HALF=30
make_key k
start_server s --key-file "$WORK/k.key" --message-timeout 1

# suppressed LEVEL: the sum of the "suppressed" lines of that level
suppressed() {
	awk -v level="$1:" '$1 == level && /log lines about peers suppressed/ { n += $2 } END { print n + 0 }' \
		"$WORK/s.log"
}
count() {
	grep -c "$1" "$WORK/s.log" || true
}
info_lines() {
	echo $(($(count "authenticated") + $(count "of client default: new")))
}

start=$(date +%s%N)
"$ATTACK" "${SERVER_PORT[s]}" churn $CHURN --key-file "$WORK/k.key" --client-id 10000 \
	>"$WORK/churn" 2>&1 || fail "churn: $(cat "$WORK/churn")"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
grep -q "^authenticated=$CHURN refused=0 " "$WORK/churn" || fail "churn: $(cat "$WORK/churn")"
bound=$((BURST + elapsed_ms / INTERVAL_MS + 1))
log "$CHURN connections in $elapsed_ms ms: $(info_lines) info lines (at most $bound)"
(($(info_lines) <= bound)) || fail "$(info_lines) info lines for $CHURN connections in $elapsed_ms ms"
info_told() {
	(($(info_lines) + $(suppressed info) == 2 * CHURN))
}
wait_until 3 info_told ||
	fail "info lines ($(info_lines)) and suppressed ($(suppressed info)) are not $((2 * CHURN))"

"$ATTACK" "${SERVER_PORT[s]}" flood $HALF --key-file "$WORK/k.key" --half-header --hold 3 \
	>"$WORK/half" 2>&1 || fail "half-sent flood: $(cat "$WORK/half")"
assert_eq "$(cat "$WORK/half")" "open=0 closed=$HALF closed_first=$HALF" "half-sent messages"
timeouts() {
	count "message not complete after [0-9]* s, closing"
}
(($(timeouts) <= BURST + 1)) || fail "$(timeouts) warnings for $HALF half-sent messages"
warnings_told() {
	(($(timeouts) + $(suppressed warn) == HALF))
}
wait_until 3 warnings_told ||
	fail "timeout lines ($(timeouts)) and suppressed ($(suppressed warn)) are not $HALF"
log "$HALF half-sent messages: $(timeouts) warnings, $(suppressed warn) suppressed"
lines=$(wc -l <"$WORK/s.log")
((lines <= 60)) || fail "log of $lines lines"
probe_ok s --key-file "$WORK/k.key" --client-id 600d put 0-63 >/dev/null
stop_server s
echo "ok"
