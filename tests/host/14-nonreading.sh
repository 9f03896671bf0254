#!/bin/bash
# 100 authenticated connections of one client send GETs and never read the
# replies.  The buffer budget is a cap: nswapd queues a reply only while
# the budget (and the client's part of it, here 100/256 of 16 MiB) has room
# for it, so its RSS stays under --max + the budget + a small constant per
# connection (its handshake buffer and bookkeeping, 16 KiB here) + 8 MiB
# for the program; and a legitimate client, another client name, is served
# meanwhile from the rest of the budget.
source "$(dirname "$0")/lib.sh"

ATTACK=$REPO_DIR/tests/host/attack.py
CLIENTS=100
make_key k
start_server s --key-file "$WORK/k.key" --max 16M --buffer-budget 16M \
	--max-connections-per-client $CLIENTS
GOOD=(--key-file "$WORK/k.key" --client good --client-id 600d)
probe_ok s --key-file "$WORK/k.key" --client-id a77ac put 0-63 >/dev/null

# each asks for 100 x 258 KiB: 2.5 GiB of replies in all
"$ATTACK" "${SERVER_PORT[s]}" nonreading $CLIENTS --key-file "$WORK/k.key" --gets 100 \
	--hold 6 >"$WORK/attack" 2>&1 &
ATTACK_PID=$!
rss() {
	awk '/^VmRSS:/ { print $2 }' "/proc/${SERVER_PID[s]}/status"
}
max_rss=0
for i in $(seq 1 8); do
	sleep 0.5
	r=$(rss)
	((r > max_rss)) && max_rss=$r
done
limit_kb=$(((16 + 16 + 8) * 1024 + CLIENTS * 16))
((max_rss <= limit_kb)) || fail "RSS $max_rss kB over $limit_kb kB"
buffers=$(stat_field s buffer_bytes)
((buffers <= (16 << 20) + CLIENTS * 512)) || fail "buffers of $buffers bytes over the budget"
start=$SECONDS
probe_ok s "${GOOD[@]}" --timeout 3 put 0-63 >/dev/null
probe_ok s "${GOOD[@]}" --timeout 3 get 0-63 >/dev/null
((SECONDS - start <= 3)) || fail "the legitimate client waited $((SECONDS - start)) s"
wait "$ATTACK_PID" || fail "attack: $(cat "$WORK/attack")"
log "$CLIENTS clients not reading ($(cat "$WORK/attack")): RSS up to $max_rss kB (limit" \
	"$limit_kb kB), buffers $buffers bytes; legitimate client served"
server_alive s
lines=$(wc -l <"$WORK/s.log")
((lines <= CLIENTS + 20)) || fail "log of $lines lines"
stop_server s
echo "ok"
