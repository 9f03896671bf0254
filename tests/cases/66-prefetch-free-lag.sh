# Pages moved away count as room before the server says so (issue 33).
# A page moved to flash is FREEd on Network RAM's server, and the server's
# free_pages shows that room only once it has answered the FREE.  With
# amount=free:25 (move what keeps a quarter of Network RAM free) a worker
# that took the server's last word for the room moved a quarter again at
# every wake-up until the answer came: behind a slow link (CI's machine, a
# guest slowed by its neighbour) it moved the hot set too.  Here the FREEs
# wait 3 s (fault_free_hold_ms) while a dozen wake-ups go by over a full
# Network RAM: a quarter of it moves, no more; once the FREEs are answered
# nothing more moves either.  The data verifies.
# kernels: 6.1
# mem: 256M
# servers: 1 max=16M reserve=0
# disks: flash=64M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
P=/sys/module/dm_nswap2l/parameters
PAGES=8192
DEV=/dev/mapper/lag

dm_create lag "0 $((PAGES * 8)) nswap2l 4 $NETRAM flash=$FLASH prefetch=none,when=always,amount=free:25,interval=200" ||
	die "create"
blkpat write $DEV 0 $PAGES 3 >/dev/null || die "fill"
cap=$(tier_stat lag netram capacity)
used=$(tier_stat lag netram used)
log "after the fill: Network RAM capacity $cap pages, $used used"
assert_ge "$used" $((cap - 64)) "Network RAM full after the fill"
# the server's free_pages comes in steps of 64 pages (1/128 of its limit, rounded)
most=$((cap / 4 + 64))

echo 3000 >$P/fault_free_hold_ms || die "hold FREEs"
pf_set lag policy rr || die "policy rr"
wait_until 30 lag "the first move" pf_stat_ge lag prefetched 1
w=$(pf_stat lag wakeups)
wait_until 30 lag "5 wake-ups while the FREEs wait" pf_stat_ge lag wakeups $((w + 5))
moved=$(pf_stat lag prefetched)
log "$moved pages moved while the FREEs wait ($(pf_stat lag wakeups) wake-ups); capacity $(tier_stat lag netram capacity), used $(tier_stat lag netram used)"
assert_le "$moved" "$most" "pages moved while the server has not answered the FREEs (a quarter of $cap)"
assert_ge "$moved" $((cap / 4 - 128)) "pages moved to keep a quarter of Network RAM free"

echo 0 >$P/fault_free_hold_ms || die "clear the fault"
w=$(pf_stat lag wakeups)
wait_until 30 lag "10 wake-ups after the FREEs went" pf_stat_ge lag wakeups $((w + 10))
assert_le "$(pf_stat lag prefetched)" "$most" "pages moved once the server answered the FREEs"
assert_eq "$(nsw_nospace lag)" 0 "nospace errors"
blkpat verify $DEV 0 $PAGES 3 || die "data"
dm_remove lag || die "remove"
