#!/bin/bash
# nswapd --metrics ADDR:PORT: GET /metrics answers the status as Prometheus
# text (prometheus_client's parser reads it, the pages stored are there in
# bytes); any other path is 404, another method 405, garbage or a request
# longer than 4 KiB 400, each answer closing its connection.  Clients that
# connect and never ask take at most 4 places for at most 5 s: a fifth is
# closed at once, and once they are gone the metrics answer again.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key" --metrics 127.0.0.1:0
port=$(sed -n 's|.*metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$WORK/s.log")
[[ -n $port ]] || fail "no 'metrics on' line in the log: $(cat "$WORK/s.log")"
probe_ok s --key-file "$WORK/k.key" --client-id a1 put 0-41 >/dev/null

cat >"$WORK/metrics_client.py" <<'PY'
import socket, sys, time
from prometheus_client.parser import text_string_to_metric_families

port = int(sys.argv[1])

def ask(raw):
    """the status line and body nswapd answers RAW with (it closes after)"""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    length = [int(l.split(":")[1]) for l in lines if l.lower().startswith("content-length:")]
    assert length == [len(body)], (lines, len(body))
    return lines[0], body.decode()

what = sys.argv[2]
if what == "answers":
    status, body = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK", status
    held = [s.value for f in text_string_to_metric_families(body) for s in f.samples
            if s.name == "nswapd_held_bytes"]
    assert held == [42 * 4096], held
    assert ask(b"GET /metrics?name=x HTTP/1.0\n\n")[0] == "HTTP/1.1 200 OK"
    assert ask(b"GET /other HTTP/1.1\r\n\r\n")[0] == "HTTP/1.1 404 Not Found"
    assert ask(b"POST /metrics HTTP/1.1\r\n\r\n")[0] == "HTTP/1.1 405 Method Not Allowed"
    assert ask(b"hello there\r\n\r\n")[0] == "HTTP/1.1 400 Bad Request"
    assert ask(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 5000)[0] == "HTTP/1.1 400 Bad Request"
    print("200, 404, 405, 400 as they should be")
elif what == "silent":
    # four that never ask, then a fifth: closed at once
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
    time.sleep(0.5)
    fifth = socket.create_connection(("127.0.0.1", port), timeout=3)
    assert fifth.recv(1) == b"", "a fifth client was not closed at once"
    # the four are closed within the 5 s they have (and a tick)
    for s in held:
        s.settimeout(8)
        assert s.recv(1) == b"", "a silent client was not closed"
    print("4 silent clients closed in time, a fifth at once")
PY
/usr/bin/python3 "$WORK/metrics_client.py" "$port" answers >"$WORK/answers.out" 2>&1 ||
	fail "answers: $(tail -n 3 "$WORK/answers.out")"
log "$(cat "$WORK/answers.out")"
/usr/bin/python3 "$WORK/metrics_client.py" "$port" silent >"$WORK/silent.out" 2>&1 ||
	fail "silent clients: $(tail -n 3 "$WORK/silent.out")"
log "$(cat "$WORK/silent.out")"
assert_log s "metrics: a client did not ask in 5 s, closing"
/usr/bin/python3 "$WORK/metrics_client.py" "$port" answers >/dev/null 2>&1 || fail "no answer after the silent clients"
server_alive s || fail "nswapd died"
echo "ok"
