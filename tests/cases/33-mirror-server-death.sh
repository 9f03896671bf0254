# reliability=mirror: every Network RAM page has a copy on two distinct
# servers.  A server killed (SIGKILL) while fio writes loses nothing: reads
# go to the other copy, a write to a page with a lost copy goes to a new
# pair, and recovery copies the pages again until every one has two copies
# (copies_lost 0).  The server restarted comes back empty and takes new
# pages.  Then two servers killed at once: only the pages whose two copies
# were on them are lost; they read as EIO, never as wrong data, and status
# counts them.  Last, an idle server that stops answering is found by the
# heartbeat, and its pages are copied again before anyone reads them.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 3
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB
dm_create nsw "0 $((PAGES * 8)) nswap2l 5 netram=$S0,$S1,$S2 $KEY flash=$FLASH timeout=3 reliability=mirror" ||
	die "create failed"
dmsetup table nsw | grep -q " reliability=mirror" || die "table: $(dmsetup table nsw)"
nsw_check_shape nsw 2 3
assert_eq "$(nsw_recovery nsw reliability)" mirror "reliability in status"
held_sum() { echo $(($(netram_stat nsw 0 held) + $(netram_stat nsw 1 held) + $(netram_stat nsw 2 held))); }
recovered() { [ "$(nsw_recovery nsw recovering)" = 0 ] && [ "$(nsw_recovery nsw copies_lost)" = "$1" ]; }

# 1. two copies of every page, on distinct servers
blkpat write $DEV 0 $PAGES 5 || die "blkpat write"
assert_eq "$(tier_stat nsw netram used)" $PAGES "pages in Network RAM"
assert_eq "$(held_sum)" $((2 * PAGES)) "copies on the servers"
for i in 0 1 2; do assert_gt "$(netram_stat nsw $i held)" 0 "copies on server $i"; done

# 2. SIGKILL a server in the middle of fio's random writes
kill_during_fio nsw $DEV $PAGES 1 7
failed1() { [ "$(netram_stat nsw 1 state)" = failed ]; }
wait_until 30 nsw "server 1 failed" failed1
wait_until 120 nsw "recovery done" recovered 0
show_status nsw
dmesg | grep -q "recovery done" || die "no dmesg line for the recovery"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost with one server dead"
assert_gt "$(nsw_recovery nsw recovery_ms)" 0 "recovery time"
assert_eq "$(netram_stat nsw 1 held)" 0 "copies left on the dead server"
assert_eq "$(held_sum)" $((2 * $(tier_stat nsw netram used))) "two copies of every Network RAM page"
fio_verify_again $DEV $PAGES 7

# 3. the server restarts empty: it is fresh, and takes new pages again
server_ctl start 1 || die "restart server 1"
up1() { [ "$(netram_stat nsw 1 state)" = up ]; }
wait_until 30 nsw "server 1 up" up1
blkdiscard $DEV || die "blkdiscard"           # new pages are placed afresh
assert_eq "$(held_sum)" 0 "copies held after the discard"
blkpat write $DEV 0 $PAGES 6 || die "blkpat write after the restart"
blkpat verify $DEV 0 $PAGES 6 || die "blkpat verify after the restart"
assert_gt "$(netram_stat nsw 1 held)" 0 "copies on the restarted server"
assert_eq "$(nsw_recovery nsw copies_lost)" 0 "copies lost"

# 4. two servers killed at once: pages with both copies on them are lost
kill_servers_and_scan nsw $DEV $PAGES 6 0 2
assert_eq "$(nsw_recovery nsw copies_lost)" $((2 * SCAN_EIO)) "copies lost in status (two per lost page)"
assert_gt "$(tier_stat nsw flash used)" 0 "pages recovered to flash (one server left)"

# 5. writing the lost pages again makes them whole
blkpat write $DEV 0 $PAGES 7 || die "blkpat write with one server left"
blkpat verify $DEV 0 $PAGES 7 || die "blkpat verify with one server left"
assert_eq "$(nsw_recovery nsw copies_lost)" 0 "copies lost after rewriting"

# 6. an idle server that stops answering (SIGSTOP) is found by the heartbeat
server_ctl start 0 || die "restart server 0"
server_ctl start 2 || die "restart server 2"
up02() { [ "$(netram_stat nsw 0 state)" = up ] && [ "$(netram_stat nsw 2 state)" = up ]; }
wait_until 30 nsw "servers 0 and 2 up" up02
blkdiscard $DEV || die "blkdiscard"
blkpat write $DEV 0 $PAGES 8 || die "blkpat write on three servers again"
assert_gt "$(netram_stat nsw 2 held)" 0 "copies on server 2"
sent=$(netram_stat nsw 2 sent)
server_ctl stop 2 || die "stop server 2"
failed2() { [ "$(netram_stat nsw 2 state)" = failed ]; }
wait_until 15 nsw "idle server 2 failed" failed2
assert_gt "$(netram_stat nsw 2 sent)" "$sent" "bytes sent to the idle server (heartbeat)"
wait_until 120 nsw "recovery done" recovered 0
blkpat verify $DEV 0 $PAGES 8 || die "blkpat verify after the idle server failed"
server_ctl cont 2 || die "continue server 2"
dm_remove nsw || die "remove"
log "ok"
