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

# wait_gone PID SECONDS: succeeds once PID has exited (a zombie counts)
wait_gone() {
	local pid=$1 n=$(($2 * 10)) state start
	while ((n-- > 0)); do
		read -r state start < <(proc_state "$pid") || return 0
		[[ "$state" == Z || "$state" == X ]] && return 0
		sleep 0.1
	done
	return 1
}
