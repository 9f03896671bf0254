#!/bin/bash
# A client that sends many GETs and does not read the replies: nswapd stops
# reading from it once its output backlog is a few MiB (its memory stays
# small), serves other clients meanwhile, and answers every request in
# order once the client reads again.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key"
SLOW=(--key-file "$WORK/k.key" --client-id 510)
probe_ok s "${SLOW[@]}" put 0-63 >/dev/null

# 1000 GETs of 64 pages, tagged 1 to 1000: 250 MiB of replies
for k in $(seq 0 63); do le "$k" 8; done >"$WORK/keys"
for i in $(seq 1 1000); do
	header $MSG_GET 64 512 0 0 0x4c32574e "$i"
	cat "$WORK/keys"
done >"$WORK/gets"
probe s "${SLOW[@]}" --pause 3 --timeout 2 --expect timeout raw "$WORK/gets" >"$WORK/slow.out" 2>&1 &
SLOW_PID=$!
wait_until 5 grep -q "^raw: sent" "$WORK/slow.out" || fail "the slow client did not send"
sleep 1
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/${SERVER_PID[s]}/status")
((rss < 24 * 1024)) || fail "nswapd buffers replies nobody reads: RSS $rss kB"
start=$SECONDS
probe_ok s --key-file "$WORK/k.key" --client-id 0fa5 --timeout 2 put 0-255 >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id 0fa5 --timeout 2 get 0-255 >/dev/null
((SECONDS - start <= 2)) || fail "another client waited for the slow one"
log "slow reader: RSS $rss kB while 250 MiB of replies are due; others served"

wait "$SLOW_PID" || fail "slow client: $(tail -n 2 "$WORK/slow.out")"
replies=$(grep -c "^recv GET-reply .* status=ok" "$WORK/slow.out")
assert_eq "$replies" 1000 "replies to the slow client"
# in order: tags 1..1000
grep -o "^recv GET-reply tag=[0-9]*" "$WORK/slow.out" | sed 's/.*=//' >"$WORK/tags"
seq 1 1000 | cmp -s - "$WORK/tags" || fail "replies out of order"
stop_server s
echo "ok"
