#!/bin/bash
# --max-file: a limit the admin changes at run time (issue 31, "--max
# lowered").  The file holds one SIZE as --max takes (or "none"); the
# smaller of it and --max is the limit.  A missing or bad file fails the
# start.  SIGHUP reads it again: (1) lowered, the pages over it are asked
# back (EVICT) down to the new limit and no more; (3) a bad or missing file
# keeps the SIZE read before, with an error line; (4) raised, the room is
# offered again (free_pages in the AUTH reply); (2) lowered on a server with
# a peer, the pages move to the peer (MOVED to their owner) rather than
# through the client.  --stats shows the limit and what set it.
source "$(dirname "$0")/lib.sh"

make_key k
echo "MemAvailable: 8388608 kB" >"$WORK/mem"
K=(--key-file "$WORK/k.key")

"$NSWAPD" --help >"$WORK/help" || fail "--help exit status"
grep -q -- "--max-file FILE" "$WORK/help" || fail "--help does not describe --max-file"

# start_fails WHAT MESSAGE ARGS...: exit status 2 and MESSAGE on stderr
start_fails() {
	local what=$1 message=$2 status=0
	shift 2
	"$NSWAPD" --listen 127.0.0.1:0 --foreground --status-socket "$WORK/never.sock" "$@" \
		>"$WORK/out" 2>"$WORK/err" || status=$?
	((status == 2)) || fail "$what: exit status $status, expected 2"
	grep -Eq -- "$message" "$WORK/err" || fail "$what: stderr '$(cat "$WORK/err")', expected '$message'"
	log "$what: $(head -n 1 "$WORK/err")"
}
start_fails "missing --max-file" "^nswapd: --max-file $WORK/none: No such file or directory$" \
	"${K[@]}" --max-file "$WORK/none"
echo lots >"$WORK/bad"
start_fails "bad --max-file" "^nswapd: --max-file $WORK/bad: not a size: 'lots'" \
	"${K[@]}" --max-file "$WORK/bad"
echo 100 >"$WORK/small"
start_fails "--max-file below a page" "^nswapd: --max-file $WORK/small: 100 is less than one page" \
	"${K[@]}" --max-file "$WORK/small"
: >"$WORK/empty"
start_fails "empty --max-file" "^nswapd: --max-file $WORK/empty: empty" \
	"${K[@]}" --max-file "$WORK/empty"

# reload NAME: SIGHUP, and its reload line ("reload: --max-file") is logged
reload() {
	local before
	before=$(grep -c "reload: --max-file" "$WORK/$1.log" || true)
	kill -HUP "${SERVER_PID[$1]}"
	wait_until 5 reloaded "$1" "$before" || fail "$1: no reload line after SIGHUP"
}
reloaded() {
	(($(grep -c "reload: --max-file" "$WORK/$1.log" || true) > $2))
}
# free_pages_of NAME CLIENT_ID: free_pages of the AUTH reply to that client
free_pages_of() {
	local out
	out=$(probe_ok "$1" "${K[@]}" --client-id "$2" hello)
	[[ $out =~ free_pages\ ([0-9]+) ]] || fail "no free_pages in '$out'"
	echo "${BASH_REMATCH[1]}"
}

# (1) lowered: EVICT down to the new limit, not below
echo 4M >"$WORK/max"
start_server ev "${K[@]}" --max 16M --max-file "$WORK/max" --memavailable-file "$WORK/mem"
assert_log ev "max from $WORK/max: 4.0 MiB \(SIGHUP reads it again\)"
assert_eq "$(stat_field ev limit_pages)" 1024 "limit from a 4M --max-file under --max 16M"
assert_eq "$(stat_field ev limit_source)" max-file "what sets the limit"
assert_eq "$(stat_field ev max_file_pages)" 1024 "max_file_pages"
assert_eq "$(stat_field ev max_pages)" 4096 "max_pages (--max)"
stats ev | grep -Eq "^  limit: +1024 pages \(4.0 MiB\), set by --max-file; --max 4096 pages \(16.0 MiB\), --max-file 1024 pages" ||
	fail "human --stats: $(stats ev | head -n 3)"
probe_ok ev "${K[@]}" --client-id e1 put 0-999 >/dev/null
probe ev "${K[@]}" --client-id e1 --duration 60 --verify serve-evict >"$WORK/evict.out" 2>&1 &
evict_pid=$!
wait_until 5 ns_connected ev "$(client_id e1)" || fail "the evict client did not connect"
echo 1M >"$WORK/max"
reload ev
assert_log ev "reload: --max-file $WORK/max: 256 pages \(1.0 MiB\), was 1024 pages \(4.0 MiB\); limit 256 pages \(1.0 MiB\), set by max-file; holding 1000 pages: giving the rest back"
assert_log ev "over the limit \(--max-file\): limit 256 pages, holding 1000"
given_back() {
	[[ $(stat_field ev held_pages) == 256 && $(stat_field ev evict_pending) == 0 ]]
}
wait_until 20 given_back || fail "not down to 256 pages after SIGHUP: $(stats ev | head -n 3)"
assert_eq "$(ns_field ev "$(client_id e1)" evict_asked)" 744 "keys asked back"
assert_eq "$(ns_field ev "$(client_id e1)" evict_returned)" 744 "keys given back"
assert_eq "$(stat_field ev limit_pages)" 256 "limit after SIGHUP"
assert_eq "$(stat_field ev free_pages)" 0 "free pages at the new limit"
grep -q "outcome: mismatch" "$WORK/evict.out" && fail "a page read wrong while it was given back"
probe_ok ev "${K[@]}" --client-id e1 --expect nospc put 5000 >/dev/null
log "lowered 4M -> 1M: 744 pages given back through EVICT, 256 held"

# (3) a bad or missing file on SIGHUP: the SIZE read before holds, the log says why
echo lots >"$WORK/max"
kill -HUP "${SERVER_PID[ev]}"
wait_until 5 grep -q "error: reload: --max-file $WORK/max: not a size: 'lots'" "$WORK/ev.log" ||
	fail "no error line for a bad --max-file"
assert_log ev "error: reload: --max-file $WORK/max: not a size: 'lots' .*; keeping 256 pages \(1.0 MiB\) read before; limit 256 pages, set by max-file"
assert_eq "$(stat_field ev max_file_failed)" 1 "max_file_failed after a bad file"
assert_eq "$(stat_field ev limit_pages)" 256 "limit after a bad file"
assert_eq "$(stat_field ev max_file_pages)" 256 "max_file_pages after a bad file"
stats ev | grep -q "MAX FILE BAD" || fail "human --stats does not say the file is bad: $(stats ev | head -n 3)"
rm "$WORK/max"
kill -HUP "${SERVER_PID[ev]}"
wait_until 5 grep -q "error: reload: --max-file $WORK/max: No such file or directory; keeping 256 pages" \
	"$WORK/ev.log" || fail "no error line for a missing --max-file"
sleep 0.6	# two ticks: they do not read the file, nor change the limit
assert_eq "$(stat_field ev limit_pages)" 256 "limit after a missing file"
assert_eq "$(stat_field ev held_pages)" 256 "pages held after a bad and a missing file"
probe_ok ev "${K[@]}" --client-id e1 --expect nospc put 5000 >/dev/null
server_alive ev
log "bad and missing --max-file: 256 pages kept as the limit"

# (4) raised: the room is offered again
assert_eq "$(free_pages_of ev e1)" 0 "free_pages at the limit"
echo 8M >"$WORK/max"
reload ev
assert_log ev "reload: --max-file $WORK/max: 2048 pages \(8.0 MiB\), was 256 pages \(1.0 MiB\); limit 2048 pages \(8.0 MiB\), set by max-file; holding 256 pages$"
assert_eq "$(stat_field ev max_file_failed)" 0 "max_file_failed after a good file"
assert_eq "$(stat_field ev limit_pages)" 2048 "limit raised"
# coarse(2048 - 256): a multiple of 32 pages (2048 / 64)
assert_eq "$(free_pages_of ev e1)" 1792 "free_pages after raising the limit"
probe_ok ev "${K[@]}" --client-id e1 put 5000-5099 >/dev/null
# over --max: --max holds; "none": --max alone
echo 1T >"$WORK/max"
reload ev
assert_eq "$(stat_field ev limit_pages)" 4096 "limit with --max-file over --max"
assert_eq "$(stat_field ev limit_source)" max "what sets the limit over --max"
echo none >"$WORK/max"
reload ev
assert_eq "$(stat_field ev max_file_pages)" None "max_file_pages none"
assert_eq "$(stat_field ev limit_source)" max "what sets the limit with none"
log "raised 1M -> 8M: free_pages 0 -> 1792, new pages taken"
kill "$evict_pid" 2>/dev/null || true
wait "$evict_pid" 2>/dev/null || true
stop_server ev

# (2) lowered on a server with a peer: the pages move to it, not through the client
mkdir "$WORK/clients"
head -c 32 /dev/urandom >"$WORK/clients/alice"
make_key peer
echo 8M >"$WORK/amax"
start_server b --clients "$WORK/clients" --peer-key "$WORK/peer.key" --memavailable-file "$WORK/mem"
start_server a --clients "$WORK/clients" --peer-key "$WORK/peer.key" --memavailable-file "$WORK/mem" \
	--peer "127.0.0.1:${SERVER_PORT[b]}" --max-file "$WORK/amax"
peer_connected() {
	[[ $(stats a --json | json_query "d['peers'][0]['connected']") == 1 ]]
}
wait_until 10 peer_connected || fail "A did not connect to its peer B: $(stats a --json)"
# 200 pages, lowered to 64: 136 over, moved in whole runs of 16
out=$(python3 "$REPO_DIR/tests/host/35-max-file-client.py" "${SERVER_PORT[a]}" "${SERVER_PORT[b]}" \
	--key-file "$WORK/clients/alice" --client alice --pages 200 --max-file "$WORK/amax" \
	--size 256K --pid "${SERVER_PID[a]}" --expect 136 2>&1) || fail "migration: $out"
log "$out"
[[ $out =~ ^moved=([0-9]+)$ ]] || fail "the client says '$out'"
moved=${BASH_REMATCH[1]}
((moved >= 136 && moved <= 200)) || fail "$moved pages moved, expected 136 to 200"
assert_eq "$(stat_field a pages_migrated_out)" "$moved" "pages migrated out of A"
assert_eq "$(stat_field b pages_migrated_in)" "$moved" "pages B took from A"
assert_eq "$(stat_field a held_pages)" $((200 - moved)) "pages A holds"
(($(stat_field a held_pages) <= 64)) || fail "A holds more than its new limit"
assert_eq "$(stat_field a limit_pages)" 64 "A's limit"
assert_eq "$(stat_field a limit_source)" max-file "what sets A's limit"
assert_eq "$(ns_field a "$(client_id 35a)" evict_asked)" 0 "keys A asked back through EVICT"
assert_eq "$(ns_field b "$(client_id 35b)" pages)" "$moved" "pages of the owner's namespace on B"
assert_log a "over the limit \(--max-file\): limit 64 pages, holding 200"
assert_log a "moving [0-9]+ pages to peer 127.0.0.1:${SERVER_PORT[b]}"
log "lowered 8M -> 256K with a peer: $moved pages moved to B, $(stat_field a held_pages) left on A"
server_alive a
server_alive b
stop_server a
stop_server b
echo "ok"
