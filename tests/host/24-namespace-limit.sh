#!/bin/bash
# Namespaces are bounded per client: a key holder (under --clients) that
# authenticates as 300 namespaces gets 256 (--max-namespaces-per-client,
# the default), the others are closed after their AUTH, counted and logged
# at a limited rate.  Its namespaces stay reachable, another client makes
# its own, and namespaces freed after the grace period make room again.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
mkdir "$WORK/clients"
for c in alice bob; do head -c 32 /dev/urandom >"$WORK/clients/$c"; done
start_server s --clients "$WORK/clients" --grace 3
ALICE=(--client alice --key-file "$WORK/clients/alice")

"$ATTACK" "${SERVER_PORT[s]}" churn 300 "${ALICE[@]}" --client-id 1 >"$WORK/churn" 2>&1 ||
	fail "churn: $(cat "$WORK/churn")"
log "alice: $(cat "$WORK/churn")"
grep -q "^authenticated=256 refused=44 " "$WORK/churn" || fail "alice's namespaces: $(cat "$WORK/churn")"
assert_eq "$(stat_field s namespaces)" 256 "namespaces held"
assert_eq "$(stat_field s client_namespaces_refused)" 44 "namespaces refused"
assert_log s "client alice already has 256 namespaces \(--max-namespaces-per-client\), no new one"
(($(grep -c "already has 256 namespaces" "$WORK/s.log") <= 11)) ||
	fail "$(grep -c "already has 256 namespaces" "$WORK/s.log") lines about refused namespaces"

# her namespaces are hers as before; bob is not held to her count
probe_ok s "${ALICE[@]}" --client-id 7 put 0-9 >/dev/null
probe_ok s "${ALICE[@]}" --client-id 7 get 0-9 >/dev/null
probe_ok s "${ALICE[@]}" --client-id 999 --expect closed hello >/dev/null
probe_ok s --client bob --key-file "$WORK/clients/bob" --client-id 1 put 0-9 >/dev/null

# the grace period frees namespaces without a connection: room again
sleep 4
assert_eq "$(stat_field s namespaces)" 0 "namespaces after the grace period"
probe_ok s "${ALICE[@]}" --client-id 999 put 0 >/dev/null
server_alive s
stop_server s
echo "ok"
