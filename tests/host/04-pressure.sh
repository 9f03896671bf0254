#!/bin/bash
# Adaptive memory.  When the machine (simulated with --memavailable-file)
# or the memory cgroup (real, when the host lets us make one) needs memory
# back, nswapd refuses new pages, asks a client that takes EVICT for about
# as many pages as it is over, keeps serving every page until the client
# frees them, and then gives the memory back to the system.
source "$(dirname "$0")/lib.sh"

MIB_KB=1024

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# evicted_keys FILE: keys named in the EVICT messages serve-evict printed
evicted_keys() {
	awk '/^evict: tag [0-9]+, [0-9]+ keys$/ { n += $4 } END { print n + 0 }' "$1"
}

# at_least N COMMAND...: the number COMMAND prints is at least N (for wait_until)
at_least() {
	local n=$1
	shift
	(($("$@") >= n))
}

# at_most N COMMAND...
at_most() {
	local n=$1
	shift
	(($("$@") <= n))
}

simulated_pressure() {
	local reserve_kb=$((64 * MIB_KB)) short_kb=$((20 * MIB_KB)) rss_full rss_after
	local C=(--key-file "$WORK/k.key" --client-id e1)

	echo "MemAvailable: $((reserve_kb + 512 * MIB_KB)) kB" >"$WORK/meminfo"
	start_server sim --key-file "$WORK/k.key" --memavailable-file "$WORK/meminfo"
	probe_ok sim "${C[@]}" put 0-9999 >/dev/null

	# the client frees what it is asked for once told to go, and each time
	# memory comes back as the freed pages' worth
	probe sim "${C[@]}" --duration 30 --verify --hold-until "$WORK/go" \
		--on-evict "echo \"MemAvailable: \$(($reserve_kb - $short_kb + \$NSWAP_EVICTED_TOTAL * 4)) kB\" >'$WORK/meminfo'" \
		serve-evict >"$WORK/evict.out" 2>&1 &
	local serving=$!
	wait_until 5 ns_connected sim "$(client_id e1)" ||
		fail "the evict client did not connect"

	# the machine is 20 MiB short of the reserve: 5120 pages over
	echo "MemAvailable: $((reserve_kb - short_kb)) kB" >"$WORK/meminfo"
	wait_until 5 at_least 5120 evicted_keys "$WORK/evict.out" ||
		fail "no EVICT for 5120 pages: $(cat "$WORK/evict.out")"
	assert_eq "$(evicted_keys "$WORK/evict.out")" 5120 "keys asked back"
	assert_log sim "memory pressure: limit 4880 pages, holding 10000: taking no new pages"
	assert_eq "$(stat_field sim free_pages)" 0 "free pages under pressure"
	assert_eq "$(stat_field sim evict_pending)" 5120 "eviction pending"
	# while the client has not freed them, nothing is lost, nothing new taken
	probe_ok sim "${C[@]}" --expect nospc put 10000 >/dev/null
	probe_ok sim "${C[@]}" --seed 1 put 0-63 >/dev/null
	probe_ok sim "${C[@]}" get 0-9999 >/dev/null
	probe_ok sim --key-file "$WORK/k.key" --client-id e2 --expect nospc put 0 >/dev/null
	log "simulated: EVICT for 5120 of 10000 pages; new PUT refused, all pages readable"

	rss_full=$(rss_kb "${SERVER_PID[sim]}")
	touch "$WORK/go"
	wait_until 10 grep -q "5120 keys freed in all" "$WORK/evict.out" ||
		fail "the client did not free the keys: $(tail -n 3 "$WORK/evict.out")"
	wait_until 5 at_most 0 stat_field sim evict_pending || fail "round not over"
	assert_eq "$(stat_field sim held_pages)" 4880 "pages held after the client freed"
	assert_eq "$(ns_field sim "$(client_id e1)" evict_returned)" 5120 "pages returned"
	assert_log sim "eviction round done \(ok\), 4880 pages held"
	# freed frames go back to the system at the next tick
	rss_drop() {
		(($(rss_kb "${SERVER_PID[sim]}") < rss_full - 18 * MIB_KB))
	}
	wait_until 3 rss_drop || fail "RSS did not drop: $rss_full kB -> $(rss_kb "${SERVER_PID[sim]}") kB"
	rss_after=$(rss_kb "${SERVER_PID[sim]}")
	# memory is back to the reserve: no more asking, and room again
	sleep 1.5
	assert_eq "$(ns_field sim "$(client_id e1)" evict_asked)" 5120 "keys asked after recovery"
	echo "MemAvailable: $((reserve_kb + 512 * MIB_KB)) kB" >"$WORK/meminfo"
	sleep 0.5
	probe_ok sim "${C[@]}" put 10000 >/dev/null
	log "simulated: client freed 5120 pages, held 10000 -> 4880, RSS $rss_full -> $rss_after kB"
	kill "$serving"
	wait "$serving" 2>/dev/null || true
	stop_server sim
}

# The memory cgroup of this shell (v1), or nothing.
own_memory_cgroup() {
	local path
	path=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
	[[ -n $path && -w /sys/fs/cgroup/memory$path ]] && echo "/sys/fs/cgroup/memory$path"
}

cgroup_pressure() {
	local parent cg usage_full usage_after asked
	local C=(--key-file "$WORK/k.key" --client-id f1)

	parent=$(own_memory_cgroup) || true
	if [[ -z $parent ]] || ! mkdir "$parent/nswapd-test-$$" 2>/dev/null; then
		log "cgroup: no writable cgroup v1 memory controller here, variant skipped"
		return 0
	fi
	cg=$parent/nswapd-test-$$
	CGROUP_DIR=$cg
	echo $((320 << 20)) >"$cg/memory.limit_in_bytes"
	# start nswapd inside the cgroup: the shell moves itself, then execs
	rm -f "$WORK/cg.port"
	bash -c "echo \$\$ >'$cg/cgroup.procs'; exec '$NSWAPD' --listen 127.0.0.1:0 \
		--port-file '$WORK/cg.port' --foreground --status-socket '$WORK/cg.sock' \
		--key-file '$WORK/k.key' --reserve 48M" >"$WORK/cg.log" 2>&1 &
	SERVER_PID[cg]=$!
	wait_until 5 test -s "$WORK/cg.port" || fail "nswapd in the cgroup did not start"
	SERVER_PORT[cg]=$(<"$WORK/cg.port")
	[[ $(stat_field cg cgroup_headroom) != None ]] || fail "nswapd does not see its cgroup limit"

	probe_ok cg "${C[@]}" put 0-32767 >/dev/null	# 128 MiB
	usage_full=$(<"$cg/memory.usage_in_bytes")
	probe cg "${C[@]}" --duration 20 --verify serve-evict >"$WORK/cg-evict.out" 2>&1 &
	local serving=$!
	wait_until 5 ns_connected cg "$(client_id f1)" ||
		fail "cgroup: the evict client did not connect"
	# a local process in the same cgroup takes 160 MiB: about 24 MiB short
	bash -c "echo \$\$ >'$cg/cgroup.procs'; exec '$PROBE' hog 160 30" >"$WORK/hog.out" 2>&1 &
	HOG_PID=$!
	wait_until 10 grep -q "evict: tag .* answered" "$WORK/cg-evict.out" ||
		fail "cgroup: no EVICT under real pressure: $(tail -n 3 "$WORK/cg.log")"
	# on a busy machine the first rounds come while the hog still takes its
	# memory (CI once counted 76 pages): count once it holds all of it and
	# the rounds it caused are answered
	wait_until 20 grep -q "^hog: holding" "$WORK/hog.out" || fail "cgroup: the hog did not take its memory"
	wait_until 10 at_least 256 evicted_keys "$WORK/cg-evict.out"
	wait_until 5 at_most 0 stat_field cg evict_pending || fail "cgroup: round not over"
	asked=$(evicted_keys "$WORK/cg-evict.out")
	((asked >= 256 && asked < 32768)) || fail "cgroup: implausible eviction of $asked pages"
	assert_eq "$(stat_field cg held_pages)" $((32768 - asked)) "cgroup: pages held after eviction"
	assert_log cg "memory pressure: limit [0-9]+ pages, holding 32768"
	usage_drop() {
		usage_after=$(<"$cg/memory.usage_in_bytes")
		((usage_after < usage_full + (160 << 20) - asked * 4096 / 2))
	}
	wait_until 3 usage_drop || fail "cgroup: usage did not drop: $usage_full -> $usage_after"
	log "cgroup: hog of 160 MiB in a 320 MiB cgroup: EVICT for $asked pages, all verified and freed"
	kill "$HOG_PID" 2>/dev/null || true
	wait "$HOG_PID" 2>/dev/null || true
	kill "$serving" 2>/dev/null || true
	wait "$serving" 2>/dev/null || true
	stop_server cg
}

remove_cgroup() {
	set +e
	if [[ -n ${CGROUP_DIR:-} ]]; then
		[[ -n ${HOG_PID:-} ]] && kill "$HOG_PID" 2>/dev/null
		kill "${SERVER_PID[cg]:-}" 2>/dev/null
		wait 2>/dev/null
		# exited tasks can take a moment to leave the cgroup
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$CGROUP_DIR" 2>/dev/null && break
			sleep 0.2
		done
		[[ -d $CGROUP_DIR ]] && echo "warning: could not remove $CGROUP_DIR" >&2
	fi
	cleanup
}
trap remove_cgroup EXIT

make_key k
simulated_pressure
cgroup_pressure
echo "ok"
