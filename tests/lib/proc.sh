# shellcheck shell=bash
# Processes the harness started and must see gone.  Sourced by tests/run
# and tests/lib/server-control.

# "STATE STARTTIME" of a process from /proc/PID/stat, or nothing
proc_state() {
	local s f
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	read -r -a f <<<"$s"
	echo "${f[0]} ${f[19]}"
}

# Threads of PID other than its leader that have not exited yet.
other_threads_left() {
	local t
	for t in /proc/"$1"/task/*; do
		[[ "${t##*/}" != "$1" && -e "$t/stat" ]] && return 0
	done
	return 1
}

# wait_gone PID SECONDS: succeeds once PID has exited (a zombie counts, once
# its other threads are gone too: a killed multi-threaded server's leader is
# a zombie before its last thread closes the files, its listening socket)
wait_gone() {
	local pid=$1 n=$(($2 * 10)) state start
	while ((n-- > 0)); do
		read -r state start < <(proc_state "$pid") || return 0
		[[ "$state" == Z || "$state" == X ]] && ! other_threads_left "$pid" && return 0
		sleep 0.1
	done
	return 1
}
