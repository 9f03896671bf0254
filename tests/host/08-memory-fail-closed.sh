#!/bin/bash
# Memory accounting fails closed: when MemAvailable cannot be read (the
# file gone or garbled, as with EMFILE on /proc/meminfo), nswapd takes no
# new pages but keeps serving the ones it holds, reports free_pages 0 and
# memory_unknown=1, and warns once (not on every tick); when it can read
# again it takes pages again.
source "$(dirname "$0")/lib.sh"

make_key k
echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
start_server s --key-file "$WORK/k.key" --memavailable-file "$WORK/meminfo"
C=(--key-file "$WORK/k.key" --client-id 8a)

unknown_warnings() {
	grep -c "warn: cannot read MemAvailable from $WORK/meminfo" "$WORK/s.log" || true
}

memory_unknown_is() {
	[[ $(stat_field s memory_unknown) == "$1" ]]
}

# unreadable CASE: while meminfo is in that state
unreadable() {
	local name=$1
	wait_until 5 memory_unknown_is 1 ||
		fail "$name: memory_unknown not reported"
	probe_ok s "${C[@]}" --expect nospc put 1000 >/dev/null
	probe_ok s --key-file "$WORK/k.key" --client-id 8b --expect nospc put 0 >/dev/null
	probe_ok s "${C[@]}" --seed 4 put 0-63 >/dev/null	# overwrites need no room
	probe_ok s "${C[@]}" --seed 4 get 0-63 >/dev/null
	probe_ok s "${C[@]}" get 64-89 >/dev/null
	probe_ok s "${C[@]}" free 90-99 >/dev/null
	# freeing makes no room while memory is unknown
	probe_ok s "${C[@]}" --expect nospc put 90 >/dev/null
	assert_eq "$(stat_field s free_pages)" 0 "$name: free_pages"
	assert_eq "$(stat_field s held_pages)" 90 "$name: held_pages"
	stats s | grep "MEMORY UNKNOWN" >/dev/null || fail "$name: human status does not say it"
	# ticks go on every 250 ms: still one warning
	sleep 3
	assert_eq "$(unknown_warnings)" 1 "$name: warnings about unreadable memory"
	log "$name: new pages refused, held pages served, one warning"
}

# readable_again CASE: meminfo restored, PUTs of new pages work
readable_again() {
	echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
	wait_until 5 memory_unknown_is 0 ||
		fail "$1: memory_unknown still reported"
	assert_log s "memory can be read again" "$1: no line saying memory can be read again"
	probe_ok s "${C[@]}" put 90-99 >/dev/null
	probe_ok s "${C[@]}" --seed 4 get 0-63 >/dev/null
	probe_ok s "${C[@]}" get 64-99 >/dev/null
	(($(stat_field s free_pages) > 1000000)) || fail "$1: free_pages $(stat_field s free_pages)"
}

probe_ok s "${C[@]}" put 0-99 >/dev/null
assert_eq "$(stat_field s memory_unknown)" 0 "memory_unknown at start"

rm "$WORK/meminfo"
unreadable "file gone"
assert_log s "cannot read MemAvailable from $WORK/meminfo: No such file or directory: taking no new pages"
readable_again "file back"
probe_ok s "${C[@]}" free 90-99 >/dev/null

echo "MemAvailable: lots kB" >"$WORK/meminfo"
# the count of warnings goes on from the first case
unknown_warnings() {
	grep -c "warn: cannot read MemAvailable from $WORK/meminfo: no number" "$WORK/s.log" || true
}
unreadable "garbled file"
readable_again "file fixed"
stop_server s
echo "ok"
