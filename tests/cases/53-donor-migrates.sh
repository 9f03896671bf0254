# Server-to-server migration with real nswapd peers (issue 31, Nswap's
# Migrate): three nswapd, each the others' --peer under one --peer-key,
# except server 2, restarted with a peer key of its own.
# 1. server 2's wrong peer key is refused both ways (the logs say so) and
#    no page ever moves there, though the device uses it;
# 2. server 0 leaves (SIGTERM) holding pages of a reliability=none device:
#    they go to its peer, server 1, directly: every page verifies, none is
#    lost, nswapd 0 left none, and the client received and sent far less
#    than the pages' size (only MOVED and its answer);
# 3. server 0, back, comes under memory pressure with a reader verifying
#    pages all along: pages move to server 1 (its stats), not through the
#    client (bytes);
# 4. again, with pages rewritten and discarded while they move: rewritten
#    ones read the new data, discarded ones stay freed (read as zeros, held
#    by no server).
# An nswapd without migration fails 2 (pages come back through the client,
# EVICT).
# kernels: 6.1
# mem: 256M
# servers: 3 peers reserve=32M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=3072                                  # 12 MiB over three servers
servers_stat() { sysfs_stat nsw servers "$1" "$2"; }
bytes() { # sent|received: on every connection of the device
	echo $(($(netram_stat nsw 0 "$1") + $(netram_stat nsw 1 "$1") + $(netram_stat nsw 2 "$1")))
}
# the first peer record of server 0's report is server 1's
peer1_connected() { [ "$(server_stat 0 connected)" = 1 ]; }

# 1. a peer with a wrong peer key
server_ctl wrong-peer-key 2 >/dev/null || die "wrong-peer-key 2"
refused_both_ways() {
	set -- $(server_ctl peer-refusals 2) $(server_ctl peer-refusals 0)
	[ "$2" -ge 1 ] && [ "$8" -ge 1 ]
}
wait_until 60 nsw "no peer refusal logged" refused_both_ways
log "server 2: $(server_ctl peer-refusals 2); server 0: $(server_ctl peer-refusals 0)"
wait_until 30 nsw "server 0 is not connected to its peer server 1" peer1_connected

# 2. server 0 leaves: its pages go to server 1, not through the client
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S1,$S2 $KEY reliability=none" ||
	die "create failed"
blkpat write $DEV 0 $PAGES 53 || die "blkpat write"
show_status nsw
h0=$(netram_stat nsw 0 held) h1=$(netram_stat nsw 1 held) h2=$(netram_stat nsw 2 held)
log "before the leave: servers hold $h0, $h1, $h2 pages"
assert_eq "$((h0 + h1 + h2))" $PAGES "pages on the servers"
assert_gt "$h0" 256 "pages on server 0"
assert_eq "$(server_stat 0 held_pages)" "$h0" "pages nswapd 0 holds"
rx=$(bytes received) tx=$(bytes sent)
out=$(server_ctl term 0) || die "server_ctl term 0 failed"
log "server_ctl term 0: $out"
rx=$(($(bytes received) - rx)) tx=$(($(bytes sent) - tx))
show_status nsw
cat /sys/kernel/nswap2l/nsw/servers
log "during the leave the client received $rx and sent $tx bytes for $h0 pages ($((h0 * 4096)) bytes)"
case "$out" in
*"leave over (every page given back)"*": $h0 of $h0 pages given back, 0 pages of 0 namespaces left"*) ;;
*) die "nswapd 0 did not give every page back: $out" ;;
esac
assert_eq "$(server_stat 1 pages_migrated_in)" "$h0" "pages server 1 took from server 0"
assert_eq "$(server_stat 2 pages_migrated_in)" 0 "pages moved to server 2 (wrong peer key)"
assert_eq "$(servers_stat "$S0" moved_out)" "$h0" "moved_out of server 0 (the client's view)"
assert_eq "$(netram_stat nsw 0 evict_moved)" 0 "pages the client moved itself (EVICT)"
assert_lt "$rx" $((h0 * 4096 / 20)) "bytes the client received during the leave (< 5 % of the pages)"
assert_lt "$tx" $((h0 * 4096 / 20)) "bytes the client sent during the leave (< 5 % of the pages)"
assert_eq "$(netram_stat nsw 0 held)" 0 "pages the device has on server 0"
assert_eq "$(netram_stat nsw 1 held)" $((h0 + h1)) "pages the device has on server 1"
assert_eq "$(netram_stat nsw 2 held)" "$h2" "pages the device has on server 2"
assert_eq "$(server_stat 1 held_pages)" $((h0 + h1)) "pages nswapd 1 holds"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
set -- $(blkpat_scan_counts $DEV 0 $PAGES 53)
assert_eq "$*" "$PAGES 0 0" "scan after the leave (ok eio bad)"
dm_remove nsw || die "remove"

# 3. server 0 under memory pressure, a reader verifying pages meanwhile
server_ctl start 0 >/dev/null || die "start 0"
wait_until 30 nsw "server 0 is not connected to its peer server 1" peer1_connected
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S1 $KEY reliability=none" ||
	die "create (pressure) failed"
blkpat write $DEV 0 $PAGES 54 || die "blkpat write (pressure)"
h0=$(netram_stat nsw 0 held) h1=$(netram_stat nsw 1 held)
in1=$(server_stat 1 pages_migrated_in)
log "before the pressure: servers hold $h0, $h1 pages"
assert_gt "$h0" 1024 "pages on server 0"
reader() { # FIRST SEED: verifies pages FIRST.. again and again until /tmp/stop-reader exists
	while [ ! -e /tmp/stop-reader ]; do
		blkpat verify $DEV "$1" $((PAGES - $1)) "$2" >/dev/null || { echo bad >/tmp/reader-bad; return 1; }
	done
}
start_reader() { rm -f /tmp/stop-reader; reader "$@" & rpid=$!; }
stop_reader() { touch /tmp/stop-reader; wait $rpid || die "the reader read a page wrong during the moves ($1)"; }
emptied() { [ "$(server_stat 0 held_pages)" = 0 ] && [ "$(server_stat 0 migrate_pending)" = 0 ]; }
tx=$(bytes sent)
start_reader 0 54
# reserve 32M, 16M available: 4096 pages over the limit: it moves them all
server_ctl set-memavailable 0 16M || die "set-memavailable 0"
wait_until 60 nsw "server 0 still holds pages under pressure" emptied
stop_reader "pressure"
tx=$(($(bytes sent) - tx))
server_ctl set-memavailable 0 1G || die "set-memavailable 0 1G"
show_status nsw
cat /sys/kernel/nswap2l/nsw/servers
out0=$(server_stat 0 pages_migrated_out) in1=$(($(server_stat 1 pages_migrated_in) - in1))
log "under pressure: nswapd 0 migrated out $out0 pages, nswapd 1 took $in1; the client sent $tx bytes"
assert_eq "$out0" "$h0" "pages_migrated_out of server 0"
assert_eq "$in1" "$h0" "pages_migrated_in of server 1"
assert_eq "$(servers_stat "$S0" moved_out)" "$h0" "moved_out of server 0 (the client's view)"
assert_eq "$(netram_stat nsw 0 evict_moved)" 0 "pages the client moved itself (EVICT)"
assert_lt "$tx" $((h0 * 4096 / 20)) "bytes the client sent during the moves (< 5 % of the pages)"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"

# 4. rewrites and discards while pages move: the first 1024 pages written
#    anew on server 0 (server 1 full for a while), then, under pressure, in
#    runs of 32 pages, rewritten and discarded in turn
server_ctl set-memavailable 1 32M || die "set-memavailable 1 32M"
room() { # SERVER yes|no: whether the device sees room on it
	if [ "$(netram_stat nsw "$1" free)" -gt 0 ]; then [ "$2" = yes ]; else [ "$2" = no ]; fi
}
wait_until 30 nsw "the device still sees room on server 1" room 1 no
wait_until 30 nsw "the device sees no room on server 0" room 0 yes
blkpat write $DEV 0 1024 55 >/dev/null || die "blkpat write (second round)"
server_ctl set-memavailable 1 1G || die "set-memavailable 1 1G"
# what server 0 last heard of its peer server 1's room (the first peer record)
peer1_room() {
	[ "$(server_ctl stats 0 | tr '{}' '\n\n' | grep '"address"' | head -n 1 |
		sed -n 's/.*"free_pages": *\([0-9]*\).*/\1/p')" -gt 0 ]
}
wait_until 30 nsw "server 0 does not see room on its peer server 1" peer1_room
n0=$(netram_stat nsw 0 held) out0=$(server_stat 0 pages_migrated_out)
log "second round: server 0 holds $n0 pages"
assert_gt "$n0" 128 "pages on server 0 (second round)"
start_reader 1024 54
server_ctl set-memavailable 0 16M || die "set-memavailable 0 (second round)"
i=0
while [ $i -lt 1024 ]; do
	blkpat write $DEV $i 32 56 >/dev/null || die "rewrite of pages $i.."
	blkdiscard -o $(((i + 32) * 4096)) -l $((32 * 4096)) $DEV || die "discard of pages $((i + 32)).."
	i=$((i + 64))
done
wait_until 60 nsw "server 0 still holds pages (second round)" emptied
stop_reader "rewrites and discards"
server_ctl set-memavailable 0 1G || die "set-memavailable 0 1G"
show_status nsw
cat /sys/kernel/nswap2l/nsw/servers
log "second round: nswapd 0 migrated out $(($(server_stat 0 pages_migrated_out) - out0)) pages, refused $(server_stat 0 moves_refused)"
assert_gt "$(server_stat 0 pages_migrated_out)" "$out0" "pages_migrated_out of server 0 (second round)"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
# rewritten pages read the new data, discarded ones zeros, the others their own
i=0
while [ $i -lt 1024 ]; do
	blkpat verify $DEV $i 32 56 >/dev/null || die "pages $i.., rewritten during the moves, read wrong"
	blkpat zero $DEV $((i + 32)) 32 || die "pages $((i + 32)).., discarded during the moves, do not read zeros"
	i=$((i + 64))
done
set -- $(blkpat_scan_counts $DEV 1024 $((PAGES - 1024)) 54)
assert_eq "$*" "$((PAGES - 1024)) 0 0" "scan after the moves (ok eio bad)"
# the discarded keys are held nowhere: the servers hold what the map names
want=$((PAGES - 512))
assert_eq "$(($(netram_stat nsw 0 held) + $(netram_stat nsw 1 held)))" "$want" "pages the device has on the servers"
# (the namespaces of this device: step 2's device left its own on server
# 1, kept for the grace period)
connected_pages() { # I: pages of server I's namespaces that have a connection
	server_ctl stats "$1" | tr '{' '\n' |
		sed -n 's/.*"pages": *\([0-9]*\), *"connections": *[1-9].*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}
settled() { [ "$(($(connected_pages 0) + $(connected_pages 1)))" = "$want" ]; }
wait_until 30 nsw "the servers hold more than the device's $want pages" settled
# Keys the client rewrote or freed meanwhile are not taken (a race, not a
# peer the owner cannot use): the rest still moves server to server.
assert_eq "$(netram_stat nsw 0 evict_moved)" 0 \
	"pages the client moved itself (EVICT) after a move with keys rewritten or freed meanwhile"
dm_remove nsw || die "remove (pressure)"
log "ok"
