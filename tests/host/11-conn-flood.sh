#!/bin/bash
# Connection floods: past --max-unauth-per-address from one address and past
# --max-connections from many, the oldest unauthenticated connections are
# closed for the new ones; with every connection authenticated a new one is
# refused and counted.  Meanwhile a legitimate client connects,
# authenticates, stores and reads back pages, and the log stays short.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
make_key k
# one client may hold every connection here: the caps on all of them are under test
start_server s --key-file "$WORK/k.key" --max-connections 32 --max-unauth-per-address 8 \
	--max-connections-per-client 32
GOOD=(--key-file "$WORK/k.key" --client-id 600d)

# attack FILE ARGS: runs attack.py against s in the background, output in FILE
attack() {
	local out=$1
	shift
	"$ATTACK" "${SERVER_PORT[s]}" "$@" >"$WORK/$out" 2>&1 &
}

served() {
	server_alive s
	probe_ok s "${GOOD[@]}" --seed "$1" put 0-63 >/dev/null || fail "$2: PUT"
	probe_ok s "${GOOD[@]}" --seed "$1" get 0-63 >/dev/null || fail "$2: GET"
}

# 20 unauthenticated connections from one address: the 12 oldest are closed
attack one-address flood 20 --source 127.0.0.2 --handshake hello --hold 3
ATTACK_PID=$!
sleep 1.5
served 1 "during a flood from one address"
wait "$ATTACK_PID"
assert_eq "$(cat "$WORK/one-address")" "open=8 closed=12 closed_first=12" "flood from one address"
log "one address: the 12 oldest of 20 closed; legitimate client served"

# 200 unauthenticated connections from 40 addresses: 32 fit, oldest closed first
attack many flood 200 --source 127.0.1.{1..40} --handshake none --hold 3
ATTACK_PID=$!
sleep 2
served 2 "during a flood from 40 addresses"
wait "$ATTACK_PID"
read -r open closed first <<<"$(sed 's/[a-z_]*=//g' "$WORK/many")"
((closed >= 168 && first == closed)) || fail "flood from 40 addresses: $(cat "$WORK/many")"
replaced=$(stat_field s connections_replaced)
((replaced >= 180)) || fail "connections replaced: $replaced"
log "40 addresses: $(cat "$WORK/many"), $replaced replaced; legitimate client served"

# 40 authenticated connections: 32 fit, the rest are refused and counted
attack authed flood 40 --key-file "$WORK/k.key" --handshake full --hold 3
ATTACK_PID=$!
at_cap() {
	(($(stat_field s connections) >= 32))
}
wait_until 10 at_cap || fail "authenticated flood did not arrive"
probe s "${GOOD[@]}" --timeout 2 hello >/dev/null 2>&1 && fail "a connection over the cap was served"
wait "$ATTACK_PID"
assert_eq "$(cat "$WORK/authed")" "open=32 closed=8 closed_first=0" "authenticated flood"
refused=$(stat_field s connections_refused)
((refused >= 9)) || fail "refusals not counted: $refused"
served 3 "after the authenticated flood"
log "authenticated: 32 held, 8 refused (then the legitimate one); served after"

wait_until 15 grep -q "connection limits reached: $refused refused" "$WORK/s.log" ||
	fail "refusals not logged: $(grep 'limits reached' "$WORK/s.log")"
lines=$(wc -l <"$WORK/s.log")
((lines <= 60)) || fail "log of $lines lines after the floods"
log "log: $lines lines"
stop_server s
echo "ok"
