#!/bin/bash
# Half-sent messages: an authenticated connection that starts a message
# (part of a header, or a header and part of its payload) and does not
# finish it within --message-timeout is closed; before authentication a
# header announcing more than a handshake message is closed at once.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
make_key k
start_server s --key-file "$WORK/k.key" --message-timeout 2
GOOD=(--key-file "$WORK/k.key" --client-id 600d)

# partial NAME HANDSHAKE BYTES: the first BYTES of a one-page PUT; prints
# how long the server took to close
partial() {
	"$ATTACK" "${SERVER_PORT[s]}" partial --key-file "$WORK/k.key" --handshake "$2" \
		--bytes "$3" --hold 6 | sed -n 's/^closed_after=//p' | grep . ||
		fail "$1: not closed"
}

# seconds_between VALUE MIN MAX
seconds_between() {
	python3 -c "import sys; sys.exit(not $2 <= $1 <= $3)"
}

after=$(partial "half a header" full 20)
seconds_between "$after" 1.5 4 || fail "half a header: closed after $after s"
after=$(partial "header and part of the payload" full 100)
seconds_between "$after" 1.5 4 || fail "part of the payload: closed after $after s"
assert_eq "$(grep -c "message not complete after 2 s, closing" "$WORK/s.log")" 2 \
	"log lines about half messages"
log "half a header, part of a payload: closed after 2 s"

after=$(partial "4 KiB PUT before HELLO" none 100)
seconds_between "$after" 0 1 || fail "4 KiB PUT before HELLO: closed after $after s"
assert_log s "message too long before authentication, closing"
log "a 4 KiB PUT before authentication: closed at once"

server_alive s
probe_ok s "${GOOD[@]}" put 0-63 >/dev/null
probe_ok s "${GOOD[@]}" get 0-63 >/dev/null
lines=$(wc -l <"$WORK/s.log")
((lines <= 20)) || fail "log of $lines lines"
stop_server s
echo "ok"
