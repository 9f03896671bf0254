#!/bin/bash
# Graceful leave.  The first SIGTERM stops new pages (NOSPC; GET, FREE and
# overwrites go on, --stats shows the progress) and asks the clients for
# every page back (EVICT); nswapd exits 0 once it holds none.  A client
# that does not answer holds it until --leave-timeout, a second SIGTERM
# ends it at once, pages of namespaces with no connection are not waited
# for, and --leave-timeout 0 exits at once as before; each end says how
# many pages were left.
source "$(dirname "$0")/lib.sh"

PAGES=3000
C=(--key-file "$WORK/k.key" --client-id e1)

# exited NAME: server NAME's process is gone (its status is read by wait)
exited() {
	! kill -0 "${SERVER_PID[$1]}" 2>/dev/null
}

# wait_exit NAME SECONDS: waits for server NAME to exit; its status must be 0
wait_exit() {
	local status=0
	wait_until "$2" exited "$1" || fail "nswapd $1 still running ${2} s into the leave"
	wait "${SERVER_PID[$1]}" || status=$?
	unset "SERVER_PID[$1]"
	((status == 0)) || fail "nswapd $1 exited with $status"
}

# leave_log NAME: its "leave over" line
leave_log() {
	grep -E "leave over|exiting without a leave" "$WORK/$1.log" || echo "(none)"
}

# serve NAME CLIENT_ID: server NAME with PAGES pages of CLIENT_ID and a
# client of it that serves EVICT (verifying the pages) once $WORK/NAME.go exists
serve() {
	local name=$1 id=$2
	probe_ok "$name" --key-file "$WORK/k.key" --client-id "$id" put "0-$((PAGES - 1))" >/dev/null
	probe "$name" --key-file "$WORK/k.key" --client-id "$id" --duration 60 --verify \
		--hold-until "$WORK/$name.go" serve-evict >"$WORK/$name-evict.out" 2>&1 &
	wait_until 5 ns_connected "$name" "$(client_id "$id")" || fail "$name: the evict client did not connect"
}

# term NAME: SIGTERM, and the leave starts
term() {
	kill -TERM "${SERVER_PID[$1]}"
	wait_until 5 grep -q "leaving: giving back" "$WORK/$1.log" || fail "$1: no leave started"
}

# start_leaving NAME CLIENT_ID [nswapd options]: serve, then SIGTERM
start_leaving() {
	local name=$1 id=$2
	shift 2
	start_server "$name" --key-file "$WORK/k.key" "$@"
	serve "$name" "$id"
	term "$name"
}

make_key k

# A client that takes the pages back: every page verified by the client,
# then freed; nswapd exits 0 with nothing left.  Another client (e7, no
# EVICT) reads, overwrites and frees its pages meanwhile.
E7=(--key-file "$WORK/k.key" --client-id e7)
start_server ok --key-file "$WORK/k.key"
probe_ok ok "${E7[@]}" put 0-9 >/dev/null
serve ok e1
term ok
ALL=$((PAGES + 10))
assert_log ok "leaving: giving back $ALL pages of 2 namespaces, deadline in $((30 + (ALL + 1999) / 2000)) s \(default for the pages held\)"
wait_until 5 grep -q "evict: tag" "$WORK/ok-evict.out" || fail "no EVICT: $(cat "$WORK/ok-evict.out")"
server_alive ok
assert_eq "$(stat_field ok leaving)" 1 "leaving in --stats"
assert_eq "$(stat_field ok free_pages)" 0 "free pages while leaving"
assert_eq "$(stat_field ok leave_pages_at_start)" $ALL "pages at the start"
assert_eq "$(stat_field ok leave_pages_given_back)" 0 "pages given back before the client acts"
read -r started deadline < <(stats ok --json |
	json_query "d['server']['leave_started'], d['server']['leave_deadline']")
now=$(date +%s)
((started <= now && started >= now - 10)) || fail "leave_started $started, now $now"
assert_eq $((deadline - started)) 32 "deadline - started (30 s + 3010 pages at 2000/s)"
stats ok | grep -q "^  leaving: *since .*, deadline .*(in [0-9]* s)" || fail "human --stats: $(stats ok)"
stats ok | grep -q "$ALL pages held at the start, 0 given back, $ALL left" ||
	fail "human --stats: $(stats ok)"
# new keys are refused, reads, overwrites and frees go on
probe_ok ok "${C[@]}" --expect nospc put $PAGES >/dev/null
probe_ok ok --key-file "$WORK/k.key" --client-id e9 --expect nospc put 0 >/dev/null
probe_ok ok "${E7[@]}" --seed 2 put 0-9 >/dev/null
probe_ok ok "${E7[@]}" --seed 2 get 0-9 >/dev/null
probe_ok ok "${C[@]}" get 0-99 >/dev/null
probe_ok ok "${E7[@]}" free 0-9 >/dev/null
assert_eq "$(stat_field ok leave_pages_given_back)" 10 "pages given back after a FREE"
assert_eq "$(stat_field ok leave_pages_left)" $PAGES "pages left after a FREE"
log "leaving: new PUT refused, GET/overwrite/FREE served, --stats shows the progress"
touch "$WORK/ok.go"
wait_exit ok 20
grep -q "$PAGES keys freed in all" "$WORK/ok-evict.out" ||
	fail "the client did not get every page back: $(tail -n 3 "$WORK/ok-evict.out")"
grep -q "outcome: mismatch" "$WORK/ok-evict.out" && fail "a page read wrong during the leave"
assert_log ok "leave over \(every page given back\) after [0-9]+ s: $ALL of $ALL pages given back, 0 pages of 0 namespaces left"
log "client took every page back: $(leave_log ok)"

# A client that never answers: the deadline ends the leave, pages counted.
start_leaving mute e2 --leave-timeout 3
t0=$SECONDS
assert_log mute "leaving: giving back $PAGES pages of 1 namespaces, deadline in 3 s \(--leave-timeout\)"
wait_exit mute 10
((SECONDS - t0 >= 2)) || fail "the deadline ended the leave after $((SECONDS - t0)) s, not 3"
assert_log mute "leave over \(--leave-timeout passed\) after 3 s: 0 of $PAGES pages given back, $PAGES pages of 1 namespaces left"
log "mute client: $(leave_log mute)"

# A second SIGTERM exits at once (the default deadline is 32 s away).
start_leaving twice e3
sleep 0.5
server_alive twice
t0=$SECONDS
kill -TERM "${SERVER_PID[twice]}"
wait_exit twice 3
assert_log twice "leave over \(signalled again\) after [0-9]+ s: 0 of $PAGES pages given back, $PAGES pages of 1 namespaces left"
log "second SIGTERM: $(leave_log twice)"

# Pages of namespaces with no connection: nobody to ask, exits at once;
# SIGINT leaves as SIGTERM does.
start_server gone --key-file "$WORK/k.key"
probe_ok gone --key-file "$WORK/k.key" --client-id e4 put 0-99 >/dev/null
probe_ok gone --key-file "$WORK/k.key" --client-id e5 put 0-49 >/dev/null
kill -INT "${SERVER_PID[gone]}"
wait_exit gone 3
assert_log gone "leaving: giving back 150 pages of 2 namespaces"
assert_log gone "leave over \(no connected client takes EVICT for the rest\) after 0 s: 0 of 150 pages given back, 150 pages of 2 namespaces left"
log "no connection: $(leave_log gone)"

# --leave-timeout 0: exits at once, the pages dropped are counted.
start_server now --key-file "$WORK/k.key" --leave-timeout 0
probe_ok now --key-file "$WORK/k.key" --client-id e6 put 0-99 >/dev/null
probe now --key-file "$WORK/k.key" --client-id e6 --duration 30 serve-evict >/dev/null 2>&1 &
wait_until 5 ns_connected now "$(client_id e6)" || fail "now: the evict client did not connect"
kill -TERM "${SERVER_PID[now]}"
wait_exit now 3
assert_log now "exiting without a leave \(--leave-timeout 0\): 100 pages of 1 namespaces dropped"
grep -q "leaving:" "$WORK/now.log" && fail "--leave-timeout 0 started a leave"
log "--leave-timeout 0: $(leave_log now)"

echo "ok"
