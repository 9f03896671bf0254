#!/bin/bash
# NSWAP2L_CAP_SEALED_GET and NSWAP2L_CAP_PUT_FREES: the server announces
# both.  With both in effect, a PUT frees the keys it carries first (a
# missing one ignored), keys_freed and the pages held follow, and a GET
# reply's MAC covers its header and seals, not its pages; without them a
# GET reply's MAC covers its pages, as before.  The request counters count
# every message.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key"
CAPS=("$REPO_DIR/tests/host/caps.py" "${SERVER_PORT[s]}" --key-file "$WORK/k.key")

# caps_ok ARGS: caps.py must succeed; prints its output
caps_ok() {
	local out
	out=$(python3 "${CAPS[@]}" "$@" 2>&1) || fail "caps.py $* -> $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	printf '%s\n' "$out"
}

# counters NAME: the server's counters, one line
counters() {
	stats "$1" --json | json_query \
		"' '.join('%s=%s' % (k, d['server'][k]) for k in ('held_pages', 'requests_put', 'requests_get', 'requests_free', 'pages_put', 'keys_freed'))"
}

assert_eq "$(counters s)" \
	"held_pages=0 requests_put=0 requests_get=0 requests_free=0 pages_put=0 keys_freed=0" \
	"counters of a new server"

# both: 8 pages, then 2 more freeing 0, 1, 2 and 1000 (never stored)
out=$(caps_ok --caps both --client-id c1 put:0-7 put:8-9:free=0,1,2,1000 get:3-9 noent:0-0)
log "both: $(tr '\n' ' ' <<<"$out")"
assert_eq "$(sed -n 1p <<<"$out")" "caps=0xfd" "capabilities announced (EVICT, SEALED_GET, PUT_FREES, MOVED, PEER, COPY, RELEASE)"
assert_eq "$(grep -c '^mac=seals$' <<<"$out")" 1 "GET reply MACed over header and seals"
assert_eq "$(counters s)" \
	"held_pages=7 requests_put=2 requests_get=2 requests_free=0 pages_put=10 keys_freed=3" \
	"after PUTs with frees"
# a FREE counts the keys that were held; a PUT of no new page that frees
# every other key leaves one page
caps_ok --caps both --client-id c1 free:3,4,2000 put:9-9:free=5,6,7,8 get:9-9 >/dev/null
assert_eq "$(counters s)" \
	"held_pages=1 requests_put=3 requests_get=3 requests_free=1 pages_put=11 keys_freed=9" \
	"after a FREE and an overwrite with frees"

# the namespace's own numbers follow too
assert_eq "$(ns_field s "$(client_id c1)" pages)" 1 "pages of the namespace"

# without the capabilities: the MAC covers the pages; each one alone
for caps in none frees sealed; do
	out=$(caps_ok --caps $caps --client-id c2 put:20-21 get:20-21 free:20,21)
	want=pages
	[[ $caps == sealed ]] && want=seals
	assert_eq "$(grep '^mac=' <<<"$out")" "mac=$want" "caps $caps: what a GET reply's MAC covers"
	assert_eq "$(sed -n 1p <<<"$out")" "caps=0xfd" "capabilities announced to a client with $caps"
	log "caps $caps: GET reply MACed over the $want"
done
assert_eq "$(counters s)" \
	"held_pages=1 requests_put=6 requests_get=6 requests_free=4 pages_put=17 keys_freed=15" \
	"after the sessions without both capabilities"

# the human form names them too
out=$(stats s)
grep -Eq "requests: +6 PUT \(17 pages stored\), 6 GET, 4 FREE; 15 keys freed" <<<"$out" ||
	fail "nswapd --stats does not show the request counters: $out"
assert_eq "$(stat_field s protocol_errors)" 0 "protocol errors"
stop_server s
