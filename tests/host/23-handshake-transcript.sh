#!/bin/bash
# Protocol version 5 binds every byte of the handshake into the proofs: the
# client's over the transcript of the HELLO exchange, the server's over it
# and its AUTH reply's header.  A HELLO field changed on the way (the
# client's capabilities) or a HELLO reply field (max_pages) makes the
# server refuse the client's proof; a changed AUTH reply header (namespace
# flag, free_pages) makes the server's proof fail at the client.  The C
# clients (nswap-probe, tests/progs/netram-hello) and the Python reference
# (tests/lib/session_mac.py, through attack.py) agree with nswapd.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
make_key k
make_key wrong
start_server s --key-file "$WORK/k.key" --max 1G	# free_pages from --max, not from MemAvailable, which moves
C=(--key-file "$WORK/k.key" --client-id 7a)

# the probe trusts the flag and free_pages of the AUTH reply once it checked
# (its output is captured first: grep -q on a pipe would end the writer with
# SIGPIPE after the first line, which pipefail reports as a failure)
out=$(probe_ok s "${C[@]}" hello)
[[ $out =~ (^|$'\n')"handshake: namespace new, free_pages "[0-9]+($'\n'|$) ]] ||
	fail "probe: no new namespace at the first handshake: $out"
probe_ok s "${C[@]}" put 0-9 >/dev/null
out=$(probe_ok s "${C[@]}" hello)
[[ $out =~ (^|$'\n')"handshake: namespace found, free_pages "[0-9]+($'\n'|$) ]] ||
	fail "probe: the namespace is not found again: $out"

# tamper FIELD: a handshake in which the client's view of FIELD was changed
tamper() {
	"$ATTACK" "${SERVER_PORT[s]}" handshake --key-file "$WORK/k.key" --client-id 7b --tamper "$1"
}
# the same client (default) as the probe: the same free_pages
told=$(probe_ok s "${C[@]}" hello | sed -n 's/^handshake: .*, free_pages //p')
assert_eq "$(tamper none)" "auth=ok namespace=new free_pages=$told" \
	"untouched handshake (Python reference)"
before=$(stat_field s auth_failures)
for field in hello-capabilities reply-max-pages; do
	out=$(tamper "$field")
	[[ $out == "auth=refused (AUTH refused with status 4)" ]] || fail "$field changed: $out"
	log "$field changed on the way: the server refuses the client's proof"
done
assert_eq "$(stat_field s auth_failures)" $((before + 2)) "refused proofs counted"
for field in auth-flags auth-free-pages; do
	out=$(tamper "$field")
	[[ $out == "auth=badserver (the server's proof is wrong)" ]] || fail "$field changed: $out"
	log "$field changed on the way: the server's proof fails at the client"
done

# the guest's static client, built here as tests/run builds it
cc -O2 -Wall -Wextra -Werror -I "$REPO_DIR/include/uapi" -o "$WORK/netram-hello" \
	"$REPO_DIR/tests/progs/netram-hello.c" || fail "building netram-hello"
out=$("$WORK/netram-hello" "127.0.0.1:${SERVER_PORT[s]}" "$WORK/k.key") || fail "netram-hello: $out"
[[ $out =~ ^version=5\ max_pages=64\ caps=0xfd\ free_pages=[0-9]+\ namespace=new\ auth=ok$ ]] ||
	fail "netram-hello: '$out'"
status=0
out=$("$WORK/netram-hello" "127.0.0.1:${SERVER_PORT[s]}" "$WORK/wrong.key") || status=$?
assert_eq "$status" 3 "netram-hello exit status with a wrong key ($out)"
log "netram-hello: $("$WORK/netram-hello" "127.0.0.1:${SERVER_PORT[s]}")"
server_alive s
stop_server s
echo "ok"
