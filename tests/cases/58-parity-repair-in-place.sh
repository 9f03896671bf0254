# reliability=parity: recovery repairs a group that lost one run in place.
# Groups of 3 members and their parity span 4 of 5 servers, so each group
# has a spare server.  Pages are written (blkpat), a quarter of them
# overwritten (their old versions stay in their groups, in the parity),
# and a server is killed (SIGKILL).  Recovery rebuilds each lost run, stale
# pages too, onto its group's spare under the same keys: the survivors take
# about as many pages as were lost (the whole-group move wrote each damaged
# group's pages again, 3 to 4 times as many).  Every page reads back its
# pattern, no page is lost, nothing stays counted on the dead server.
# Server 0 restarted (empty) and server 1 killed: its runs are rebuilt onto
# server 0 under keys it lost before (until recovery forgot them there, it
# was no spare, and whole groups moved).  Then another server killed while
# repairs run: no page reads wrong; a suspend and a remove while repairs
# run return.
# kernels: 6.12
# mem: 256M
# servers: 5 reserve=32M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
SERVERS=$(netram_server 0),$(netram_server 1),$(netram_server 2),$(netram_server 3),$(netram_server 4)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB
OVER=1024
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$SERVERS $KEY timeout=10 reliability=parity,group=3" ||
	die "create failed"
# concurrent writes, so that groups fill up (3 members and the parity: 4 servers)
blkpat_write_parallel $DEV $PAGES 5 8
blkpat_write_parallel $DEV $OVER 6 4
for i in 0 1 2 3 4; do assert_gt "$(netram_stat nsw $i held)" 0 "pages on server $i"; done

put_sum() { # servers...: pages they took
	_ps=0
	for _i in "$@"; do _ps=$((_ps + $(server_stat $_i pages_put))); done
	echo $_ps
}
lost=$(netram_stat nsw 0 held)
put0=$(put_sum 1 2 3 4)
moved0=$(nsw_moved nsw)
dmesg_mark
server_ctl kill 0 || die "kill server 0"
wait_until 60 nsw "server 0 failed" servers_in_state nsw failed 0
wait_until 300 nsw "recovery done" nsw_recovered nsw
show_status nsw
written=$(($(put_sum 1 2 3 4) - put0))
log "lost $lost pages with server 0; recovery wrote $written to the others, the mover moved $(($(nsw_moved nsw) - moved0))"
dmesg_new | grep "repaired in place\|recovery done" || true

# (a) every page reads its pattern
blkpat verify $DEV 0 $OVER 6 || die "blkpat verify of the overwritten pages"
blkpat verify $DEV $OVER $((PAGES - OVER)) 5 || die "blkpat verify of the others"
# (b) the lost pages written again, not whole groups
assert_gt "$written" 0 "pages written during recovery"
assert_le "$written" $((lost * 3 / 2)) "pages written during recovery, for $lost lost"
# printed just after recovery's status says it is over
repair_line() { dmesg_new | grep -q "parity groups repaired in place so far"; }
wait_until 10 nsw "dmesg line of the groups repaired" repair_line
repaired=$(dmesg_new | sed -n 's/.*: \([0-9]*\) parity groups repaired in place so far.*/\1/p' | tail -n1)
assert_gt "${repaired:-0}" 0 "groups repaired in place"
# (c) nothing lost, nothing left on the dead server
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost in status"
assert_eq "$(netram_stat nsw 0 held)" 0 "pages counted on the dead server"
# the repaired groups stay whole, and server 0, back empty, is a spare
# again: each run lost with server 1 is rebuilt there under its old keys
# (ones server 0 lost before), not every page of its group moved
server_ctl start 0 || die "restart server 0"
wait_until 60 nsw "server 0 up" servers_in_state nsw up 0
lost=$(netram_stat nsw 1 held)
put0=$(put_sum 0 2 3 4)
server_ctl kill 1 || die "kill server 1"
wait_until 60 nsw "server 1 failed" servers_in_state nsw failed 1
wait_until 300 nsw "recovery done after the second kill" nsw_recovered nsw
written=$(($(put_sum 0 2 3 4) - put0))
log "lost $lost pages with server 1; recovery wrote $written to the others"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost after the second kill"
assert_gt "$(netram_stat nsw 0 held)" 0 "pages rebuilt onto server 0"
assert_le "$written" $((lost * 3 / 2)) "pages written during the second recovery, for $lost lost"
blkpat verify $DEV 0 $OVER 6 || die "blkpat verify after the second kill"
blkpat verify $DEV $OVER $((PAGES - OVER)) 5 || die "blkpat verify after the second kill"

# repairs_under_way I J: server J restarted (five up again), every page
#   written anew (blkpat seed 7), recovery held at 40 pages/s, server I
#   killed; returns once some groups are repaired and recovery still runs
repairs_under_way() {
	server_ctl start $2 || die "restart server $2"
	wait_until 60 nsw "server $2 up" servers_in_state nsw up $2
	# -f: pages lost with two servers read EIO, and blkdiscard probes the device
	blkdiscard -f $DEV || die "blkdiscard"
	blkpat_write_parallel $DEV $PAGES 7 8
	dmsetup message nsw 0 recovery_rate 20 40 || die "recovery_rate 20 40"
	server_ctl kill $1 || die "kill server $1"
	wait_until 60 nsw "server $1 failed" servers_in_state nsw failed $1
	lost=$(nsw_recovery nsw copies_lost)
	_repairing() { [ "$(nsw_recovery nsw recovering)" = 1 ] && [ "$(nsw_recovery nsw copies_lost)" -lt "$lost" ]; }
	wait_until 60 nsw "some groups repaired, recovery still running" _repairing
}
# a second server killed while repairs run (recovery_rate held low): the
# groups it had a run of give up their repair; pages read back right or as
# EIO (groups that lost two runs), never wrong, and status counts the EIO
repairs_under_way 2 1
server_ctl kill 3 || die "kill server 3"
log "server 3 killed with $(nsw_recovery nsw copies_lost) of $lost copies lost with server 2 left"
wait_until 60 nsw "server 3 failed" servers_in_state nsw failed 3
# a suspend while repairs run waits for none that cannot end
dmsetup suspend nsw || die "suspend during repairs"
dmsetup resume nsw || die "resume during repairs"
dmsetup message nsw 0 recovery_rate 500 1048576 || die "recovery_rate back"
stopped() { [ "$(nsw_recovery nsw recovering)" = 0 ]; }
wait_until 300 nsw "recovery done after the kill during repairs" stopped
show_status nsw
set -- $(blkpat_scan_counts $DEV 0 $PAGES 7)
log "after the kill during repairs: ok=$1 unreadable=$2 wrong=$3"
assert_eq "$3" 0 "pages with wrong contents"
assert_eq "$(($1 + $2))" $PAGES "pages scanned"
assert_gt "$1" 0 "pages that survived"
assert_eq "$(nsw_recovery nsw pages_lost)" "$2" "pages lost in status"

# the device removed while repairs run: the remove returns
server_ctl start 2 || die "restart server 2"
wait_until 60 nsw "server 2 up" servers_in_state nsw up 2
repairs_under_way 4 3
dm_remove nsw || die "remove during repairs"
log "ok"
