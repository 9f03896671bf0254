#!/bin/bash
# --buffer-budget is a cap on every input buffer and every unsent byte of
# output, whatever peers do.  64 connections each sending a whole PUT at
# once (263 KiB, 16 MiB in all against a budget of 8 MiB) are read in turn
# as room comes back, every PUT is stored, and the input buffers shrink
# back once their PUTs are handled.  Then 96 connections of two clients
# that send GETs and never read their replies hold no more than the
# budget, and nswapd's RSS stays under --max + the budget + a small
# constant per connection.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
BUDGET_MIB=8 PUTS=64 READERS=48
make_key k
start_server s --key-file "$WORK/k.key" --max 64M --buffer-budget ${BUDGET_MIB}M
budget=$((BUDGET_MIB << 20))

# buffers_within EXTRA_PER_CONNECTION: buffer_bytes at most the budget and
# that much more for each connection
buffers_within() {
	local buffers connections
	buffers=$(stat_field s buffer_bytes)
	connections=$(stat_field s connections)
	((buffers <= budget + connections * $1)) ||
		fail "buffers of $buffers bytes for $connections connections, budget $budget"
	echo "$buffers"
}

"$ATTACK" "${SERVER_PORT[s]}" puts $PUTS --keys 64 --key-file "$WORK/k.key" --client-id 1000 \
	--hold 3 >"$WORK/puts" 2>&1 &
PUTS_PID=$!
max_buffers=0
for _ in $(seq 1 10); do
	sleep 0.1
	b=$(buffers_within 512)
	((b > max_buffers)) && max_buffers=$b
done
wait_until 20 grep -q "^stored=" "$WORK/puts" || fail "PUTs not answered: $(cat "$WORK/puts")"
assert_eq "$(cat "$WORK/puts")" "stored=$PUTS" "PUTs stored"
# handled: every input buffer is back to its base size (16 KiB)
after=$(buffers_within 512)
((after <= PUTS * (16 * 1024 + 512))) || fail "input buffers did not shrink: $after bytes"
log "$PUTS whole PUTs at once: buffers up to $max_buffers bytes (budget $budget), $after after"
wait "$PUTS_PID"

rss() {
	awk '/^VmRSS:/ { print $2 }' "/proc/${SERVER_PID[s]}/status"
}
readers=()
for c in reader1 reader2; do
	probe_ok s --key-file "$WORK/k.key" --client $c --client-id a77ac put 0-63 >/dev/null
	"$ATTACK" "${SERVER_PORT[s]}" nonreading $READERS --client $c --key-file "$WORK/k.key" \
		--gets 100 --hold 6 >"$WORK/$c" 2>&1 &
	readers+=($!)
done
max_rss=0 max_buffers=0
for _ in $(seq 1 8); do
	sleep 0.5
	b=$(buffers_within 512)
	((b > max_buffers)) && max_buffers=$b
	r=$(rss)
	((r > max_rss)) && max_rss=$r
done
# --max (64 MiB, of which the PUTs hold 16), the budget, 16 KiB a connection, 8 MiB of program
limit_kb=$(((16 + BUDGET_MIB + 8) * 1024 + 2 * READERS * 16))
((max_rss <= limit_kb)) || fail "RSS $max_rss kB over $limit_kb kB"
log "$((2 * READERS)) connections not reading: RSS up to $max_rss kB (limit $limit_kb kB)," \
	"buffers up to $max_buffers bytes"
wait "${readers[@]}" || fail "readers: $(cat "$WORK/reader1" "$WORK/reader2")"
server_alive s
probe_ok s --key-file "$WORK/k.key" --client good put 0-63 >/dev/null
probe_ok s --key-file "$WORK/k.key" --client good get 0-63 >/dev/null
stop_server s
echo "ok"
