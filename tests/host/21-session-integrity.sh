#!/bin/bash
# Session integrity: after the handshake every message carries a MAC under
# a key of this session, with its sequence number.  A message with a wrong
# MAC, without one, replayed, or replayed by a relay that kept the
# connection after the client left closes the connection before anything
# is answered; the daemon keeps serving everyone else.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key"
C=(--key-file "$WORK/k.key" --client-id 51)
probe_ok s "${C[@]}" put 0-9 >/dev/null

{ header $MSG_GET 1 8; le 3 8; } >"$WORK/get"

# mac_closes CASE MODE WANT_REPLIES: sends the GET with --mac MODE; the
# connection must close after WANT_REPLIES GET replies, with a MAC failure
mac_closes() {
	local before out
	before=$(stat_field s mac_failures)
	out=$(probe_ok s "${C[@]}" --mac "$2" --expect closed raw "$WORK/get")
	assert_eq "$(grep -c "^recv GET-reply" <<<"$out")" "$3" "$1: GET replies before the close"
	assert_eq "$(stat_field s mac_failures)" $((before + 1)) "$1: MAC failures counted"
	server_alive s
	probe_ok s "${C[@]}" get 0-9 >/dev/null
	log "$1: closed, counted, the daemon still serves"
}

out=$(probe_ok s "${C[@]}" --mac good --expect timeout --timeout 1 raw "$WORK/get")
grep -q "^recv GET-reply" <<<"$out" || fail "a GET with a good MAC is not answered: $out"
mac_closes "MAC with one bit flipped" bad 0
mac_closes "message and MAC replayed" replay 1
# no MAC: the next message's bytes are taken as the MAC, which is wrong
cat "$WORK/get" "$WORK/get" >"$WORK/get2"
before=$(stat_field s mac_failures)
probe_ok s "${C[@]}" --mac none --expect closed raw "$WORK/get2" >/dev/null
assert_eq "$(stat_field s mac_failures)" $((before + 1)) "no MAC: MAC failures counted"
assert_log s "message MAC wrong \(injected, replayed or reordered\), closing"

# a relay on the path: forwards a client's session, then, when the client
# has gone, sends what it recorded again on the same connection
cat >"$WORK/relay.py" <<'PY'
import socket, sys, threading
listen = socket.create_server(("127.0.0.1", 0))
open(sys.argv[2], "w").write(str(listen.getsockname()[1]))
client, _ = listen.accept()
server = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
recorded = bytearray()
def to_client():
    try:
        while data := server.recv(65536):
            client.sendall(data)
    except OSError:
        pass
threading.Thread(target=to_client, daemon=True).start()
while data := client.recv(65536):
    recorded += data
    server.sendall(data)
# the client left; the relay keeps the connection and replays its requests
handshake = 32 + 96 + 32 + 32          # HELLO and AUTH with their headers
server.sendall(bytes(recorded[handshake:]))
server.settimeout(10)
got = 0
try:
    while data := server.recv(65536):
        got += len(data)
except OSError:
    pass
print(f"relay: replayed {len(recorded) - handshake} bytes, server sent {got} more bytes and closed")
PY
python3 "$WORK/relay.py" "${SERVER_PORT[s]}" "$WORK/relay.port" >"$WORK/relay.out" 2>&1 &
RELAY=$!
wait_until 5 test -s "$WORK/relay.port" || fail "relay did not start"
before=$(stat_field s mac_failures)
"$PROBE" --server "127.0.0.1:$(<"$WORK/relay.port")" "${C[@]}" get 0-9 >/dev/null || fail "GET through the relay"
wait "$RELAY" || fail "relay: $(cat "$WORK/relay.out")"
log "$(cat "$WORK/relay.out")"
grep -q "server sent 0 more bytes and closed" "$WORK/relay.out" || fail "the relay's replay was answered: $(cat "$WORK/relay.out")"
assert_eq "$(stat_field s mac_failures)" $((before + 1)) "relay replay: MAC failures counted"
probe_ok s "${C[@]}" get 0-9 >/dev/null
stop_server s
