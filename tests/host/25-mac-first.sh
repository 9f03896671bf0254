#!/bin/bash
# In a session the MAC of a message is checked before its header: a
# header injected without the key (here with a bad type, a tag, a count
# of its own, and a MAC that is wrong) closes the connection without any
# reply, so nothing of it is echoed under the session's MAC; a header
# announcing more than the protocol allows closes at once, nothing read.
# Only a message whose MAC checks, and so came from the client, gets an
# INVALID reply to what is wrong in it.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key"
C=(--key-file "$WORK/k.key" --client-id 5a)
probe_ok s "${C[@]}" put 0-9 >/dev/null

# raw_replies FILE MAC-MODE: sends FILE after the handshake; prints what came back
raw_replies() {
	probe_ok s "${C[@]}" --mac "$2" --expect closed raw "$1" | grep "^recv" || true
}

# closed_silently CASE FILE MAC_MODE COUNTER REASON: sending FILE closes the
# connection with nothing sent back, counted in COUNTER, REASON logged
closed_silently() {
	local before out
	before=$(stat_field s "$4")
	out=$(raw_replies "$2" "$3")
	[[ -z $out ]] || fail "$1: answered: $out"
	assert_eq "$(stat_field s "$4")" $((before + 1)) "$1: $4"
	assert_log s "$5" "$1: no warning '$5'"
	log "$1: closed, nothing sent"
}

header 99 5 0 0 0 0x4c32574e 0xdeadbeef >"$WORK/bad-type"
closed_silently "injected header (type 99, tag 0xdeadbeef, count 5), wrong MAC" \
	"$WORK/bad-type" bad mac_failures \
	"message MAC wrong \(injected, replayed or reordered\), closing"
# a GET announcing a payload longer than any message: nothing read either
{ header $MSG_GET 1 0x7fffffff; le 1 8; } >"$WORK/huge"
closed_silently "length over the limit" "$WORK/huge" none protocol_errors \
	"length over limit, closing"

# the client's own malformed message, MAC right: told INVALID, then closed
out=$(raw_replies "$WORK/bad-type" good)
[[ $out == "recv unknown-reply tag=3735928559 count=5 length=0 status=invalid free_pages="* ]] ||
	fail "no INVALID reply to an authenticated bad message: '$out'"
log "bad type with a right MAC: $out"
probe_ok s "${C[@]}" get 0-9 >/dev/null
server_alive s
stop_server s
echo "ok"
