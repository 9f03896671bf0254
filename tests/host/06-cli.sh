#!/bin/bash
# Command line: --help, --version, bad options (exit 2 with a message),
# --stats for people and as JSON, --peer with its --peer-key, a peer
# that does not answer shown as such,
# daemon mode, SIGTERM; the shipped /etc/default/nswapd.
source "$(dirname "$0")/lib.sh"

"$NSWAPD" --help >"$WORK/help" || fail "--help exit status"
grep -q -- "--listen ADDR:PORT" "$WORK/help" || fail "--help does not describe --listen"
for option in --max-connections-per-client --max-namespaces-per-client --buffer-budget \
	--peer --peer-key; do
	grep -q -- "$option" "$WORK/help" || fail "--help does not describe $option"
done
"$NSWAPD" --version | grep "^nswapd " >/dev/null || fail "--version"

make_key k
head -c 8 /dev/urandom >"$WORK/short.key"
head -c 300 /dev/urandom >"$WORK/long.key"
# bad_option WHAT ARGS...: exit status 2 and a message on stderr
bad_option() {
	local what=$1 status=0
	shift
	"$NSWAPD" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
	((status == 2)) || fail "$what: exit status $status, expected 2"
	[[ -s $WORK/err ]] || fail "$what: no message"
	log "$what: $(head -n 1 "$WORK/err")"
}
K=(--key-file "$WORK/k.key")
bad_option "unknown option" --bogus
bad_option "no --listen" "${K[@]}"
bad_option "bad address" --listen 1.2.3:80 "${K[@]}"
bad_option "host name" --listen localhost:80 "${K[@]}"
bad_option "port too big" --listen 127.0.0.1:70000 "${K[@]}"
bad_option "no key" --listen 127.0.0.1:0
bad_option "key and insecure" --listen 127.0.0.1:0 "${K[@]}" --insecure-no-auth
bad_option "key too short" --listen 127.0.0.1:0 --key-file "$WORK/short.key"
bad_option "key too long" --listen 127.0.0.1:0 --key-file "$WORK/long.key"
bad_option "missing key file" --listen 127.0.0.1:0 --key-file "$WORK/none.key"
bad_option "bad size" --listen 127.0.0.1:0 "${K[@]}" --max 12X
bad_option "size below a page" --listen 127.0.0.1:0 "${K[@]}" --max 100
bad_option "bad reserve" --listen 127.0.0.1:0 "${K[@]}" --reserve -1
bad_option "bad grace" --listen 127.0.0.1:0 "${K[@]}" --grace soon
bad_option "bad log level" --listen 127.0.0.1:0 "${K[@]}" --log-level loud
bad_option "bad peer" --listen 127.0.0.1:0 "${K[@]}" --peer somewhere
bad_option "peer without a peer key" --listen 127.0.0.1:0 "${K[@]}" --peer 127.0.0.1:9
bad_option "peer key too long" --listen 127.0.0.1:0 "${K[@]}" --peer-key "$WORK/long.key"
bad_option "no connections" --listen 127.0.0.1:0 "${K[@]}" --max-connections 0
bad_option "no handshakes" --listen 127.0.0.1:0 "${K[@]}" --max-unauth-per-address 0
bad_option "bad idle timeout" --listen 127.0.0.1:0 "${K[@]}" --idle-timeout -5
bad_option "no message timeout" --listen 127.0.0.1:0 "${K[@]}" --message-timeout 0
bad_option "budget below a message" --listen 127.0.0.1:0 "${K[@]}" --buffer-budget 64K
bad_option "budget below a request and a reply" --listen 127.0.0.1:0 "${K[@]}" --buffer-budget 500K
bad_option "no connections per client" --listen 127.0.0.1:0 "${K[@]}" --max-connections-per-client 0
bad_option "no namespaces per client" --listen 127.0.0.1:0 "${K[@]}" --max-namespaces-per-client x
bad_option "--json without --stats" --json
bad_option "stray argument" --listen 127.0.0.1:0 "${K[@]}" extra

# sizes with suffixes; a --peer nobody answers on is not connected
start_server s "${K[@]}" --max 2G --reserve 512K --grace 30 --log-level debug --peer 127.0.0.1:9 \
	--peer-key "$WORK/k.key"
assert_log s "1 peers to move pages to"
assert_eq "$(stats s --json | json_query "d['peers']")" \
	"[{'address': '127.0.0.1:9', 'connected': 0, 'free_pages': 0}]" "a peer that does not answer"
assert_eq "$(stat_field s max_pages)" 524288 "--max 2G in pages"
assert_eq "$(stat_field s reserve)" 524288 "--reserve 512K in bytes"
assert_eq "$(stat_field s max_connections_per_client)" 64 "default connections per client"
assert_eq "$(stat_field s max_namespaces_per_client)" 256 "default namespaces per client"
probe_ok s "${K[@]}" --client-id 5eed put 0-99 >/dev/null
probe_ok s "${K[@]}" --client-id 5eed get 0-9 >/dev/null
probe_ok s "${K[@]}" --client-id f00 put 0-9 >/dev/null
probe_ok s "${K[@]}" --client-id f00 --expect noent get 10 >/dev/null

# people's --stats
stats s >"$WORK/stats.txt" || fail "--stats failed"
grep -q "held: *110 pages" "$WORK/stats.txt" || fail "--stats: no 'held: 110 pages': $(cat "$WORK/stats.txt")"
grep -Eq "^  default +$(client_id 5eed) +100 +0 " "$WORK/stats.txt" || fail "--stats: no line for 5eed"
grep -Eq "^  default +$(client_id f00) +10 +0 " "$WORK/stats.txt" || fail "--stats: no line for f00"
grep -q "namespaces: 2" "$WORK/stats.txt" || fail "--stats: namespace count"

# scripts' --stats --json
stats s --json >"$WORK/stats.json" || fail "--stats --json failed"
check_json() {
	json_query "$1" <"$WORK/stats.json"
}
assert_eq "$(check_json "d['server']['held_pages']")" 110 "JSON held_pages"
assert_eq "$(check_json "len(d['namespaces'])")" 2 "JSON namespaces"
assert_eq "$(check_json "[n['pages'] for n in d['namespaces'] if n['id'] == '$(client_id 5eed)'][0]")" \
	100 "JSON pages of 5eed"
assert_eq "$(check_json "[n['requests'] for n in d['namespaces'] if n['id'] == '$(client_id f00)'][0]")" \
	2 "JSON requests of f00"
assert_eq "$(check_json "[n['errors'] for n in d['namespaces'] if n['id'] == '$(client_id f00)'][0]")" \
	1 "JSON errors of f00 (one NOENT)"
assert_eq "$(check_json "d['server']['connections']")" 0 "JSON connections"
"$NSWAPD" --stats --status-socket "$WORK/nothing.sock" 2>/dev/null && fail "--stats on no server succeeded"

# SIGTERM: clean exit, status socket removed
stop_server s
assert_log s "received Terminated, exiting"
[[ ! -e $WORK/s.sock ]] || fail "status socket left behind"

# daemon mode: the command returns, the daemon serves, SIGTERM ends it
"$NSWAPD" --listen 127.0.0.1:0 --port-file "$WORK/d.port" --status-socket "$WORK/d.sock" \
	"${K[@]}" || fail "daemon start"
SERVER_PORT[d]=$(<"$WORK/d.port")
pid=$(stat_field d pid)
SERVER_PID[d]=$pid
[[ $(ps -o sid= -p "$pid" | tr -d ' ') == "$pid" ]] && fail "daemon is a session leader (no second fork)"
probe_ok d "${K[@]}" put 1 >/dev/null
kill -TERM "$pid"
wait_until 5 test ! -e "/proc/$pid" || fail "daemon did not exit on SIGTERM"
unset "SERVER_PID[d]"

# The shipped /etc/default/nswapd, as nswapd.service passes it: with
# NSWAPD_LISTEN not yet set, nswapd says where to set it; set, its
# NSWAPD_OPTIONS keep a quarter of MemTotal (here 1 GiB) for the machine.
# shellcheck disable=SC1091
source "$REPO_DIR/tools/nswapd/nswapd.default"
status=0
"$NSWAPD" --foreground --listen "$NSWAPD_LISTEN" "${K[@]}" $NSWAPD_OPTIONS 2>"$WORK/default.err" || status=$?
((status == 2)) || fail "the default config, NSWAPD_LISTEN unset: exit status $status, expected 2"
grep -q "set NSWAPD_LISTEN=ADDR:PORT" "$WORK/default.err" ||
	fail "the default config, NSWAPD_LISTEN unset: $(cat "$WORK/default.err")"
printf 'MemTotal: 1048576 kB\nMemAvailable: 1048576 kB\n' >"$WORK/meminfo"
start_server def "${K[@]}" --memavailable-file "$WORK/meminfo" $NSWAPD_OPTIONS
assert_log def "reserve 256\.0 MiB" "the default config's reserve is not a quarter of 1 GiB"
stop_server def
echo "ok"
