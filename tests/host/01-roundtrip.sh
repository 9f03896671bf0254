#!/bin/bash
# PUT/GET/FREE round trips with checksummed pages for two clients; each
# client sees only its own namespace; pages survive a reconnect within the
# grace period, a namespace with a connection open outlives it, and one
# without is freed after it.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key" --grace 5
A=(--key-file "$WORK/k.key" --client-id a1)
B=(--key-file "$WORK/k.key" --client-id b2)

probe_ok s "${A[@]}" --seed 11 put 0-999 >/dev/null
probe_ok s "${B[@]}" --seed 22 put 0-999 >/dev/null
# every GET is a new connection: a reconnect finds the pages
probe_ok s "${A[@]}" --seed 11 get 0-999 >/dev/null
probe_ok s "${B[@]}" --seed 22 get 0-999 >/dev/null
# same keys, other namespace: B's pages are not A's
probe_ok s "${B[@]}" --seed 11 --expect mismatch get 0 >/dev/null
probe_ok s "${A[@]}" --expect noent get 1000 >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id c3 --expect noent get 0 >/dev/null
assert_eq "$(ns_field s "$(client_id a1)" pages)" 1000 "pages of a1"
assert_eq "$(ns_field s "$(client_id b2)" pages)" 1000 "pages of b2"
assert_eq "$(stat_field s held_pages)" 2000 "pages held"

# overwrite in place, then free half
probe_ok s "${A[@]}" --seed 12 put 0-99 >/dev/null
probe_ok s "${A[@]}" --seed 12 get 0-99 >/dev/null
probe_ok s "${A[@]}" --seed 11 get 100-999 >/dev/null
probe_ok s "${A[@]}" free 0-499 >/dev/null
probe_ok s "${A[@]}" --expect noent get 0-499 >/dev/null
probe_ok s "${A[@]}" --expect noent get 499 >/dev/null
probe_ok s "${A[@]}" --seed 11 get 500-999 >/dev/null
probe_ok s "${A[@]}" free 0-499 5000 >/dev/null	# missing keys are ignored
assert_eq "$(ns_field s "$(client_id a1)" pages)" 500 "pages of a1 after FREE"
assert_eq "$(stat_field s held_pages)" 1500 "pages held after FREE"

# B keeps a connection open past the grace period, A does not
probe s "${B[@]}" --duration 7 serve-evict >"$WORK/b-conn.out" 2>&1 &
B_CONN=$!
wait_until 5 ns_connected s "$(client_id b2)" || fail "B's connection did not authenticate"
sleep 8
probe_ok s "${A[@]}" --expect noent get 500 >/dev/null
# (the log line about it is rate-limited with other lines peers cause)
assert_eq "$(ns_field s "$(client_id a1)" pages)" 0 "A's pages after the grace period"
probe_ok s "${B[@]}" --seed 22 get 0-999 >/dev/null
wait "$B_CONN" || fail "B's long connection: $(tail -n 2 "$WORK/b-conn.out")"
sleep 6
probe_ok s "${B[@]}" --expect noent get 0 >/dev/null
assert_eq "$(stat_field s held_pages)" 0 "pages held after both grace periods"
server_alive s
stop_server s
echo "ok"
