# reliability=parity: a rebuild reads the rest of its group in parallel, and
# a second server killed during a parity recovery loses only pages that
# recovery had not yet re-protected, never returning wrong data.
#
# 1. Groups of 3 members and their parity on 4 servers: each spans all of
#    them.  Servers 1-3 are stopped (SIGSTOP), server 0 killed, and every
#    page of the first 512 read at once.  Then servers 1, 2 and 3 are let
#    run one after the other, each alone for a while.  A rebuild that sends
#    its three reads at once has all of them answered, each in its server's
#    turn; one that sends them one after the other (as before) waits for a
#    server whose turn has passed, and the reads are not done after the
#    third turn.  Every page then verifies (blkpat).
# 2. While recovery moves the damaged groups, server 2 is killed too: the
#    pages that read EIO are those of groups that lost two runs, at most the
#    pages that recovery had not moved yet; status counts them; no page
#    reads wrong (blkpat scan: ok / unreadable / wrong).
# kernels: 6.1
# mem: 256M
# servers: 4 reserve=32M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2) S3=$(netram_server 3)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB
READS=512
# timeout=30: servers stopped for the turns below are not failed meanwhile
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2,$S3 $KEY timeout=30 reliability=parity,group=3" ||
	die "create failed"
# concurrent writes, so that groups fill up (3 members: all four servers)
blkpat_write_parallel $DEV $PAGES 5 8
for i in 0 1 2 3; do assert_gt "$(netram_stat nsw $i held)" 0 "pages on server $i"; done

# 1. rebuild reads in parallel
for i in 1 2 3; do server_ctl stop $i || die "stop server $i"; done
moved0=$(nsw_moved nsw)
server_ctl kill 0 || die "kill server 0"
wait_until 30 nsw "server 0 failed" servers_in_state nsw failed 0
fio --name=reads --filename=$DEV --ioengine=libaio --iodepth=$READS --direct=1 --bs=4k \
	--size=$((READS * 4))k --rw=randread --eta=never --output=/tmp/reads.out &
reads=$!
sleep 3
kill -0 $reads 2>/dev/null || die "the reads ended with every server stopped"
for i in 1 2 3; do
	server_ctl cont $i || die "cont server $i"
	sleep 4
	server_ctl stop $i || die "stop server $i"
done
sleep 1
if kill -0 $reads 2>/dev/null; then
	for i in 1 2 3; do server_ctl cont $i; done
	wait $reads
	die "reads still waiting after each server's turn: a rebuild read its group one server after the other"
fi
wait $reads || { cat /tmp/reads.out; die "fio reads"; }
for i in 1 2 3; do server_ctl cont $i || die "cont server $i"; done
log "every read was done after the three turns"
blkpat verify $DEV 0 $READS 5 || die "blkpat verify with server 0 dead"

# 2. a second server killed while recovery moves the damaged groups
recovering() { [ "$(nsw_recovery nsw recovering)" = 1 ] && [ "$(nsw_recovery nsw copies_lost)" -gt 0 ]; }
recovering || die "recovery over before the second kill: nothing left to test"
moved=$(($(nsw_moved nsw) - moved0))
lost=$(nsw_recovery nsw copies_lost)
server_ctl kill 2 || die "kill server 2"
log "server 2 killed with $moved pages moved by recovery, $lost copies still lost"
wait_until 30 nsw "server 2 failed" servers_in_state nsw failed 2
stopped() { [ "$(nsw_recovery nsw recovering)" = 0 ]; }
wait_until 240 nsw "recovery done" stopped
show_status nsw
set -- $(blkpat_scan_counts $DEV 0 $PAGES 5)
log "after the second kill: ok=$1 unreadable=$2 wrong=$3"
assert_eq "$3" 0 "pages with wrong contents"
assert_eq "$(($1 + $2))" $PAGES "pages scanned"
assert_eq "$(nsw_recovery nsw pages_lost)" "$2" "pages lost in status"
# the pages recovery moved before the kill are in groups on servers 1-3:
# one more loss there costs none of them
[ "$2" -le $((PAGES - moved)) ] || die "$2 pages lost, more than the $((PAGES - moved)) recovery had not moved"
assert_gt "$1" 0 "pages that survived"
# the rest is written again and verifies with two servers left
blkpat write $DEV 0 $PAGES 6 || die "blkpat write with two servers left"
blkpat verify $DEV 0 $PAGES 6 || die "blkpat verify with two servers left"
assert_eq "$(nsw_recovery nsw copies_lost)" 0 "copies lost after rewriting"
dm_remove nsw || die "remove"
log "ok"
