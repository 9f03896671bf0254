#!/bin/bash
# free_pages does not tell one client what others do: each client is told
# its room computed over its own pages against the server's limit,
# rounded down to a multiple of limit / 64 (4 pages under a 256-page
# limit), and within its quota when it has one.  Alice storing 200 pages,
# and freeing them, changes nothing bob is told, in replies or in
# CAPACITY messages on a connection he keeps open; what bob stores
# changes what he is told; carol, with a quota, is told her room in it.
source "$(dirname "$0")/lib.sh"

mkdir "$WORK/clients"
for c in alice bob carol; do head -c 32 /dev/urandom >"$WORK/clients/$c"; done
echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
start_server s --clients "$WORK/clients" --max 1M --memavailable-file "$WORK/meminfo" \
	--quota carol=40K
as() { # CLIENT ID ARGS...: the probe as that client, namespace ID
	local c=$1 id=$2
	shift 2
	probe_ok s --client "$c" --key-file "$WORK/clients/$c" --client-id "$id" "$@"
}
told() { # CLIENT ID: the free_pages a handshake tells
	as "$1" "$2" hello | sed -n 's/^handshake: namespace [a-z]*, free_pages //p'
}

assert_eq "$(told bob 1)" 256 "bob's free_pages on an empty server"
# bob keeps a connection open that prints every message it gets
"$PROBE" --server "127.0.0.1:${SERVER_PORT[s]}" --client bob --key-file "$WORK/clients/bob" \
	--client-id 2 --verbose --duration 6 serve-evict >"$WORK/bob-held" 2>&1 &
BOB_HELD=$!
wait_until 5 ns_connected s "$(client_id 2)" ||
	fail "bob's connection did not authenticate"

out=$(as alice 1 put 0-199)
assert_eq "$(sed -n 's/.*, free_pages \([0-9]*\)$/\1/p' <<<"$out" | tail -n 1)" 56 \
	"alice's free_pages after 200 pages"
assert_eq "$(stat_field s free_pages)" 56 "the server's own free pages"
assert_eq "$(told bob 1)" 256 "bob's free_pages while alice holds 200 pages"
sleep 1		# ticks, where CAPACITY would go out
as alice 1 free 0-199 >/dev/null
sleep 1
assert_eq "$(told bob 1)" 256 "bob's free_pages after alice freed them"

# bob's own pages count, in steps of 4 pages
as bob 1 put 0-9 >/dev/null
assert_eq "$(told bob 1)" 244 "bob's free_pages after 10 pages of his own"
assert_eq "$(told bob 3)" 244 "bob's free_pages in another of his namespaces"

# carol has a quota of 10 pages: her room in it, exactly
as carol 1 put 0-6 >/dev/null
assert_eq "$(told carol 1)" 3 "carol's free_pages within her quota"

wait "$BOB_HELD" || fail "bob's held connection: $(tail -n 3 "$WORK/bob-held")"
capacity=$(grep -c "^recv CAPACITY" "$WORK/bob-held" || true)
assert_eq "$capacity" 0 "CAPACITY messages bob got while alice stored and freed"
server_alive s
stop_server s
echo "ok"
