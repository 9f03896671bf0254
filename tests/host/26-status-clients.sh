#!/bin/bash
# The local status socket cannot take the daemon's descriptors: under
# "ulimit -n 64", 68 status clients that connect and never read their
# report (400 KB, 2000 namespaces: more than a socket buffer holds) are
# served 4 at a time, the others refused at once, and those 4 closed when
# they have not taken their report in 5 s; meanwhile clients are served,
# and afterwards nswapd --stats works again.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
HOLDERS=68
REAL_NSWAPD=$NSWAPD
NSWAPD=$WORK/nswapd-64-files
printf '#!/bin/bash\nulimit -n 64\nexec "%s" "$@"\n' "$REAL_NSWAPD" >"$NSWAPD"
chmod +x "$NSWAPD"
make_key k
start_server s --key-file "$WORK/k.key"
GOOD=(--key-file "$WORK/k.key" --client-id 600d)

for i in $(seq 1 8); do
	"$ATTACK" "${SERVER_PORT[s]}" churn 250 --client "n$i" --key-file "$WORK/k.key" \
		>"$WORK/churn" 2>&1 || fail "churn: $(cat "$WORK/churn")"
done
assert_eq "$(stat_field s namespaces)" 2000 "namespaces"
report=$(stats s | wc -c)
log "status report for people: $report bytes"

# hold.py PATH N SECONDS: N connections to the status socket (retried while
# its backlog is full), none of them read, held for SECONDS
cat >"$WORK/hold.py" <<'PY'
import socket, sys, time
held, deadline = [], time.monotonic() + 5
while len(held) < int(sys.argv[2]) and time.monotonic() < deadline:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(sys.argv[1])
        held.append(sock)
    except BlockingIOError:
        sock.close()
        time.sleep(0.01)
print("connected=%d" % len(held), flush=True)
time.sleep(float(sys.argv[3]))
PY
python3 "$WORK/hold.py" "$WORK/s.sock" $HOLDERS 10 >"$WORK/hold" 2>&1 &
HOLD_PID=$!
wait_until 10 grep -q "^connected=" "$WORK/hold" || fail "status clients did not connect"
log "status clients that do not read: $(cat "$WORK/hold")"
probe_ok s "${GOOD[@]}" --timeout 3 put 0-63 >/dev/null
probe_ok s "${GOOD[@]}" --timeout 3 get 0-63 >/dev/null
fds=$(ls "/proc/${SERVER_PID[s]}/fd" | wc -l)
((fds <= 16 + 8)) || fail "$fds descriptors open with status clients that do not read"
assert_log s "status socket: 4 clients being served, refusing another"

# the 4 served are closed 5 s after they came; then the report goes out again
sleep 5.5
assert_log s "status socket: a client did not take its report in 5 s, closing"
stats_work() {
	stats s --json >/dev/null 2>&1
}
wait_until 3 stats_work || fail "nswapd --stats does not work after the status clients' time"
log "$fds descriptors with $HOLDERS status clients not reading; clients served; --stats works after 5 s"
wait "$HOLD_PID"
server_alive s
stop_server s
echo "ok"
