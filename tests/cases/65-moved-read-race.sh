# Reads racing a server's MOVED (issue 31, Nswap's Migrate): the client
# answers a MOVED once the pages it names are relabelled to the peer, and
# the sender frees them then.  A read that looked up such a page while the
# client waited for the bios before it still names the sender: its GET
# must reach the sender before the answer does, or the sender no longer
# has the page ("does not have 1 page(s) it stored", EIO: seen once in CI
# in case 53).  fault_hold_ms holds every read up to 300 ms between its
# lookup and its server, which makes every MOVED's wait that long, with
# readers looking up pages all along.
# kernels: 6.12
# mem: 256M
# servers: 2 peers reserve=32M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1)
DEV=/dev/mapper/nsw
PAGES=2048
READERS=4
HOLD=/sys/module/dm_nswap2l/parameters/fault_hold_ms

peer1_connected() { [ "$(server_stat 0 connected)" = 1 ]; }
wait_until 30 nsw "server 0 is not connected to its peer server 1" peer1_connected
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S1 $KEY reliability=none" || die "create"
blkpat write $DEV 0 $PAGES 65 >/dev/null || die "blkpat write"
h0=$(netram_stat nsw 0 held)
log "server 0 holds $h0 of $PAGES pages"
assert_gt "$h0" 512 "pages on server 0"

# each reader verifies its own quarter, again and again, until told to stop
reader() { # R
	local first=$(($1 * PAGES / READERS)) n=$((PAGES / READERS))
	while [ ! -e /tmp/stop-readers ]; do
		blkpat verify $DEV $first $n 65 >/tmp/reader$1.out 2>&1 || return 1
	done
}
echo 300 >$HOLD || die "set fault_hold_ms"
rm -f /tmp/stop-readers
pids=
for r in $(seq 0 $((READERS - 1))); do
	reader $r &
	pids="$pids $!"
done
# reserve 32M, 16M available: every page is over the limit and moves
server_ctl set-memavailable 0 16M || die "set-memavailable 0"
emptied() { [ "$(server_stat 0 held_pages)" = 0 ] && [ "$(server_stat 0 migrate_pending)" = 0 ]; }
wait_until 120 nsw "server 0 still holds pages under pressure" emptied
touch /tmp/stop-readers
failed=0
for r in $(seq 0 $((READERS - 1))); do
	set -- $pids
	shift $r
	wait $1 || { failed=$((failed + 1)); log "reader $r: $(cat /tmp/reader$r.out)"; }
done
echo 0 >$HOLD
server_ctl set-memavailable 0 1G || die "set-memavailable 0 1G"
show_status nsw
log "nswapd 0 migrated out $(server_stat 0 pages_migrated_out) pages; $(dmesg | grep -c 'does not have') 'does not have' lines"
assert_eq "$failed" 0 "readers that failed while server 0 moved its pages"
assert_eq "$(server_stat 0 pages_migrated_out)" "$h0" "pages_migrated_out of server 0"
assert_eq "$(sysfs_stat nsw servers "$S0" moved_out)" "$h0" "moved_out of server 0 (the client's view)"
assert_eq "$(netram_stat nsw 0 evict_moved)" 0 "pages the client moved itself (EVICT)"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
set -- $(blkpat_scan_counts $DEV 0 $PAGES 65)
assert_eq "$*" "$PAGES 0 0" "scan after the moves (ok eio bad)"
dm_remove nsw || die "remove"
log "ok"
