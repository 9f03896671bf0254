#!/bin/bash
# --clients DIR: one key per client name.  A client holding a valid key of
# its own cannot claim another client's name (and so never reaches its
# pages), an unknown name is refused as such (NSWAP2L_ERR_NO_CLIENT, and
# the log names the file the server lacks) while a known name with a wrong
# key gets the plain refusal, and SIGHUP revokes or rotates a key without
# a restart: the client's open connection closes and it cannot come back
# with the old key.  A bad reload keeps the keys it had.
source "$(dirname "$0")/lib.sh"
ATTACK=$REPO_DIR/tests/host/attack.py

mkdir "$WORK/clients"
head -c 32 /dev/urandom >"$WORK/clients/alice"
head -c 32 /dev/urandom >"$WORK/clients/bob"
cp "$WORK/clients/bob" "$WORK/bob-old.key"
start_server s --clients "$WORK/clients"
assert_log s "2 clients, one key each, from $WORK/clients"
ALICE=(--client alice --key-file "$WORK/clients/alice" --client-id 1)

probe_ok s "${ALICE[@]}" put 0-99 >/dev/null

# bob, with his own valid key, claims alice's name and namespace id
probe_ok s --client alice --key-file "$WORK/clients/bob" --client-id 1 --expect auth get 0 >/dev/null
assert_log s "authentication failed for client alice \(namespace $(client_id 1)\): wrong key"
# as himself, with the same namespace id, bob sees a namespace of his own
probe_ok s --client bob --key-file "$WORK/clients/bob" --client-id 1 --expect noent get 0 >/dev/null
probe_ok s --client bob --key-file "$WORK/clients/bob" --client-id 1 --seed 7 put 0-9 >/dev/null
probe_ok s "${ALICE[@]}" get 0-99 >/dev/null
assert_eq "$(stats s --json | json_query "sorted(n['client'] + ':' + str(n['pages']) for n in d['namespaces'])")" \
	"['alice:100', 'bob:10']" "namespaces by client"

# a name the server has no key for: said so to the client, whatever its
# proof (anybody learns which names are known, as with nbd's export names;
# never a key), and in the log with the file it lacks
before=$(stat_field s auth_failures)
probe_ok s --client carol --key-file "$WORK/clients/bob" --expect noclient hello >/dev/null
probe_ok s --client carol --expect noclient hello >/dev/null
assert_log s "authentication failed: client 'carol' unknown \(no file $WORK/clients/carol\), closing"
assert_eq "$(stat_field s auth_failures)" $((before + 2)) "refusals of an unknown client counted"
# a client whose HELLO does not announce NSWAP2L_CAP_NO_CLIENT (older ones;
# attack.py's announces nothing) gets the refusal it knows
out=$("$ATTACK" "${SERVER_PORT[s]}" handshake --client carol --key-file "$WORK/clients/bob")
assert_eq "$out" "auth=refused (AUTH refused with status 4)" "unknown client, HELLO without the capability"
# a known name with a wrong key is still just refused, not "unknown"
probe_ok s --client alice --key-file "$WORK/clients/bob" --expect auth hello >/dev/null
# and a malformed name
probe_ok s --client a/b --key-file "$WORK/clients/bob" --expect invalid hello >/dev/null
assert_log s "malformed client name in HELLO"

# revoke bob while he is connected: his connection closes, he cannot return
"$PROBE" --server "127.0.0.1:${SERVER_PORT[s]}" --client bob --key-file "$WORK/bob-old.key" \
	--client-id 2 --duration 30 serve-evict >"$WORK/bob-held.out" 2>&1 &
BOB_HELD=$!
wait_until 5 ns_connected s "$(client_id 2)" ||
	fail "bob's held connection did not authenticate"
rm "$WORK/clients/bob"
kill -HUP "${SERVER_PID[s]}"
wait_until 5 grep -q "client bob was removed, closing" "$WORK/s.log" ||
	fail "no log line for bob's revoked connection"
wait_until 5 bash -c "! kill -0 $BOB_HELD 2>/dev/null" || fail "bob's connection still open after revocation"
wait "$BOB_HELD" || true
grep -q "outcome: closed" "$WORK/bob-held.out" || fail "bob's probe: $(cat "$WORK/bob-held.out")"
assert_log s "reload: 1 clients from $WORK/clients"
# revoked, bob is a client the server does not know
probe_ok s --client bob --key-file "$WORK/bob-old.key" --client-id 1 --expect noclient get 0 >/dev/null
assert_log s "client 'bob' unknown \(no file $WORK/clients/bob\)"
probe_ok s "${ALICE[@]}" get 0-99 >/dev/null

# give bob a new key: the old one stays refused (a wrong key, bob known
# again), the new one works
head -c 32 /dev/urandom >"$WORK/clients/bob"
kill -HUP "${SERVER_PID[s]}"
wait_until 5 grep -q "reload: 2 clients" "$WORK/s.log" || fail "no second reload"
probe_ok s --client bob --key-file "$WORK/bob-old.key" --client-id 3 --expect auth hello >/dev/null
assert_log s "authentication failed for client bob \(namespace $(client_id 3)\): wrong key"
probe_ok s --client bob --key-file "$WORK/clients/bob" --client-id 1 --seed 7 get 0-9 >/dev/null

# a reload that fails keeps every key: alice and bob still get in
head -c 8 /dev/urandom >"$WORK/clients/dave"
kill -HUP "${SERVER_PID[s]}"
wait_until 5 grep -q "reload: .*dave.*keeping the 2 clients loaded before" "$WORK/s.log" ||
	fail "no error line for a bad reload"
probe_ok s "${ALICE[@]}" get 0-99 >/dev/null
probe_ok s --client bob --key-file "$WORK/clients/bob" --client-id 1 --seed 7 get 0-9 >/dev/null
rm "$WORK/clients/dave"
server_alive s

# --key-file is one client for every name (documented): any name gets in
make_key shared
start_server t --key-file "$WORK/shared.key"
probe_ok t --client anyone --key-file "$WORK/shared.key" put 1 >/dev/null
probe_ok t --client someone --key-file "$WORK/shared.key" --expect noent get 1 >/dev/null

# options: a missing directory and two key sources are usage errors
status=0
"$NSWAPD" --listen 127.0.0.1:0 --clients "$WORK/nothing" --foreground >"$WORK/err1" 2>&1 || status=$?
assert_eq "$status" 2 "exit status with a missing --clients directory"
grep -q "cannot open clients directory $WORK/nothing" "$WORK/err1" || fail "no reason: $(cat "$WORK/err1")"
status=0
"$NSWAPD" --listen 127.0.0.1:0 --clients "$WORK/clients" --key-file "$WORK/shared.key" \
	--foreground >"$WORK/err2" 2>&1 || status=$?
assert_eq "$status" 2 "exit status with --clients and --key-file"
grep -q "exclude each other" "$WORK/err2" || fail "no reason: $(cat "$WORK/err2")"
stop_server s
