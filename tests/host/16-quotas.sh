#!/bin/bash
# Per-client quotas: --quota NAME=SIZE and --default-quota SIZE bound the
# pages a client name holds over all its namespaces.  PUTs of new pages past
# the quota get NOSPC (all or nothing), overwrites and FREEs still work,
# free_pages in replies is what is left of the quota, and one client at its
# quota leaves the rest of the server to the others.
source "$(dirname "$0")/lib.sh"

mkdir "$WORK/clients"
for c in alice bob carol; do head -c 32 /dev/urandom >"$WORK/clients/$c"; done
echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
start_server s --clients "$WORK/clients" --max 1M --memavailable-file "$WORK/meminfo" \
	--quota alice=64K --quota bob=0 --default-quota 128K
as() { # CLIENT ID ARGS...: the probe as that client, namespace ID
	local c=$1 id=$2
	shift 2
	probe_ok s --client "$c" --key-file "$WORK/clients/$c" --client-id "$id" "$@"
}
free_pages() { sed -n 's/.*, free_pages \([0-9]*\)$/\1/p' <<<"$1" | tail -n 1; }

# alice: 16 pages over two namespaces, then NOSPC
out=$(as alice 1 put 0-9)
assert_eq "$(free_pages "$out")" 6 "alice's free_pages after 10 of 16"
out=$(as alice 2 put 0-5)
assert_eq "$(free_pages "$out")" 0 "alice's free_pages at her quota"
as alice 2 --expect nospc put 6 >/dev/null
as alice 1 --expect nospc put 8-11 >/dev/null		# 2 old, 2 new: none stored
as alice 1 --seed 3 put 0-9 >/dev/null			# overwrites need no room
as alice 1 --seed 3 get 0-9 >/dev/null
as alice 2 get 0-5 >/dev/null
assert_eq "$(stats s --json | json_query "sum(n['pages'] for n in d['namespaces'] if n['client'] == 'alice')")" \
	16 "alice's pages"
assert_eq "$(stats s --json | json_query "[n['quota_pages'] for n in d['namespaces'] if n['client'] == 'alice'][0]")" \
	16 "alice's quota in status"
as alice 2 free 0-5 >/dev/null
out=$(as alice 2 put 100-105)
assert_eq "$(free_pages "$out")" 0 "alice's room back after a FREE, used again"

# bob may store nothing; carol gets the default share, and the server the rest
as bob 1 --expect nospc put 0 >/dev/null
out=$(as carol 1 put 0-31)
assert_eq "$(free_pages "$out")" 0 "carol at the default quota"
as carol 1 --expect nospc put 32 >/dev/null
assert_eq "$(stat_field s held_pages)" 48 "pages held (16 alice, 32 carol)"
assert_eq "$(stat_field s free_pages)" $((256 - 48)) "the server's own free pages"
server_alive s
stop_server s

# bad options
status=0
"$NSWAPD" --listen 127.0.0.1:0 --clients "$WORK/clients" --quota "a/b=1M" --foreground \
	>"$WORK/err" 2>&1 || status=$?
assert_eq "$status" 2 "exit status with a bad --quota name"
grep -q "is not a client name" "$WORK/err" || fail "no reason: $(cat "$WORK/err")"
status=0
"$NSWAPD" --listen 127.0.0.1:0 --clients "$WORK/clients" --quota alice=1M --quota alice=2M \
	--foreground >"$WORK/err" 2>&1 || status=$?
assert_eq "$status" 2 "exit status with --quota given twice"
