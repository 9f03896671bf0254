#!/bin/bash
# Descriptor exhaustion: nswapd under "ulimit -n 64" caps its connections
# below the limit and, flooded with connections from many addresses, stays
# alive, serves a legitimate client during and after the flood and logs a
# few lines, not one per connection or per try.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
REAL_NSWAPD=$NSWAPD
NSWAPD=$WORK/nswapd-64-files
printf '#!/bin/bash\nulimit -n 64\nexec "%s" "$@"\n' "$REAL_NSWAPD" >"$NSWAPD"
chmod +x "$NSWAPD"
make_key k
# one client may hold every connection: the descriptors are under test
start_server s --key-file "$WORK/k.key" --max-connections-per-client 1000
GOOD=(--key-file "$WORK/k.key" --client-id 600d)

# unauthenticated ones from 50 addresses, then authenticated ones
"$ATTACK" "${SERVER_PORT[s]}" flood 300 --source 127.0.2.{1..50} --handshake hello --hold 4 \
	>"$WORK/unauth" 2>&1 &
UNAUTH_PID=$!
sleep 2
probe_ok s "${GOOD[@]}" put 0-63 >/dev/null
log "legitimate client served during a flood of 300"
"$ATTACK" "${SERVER_PORT[s]}" flood 100 --key-file "$WORK/k.key" --hold 3 >"$WORK/authed" 2>&1
wait "$UNAUTH_PID"
log "unauthenticated: $(cat "$WORK/unauth"); authenticated: $(cat "$WORK/authed")"
server_alive s

probe_ok s "${GOOD[@]}" get 0-63 >/dev/null
probe_ok s "${GOOD[@]}" --seed 2 put 0-63 >/dev/null
probe_ok s "${GOOD[@]}" --seed 2 get 0-63 >/dev/null
log "legitimate client served after the flood"
lines=$(wc -l <"$WORK/s.log")
authenticated=$(grep -Ec "authenticated|info: [0-9]+ log lines about peers suppressed" "$WORK/s.log")
((lines - authenticated <= 12)) || fail "log of $lines lines ($authenticated of authentications)"
log "log: $lines lines, $authenticated of them (rate-limited) authentications"
stop_server s
echo "ok"
