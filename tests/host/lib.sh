# SPDX-License-Identifier: GPL-2.0
# Helpers for the host tests of nswapd, sourced by tests/host/NN-*.sh.
# Every server listens on 127.0.0.1 only, on a port the kernel picks.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NSWAPD=${NSWAPD:-$REPO_DIR/tools/nswapd/nswapd}	# NSWAPD=... to test another build
PROBE=$REPO_DIR/tools/nswapd/nswap-probe
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nswapd-test.XXXXXX")
declare -A SERVER_PID SERVER_PORT

# On exit, also after a failure: never itself fail (set -e is off here).
cleanup() {
	local name pid
	set +e
	for name in "${!SERVER_PID[@]}"; do
		kill "${SERVER_PID[$name]}" 2>/dev/null || true
		# one a test stopped (SIGSTOP) takes its SIGTERM once continued
		kill -CONT "${SERVER_PID[$name]}" 2>/dev/null || true
	done
	# probes a failed test left running in the background
	for pid in $(jobs -p); do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [[ -n ${KEEP_WORK:-} ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

log() {
	echo "# $*"
}

# make_key NAME [BYTES]: random key file $WORK/NAME.key
make_key() {
	head -c "${2:-32}" /dev/urandom >"$WORK/$1.key"
	chmod 600 "$WORK/$1.key"
}

# start_server NAME [nswapd options]: runs nswapd in the foreground with its
# log in $WORK/NAME.log and status socket $WORK/NAME.sock
start_server() {
	local name=$1 i
	shift
	rm -f "$WORK/$name.port"
	"$NSWAPD" --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --foreground \
		--status-socket "$WORK/$name.sock" "$@" >"$WORK/$name.log" 2>&1 &
	SERVER_PID[$name]=$!
	for ((i = 0; i < 100; i++)); do
		if [[ -s $WORK/$name.port ]]; then
			SERVER_PORT[$name]=$(<"$WORK/$name.port")
			return 0
		fi
		kill -0 "${SERVER_PID[$name]}" 2>/dev/null || break
		sleep 0.05
	done
	cat "$WORK/$name.log" >&2
	fail "nswapd $name did not start"
}

# stop_server NAME: SIGTERM, and the exit status must be 0
stop_server() {
	local name=$1 status=0
	kill -TERM "${SERVER_PID[$name]}"
	wait "${SERVER_PID[$name]}" || status=$?
	unset "SERVER_PID[$name]"
	((status == 0)) || fail "nswapd $name exited with $status after SIGTERM"
}

# probe NAME [nswap-probe options and command]: talks to server NAME
probe() {
	local name=$1
	shift
	"$PROBE" --server "127.0.0.1:${SERVER_PORT[$name]}" --timeout 10 "$@"
}

# probe_ok NAME ARGS: the probe must reach its expected outcome
probe_ok() {
	local out
	out=$(probe "$@" 2>&1) || fail "nswap-probe $* -> $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	printf '%s\n' "$out"
}

server_alive() {
	kill -0 "${SERVER_PID[$1]}" 2>/dev/null || fail "nswapd $1 is not running any more"
}

# assert_log NAME REGEX [WHAT]: the server's log has a matching line
assert_log() {
	grep -Eq -- "$2" "$WORK/$1.log" || fail "${3:-log of $1 has no line matching '$2'}"
}

# stats NAME [--json]
stats() {
	local name=$1
	shift
	"$NSWAPD" --stats --status-socket "$WORK/$name.sock" "$@"
}

# stat_field NAME FIELD: a server field from the status socket (line format)
stat_field() {
	stats "$1" --json | json_query "d['server']['$2']"
}

# ns_field NAME CLIENT_ID_HEX FIELD: a field of one namespace, "none" if absent
ns_field() {
	stats "$1" --json | json_query \
		"next((n['$3'] for n in d['namespaces'] if n['id'] == '$2'), 'none')"
}

# ns_connected NAME CLIENT_ID_HEX: the namespace has an authenticated
# connection (the log's "authenticated" lines are rate-limited: not for this)
ns_connected() {
	local connections
	connections=$(ns_field "$1" "$2" connections)
	[[ $connections != none ]] && ((connections >= 1))
}

# free_ports N: N free TCP ports on 127.0.0.1, for servers that must know
# each other's before they start: below the ephemeral range, where no
# connection's local end takes them meanwhile
free_ports() {
	python3 -c '
import random, socket, sys
free = []
while len(free) < int(sys.argv[1]):
    port = random.randrange(20000, 32000)
    try:
        socket.socket().bind(("127.0.0.1", port))
    except OSError:
        continue
    if port not in free:
        free.append(port)
print(*free)' "$1"
}

# json_query EXPR: evaluates EXPR with d = the JSON document on stdin
json_query() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

# client_id HEX: the 32-digit form nswapd prints of a short --client-id
client_id() {
	printf '%032x' "$((16#$1))"
}

assert_eq() {
	[[ $1 == "$2" ]] || fail "$3: got '$1', expected '$2'"
}

# wait_until SECONDS COMMAND...: polls until COMMAND succeeds
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# le VALUE BYTES: VALUE as BYTES little-endian bytes on stdout
le() {
	local v=$1 n=$2 i byte out=
	for ((i = 0; i < n; i++)); do
		printf -v byte '\\x%02x' $(((v >> (8 * i)) & 255))
		out+=$byte
	done
	printf "$out"
}

# header TYPE COUNT LENGTH [FLAGS [STATUS [MAGIC [TAG]]]]: a message header
header() {
	le "${6:-0x4c32574e}" 4
	le "$1" 2
	le "${4:-0}" 2
	le "${7:-9}" 4
	le "$2" 4
	le "$3" 4
	le "${5:-0}" 4
	le 0 8
}

# page keys must be below 1 << KEY_LIMIT_SHIFT
KEY_LIMIT_SHIFT=$(sed -n 's/^#define NSWAP2L_PROTO_KEY_LIMIT[[:space:]]*(1ULL << \([0-9]*\)).*/\1/p' \
	"$REPO_DIR/include/uapi/linux/nswap2l_proto.h")
# a PUT carries, for each page, its key, its seal and the page
SEAL_SIZE=$(sed -n 's/^#define NSWAP2L_PROTO_SEAL_SIZE[[:space:]]*\([0-9]*\).*/\1/p' \
	"$REPO_DIR/include/uapi/linux/nswap2l_proto.h")
PUT_ITEM_SIZE=$((8 + SEAL_SIZE + 4096))
MSG_HELLO=1 MSG_AUTH=2 MSG_PUT=3 MSG_GET=4 MSG_FREE=5 MSG_CAPACITY=6 MSG_EVICT=7 MSG_REPLY=0x8000
