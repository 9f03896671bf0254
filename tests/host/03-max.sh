#!/bin/bash
# --max: PUTs of new pages beyond it get NOSPC (all or nothing), overwrites
# and FREEs still work, and free_pages in replies goes down as pages are
# stored and up as they are freed (in steps of 4 pages under a 256-page
# limit: free_pages is rounded down to limit / 64).  --reserve P% leaves
# that share of MemTotal to the machine.
source "$(dirname "$0")/lib.sh"

make_key k
# plenty of (simulated) memory, so that only --max limits
echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
start_server s --key-file "$WORK/k.key" --max 1M --memavailable-file "$WORK/meminfo"
C=(--key-file "$WORK/k.key" --client-id 3a)

# free_pages FREE_PAGES_OF: the free_pages of the last reply in probe output
free_pages() {
	sed -n 's/.*, free_pages \([0-9]*\)$/\1/p' <<<"$1" | tail -n 1
}

probe_ok s "${C[@]}" hello >/dev/null
out=$(probe_ok s "${C[@]}" put 0-63)
assert_eq "$(free_pages "$out")" 192 "free_pages after 64 of 256 pages"
out=$(probe_ok s "${C[@]}" put 64-191)
assert_eq "$(free_pages "$out")" 64 "free_pages after 192 pages"
out=$(probe_ok s "${C[@]}" put 192-255)
assert_eq "$(free_pages "$out")" 0 "free_pages when full"

probe_ok s "${C[@]}" --expect nospc put 256 >/dev/null
probe_ok s "${C[@]}" --expect nospc put 250-259 >/dev/null	# 6 old, 4 new: none stored
probe_ok s "${C[@]}" --expect noent get 256 >/dev/null
probe_ok s "${C[@]}" get 0-255 >/dev/null
# overwrites need no room
probe_ok s "${C[@]}" --seed 9 put 0-63 >/dev/null
probe_ok s "${C[@]}" --seed 9 get 0-63 >/dev/null
probe_ok s "${C[@]}" get 64-255 >/dev/null
assert_eq "$(stat_field s held_pages)" 256 "pages held at --max"
assert_eq "$(ns_field s "$(client_id 3a)" errors)" 3 "refused requests (2 NOSPC, 1 NOENT)"

# another client is held to the same limit
probe_ok s --key-file "$WORK/k.key" --client-id 3b --expect nospc put 0 >/dev/null

out=$(probe_ok s "${C[@]}" free 0-9)
assert_eq "$(free_pages "$out")" 8 "free_pages after freeing 10 (a multiple of 4)"
probe_ok s "${C[@]}" put 256-265 >/dev/null
probe_ok s "${C[@]}" get 256-265 >/dev/null
probe_ok s "${C[@]}" --expect nospc put 266 >/dev/null
stop_server s

# 25 % of a MemTotal of 1 GiB leaves 256 MiB of the 512 MiB available:
# 65536 pages to take
printf 'MemTotal: 1048576 kB\nMemAvailable: 524288 kB\n' >"$WORK/meminfo"
start_server r --key-file "$WORK/k.key" --memavailable-file "$WORK/meminfo" --reserve 25%
assert_log r "reserve 256\.0 MiB"
free_is() { [[ $(stat_field r free_pages) == "$1" ]]; }
wait_until 5 free_is 65536 ||
	fail "free pages with --reserve 25% of 1 GiB and 512 MiB available: $(stat_field r free_pages), expected 65536"
stop_server r
echo "ok"
