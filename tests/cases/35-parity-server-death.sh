# reliability=parity: pages form groups of up to N pages on distinct
# servers, with their XOR on another server.  The table line is checked
# (group=N from 2 to 7, kept over a reload).  Overwrites leave old versions
# in their groups until the cleaner merges mostly stale groups.  A server
# killed (SIGKILL) while fio writes loses nothing: its pages are rebuilt
# from their groups when read, and recovery moves every page of a damaged
# group into a new group until no copy is lost.  Then two servers killed at
# once: only pages whose group lost two of its pages are lost; they read as
# EIO, never as wrong data, and status counts them.  Last, a server's
# machine asks its memory back (EVICT) and a server is removed: the groups
# that hold pages there move, and nothing is lost.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 4 reserve=32M
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2) S3=$(netram_server 3)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB
TABLE="0 $((PAGES * 8)) nswap2l 5 netram=$S0,$S1,$S2,$S3 $KEY flash=$FLASH timeout=3"

# 0. bad group sizes fail with a dmesg line; the size is kept over a reload
for bad in parity,group=1 parity,group=8 parity,group= parity,size=3 mirror,group=3 parityx; do
	dmesg_mark
	dm_create bad "$TABLE reliability=$bad" 2>/dev/null && die "reliability=$bad accepted"
	dmesg_new | grep -q "reliability=$bad: need" || die "no dmesg line for reliability=$bad: $(dmesg_new)"
done
dm_create nsw "$TABLE reliability=parity,group=3" || die "create failed"
dmsetup table nsw | grep -q " reliability=parity,group=3" || die "table: $(dmsetup table nsw)"
nsw_check_shape nsw 2 4
assert_eq "$(nsw_recovery nsw reliability)" parity "reliability in status"
dmsetup suspend nsw || die "suspend"
dmsetup reload nsw --table "$TABLE reliability=parity,group=4" 2>/dev/null && die "reload changed the group size"
dmsetup reload nsw --table "$TABLE reliability=parity,group=3" || die "reload with the same group size"
dmsetup resume nsw || die "resume"
# pages may not change while written (their group's parity is computed from them)
assert_eq "$(queue_attr nsw stable_writes)" 1 "stable_writes after a reload"

held_sum() { echo $(($(netram_stat nsw 0 held) + $(netram_stat nsw 1 held) + $(netram_stat nsw 2 held) + $(netram_stat nsw 3 held))); }

# 1. groups of up to 3 pages and their parity, on distinct servers
fio_write() { # seed: concurrent writes, so that groups fill up
	run_fio "write $1" --name=kill --filename=$DEV --ioengine=libaio --iodepth=32 --direct=1 \
		--bs=4k --size=$((PAGES * 4))k --rw=randwrite --randseed=$1 --verify=crc32c \
		--verify_fatal=1 --do_verify=1
}
fio_write 3
assert_eq "$(tier_stat nsw netram used)" $PAGES "pages in Network RAM"
h=$(held_sum)
log "held on the servers for $PAGES pages: $h"
# at least 4 server pages per 3 pages; overwrites leave old versions in their groups
assert_gt "$h" $((PAGES * 4 / 3 - 1)) "server pages held"
for i in 0 1 2 3; do assert_gt "$(netram_stat nsw $i held)" 0 "pages on server $i"; done
# overwrites leave old versions in their groups; the cleaner moves the pages
# of mostly stale groups into new ones, so that the old groups are freed
fio --name=over --filename=$DEV --ioengine=libaio --iodepth=32 --direct=1 --bs=4k \
	--size=$((PAGES * 4))k --rw=randwrite --norandommap --randrepeat=0 \
	--number_ios=$((PAGES * 3)) --eta=never --output=/dev/null || die "fio overwrites"
cleaned() { [ "$(held_sum)" -le $((5 * PAGES / 2)) ]; }
wait_until 60 nsw "server pages held at most 2.5 per page" cleaned
assert_gt "$(nsw_moved nsw)" 0 "pages moved by the cleaner"
log "held after overwrites and cleaning: $(held_sum)"
blkdiscard $DEV || die "blkdiscard"
# the discard makes groups half stale, which starts a clean pass: pages it
# was moving when the discard reached them are freed once their moves end
# (CI: 28 server pages right after blkdiscard)
no_held() { [ "$(held_sum)" -eq 0 ]; }
wait_until 30 nsw "no server page held after a discard of everything" no_held

# 2. SIGKILL a server in the middle of fio's random writes
kill_during_fio nsw $DEV $PAGES 1 7
wait_until 30 nsw "server 1 failed" servers_in_state nsw failed 1
wait_until 120 nsw "recovery done" nsw_recovered nsw
show_status nsw
dmesg | grep -q "rebuilding them from their parity groups" || die "no dmesg line for the loss"
dmesg | grep -q "recovery done" || die "no dmesg line for the recovery"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost with one server dead"
rebuilt=$(dmesg | sed -n 's/.*: \([0-9]*\) pages rebuilt from their parity groups so far/\1/p' | tail -n1)
assert_gt "${rebuilt:-0}" 0 "pages rebuilt from parity"
assert_gt "$(nsw_recovery nsw recovery_ms)" 0 "recovery time"
assert_eq "$(netram_stat nsw 1 held)" 0 "pages left on the dead server"
fio_verify_again $DEV $PAGES 7

# 3. two servers killed at once: pages whose group lost two pages are lost
server_ctl start 1 || die "restart server 1"
wait_until 30 nsw "server 1 up" servers_in_state nsw up 1
blkdiscard $DEV || die "blkdiscard"
blkpat write $DEV 0 $PAGES 6 || die "blkpat write after the restart"
assert_gt "$(netram_stat nsw 1 held)" 0 "pages on the restarted server"
kill_servers_and_scan nsw $DEV $PAGES 6 0 2
blkpat write $DEV 0 $PAGES 7 || die "blkpat write with two servers left"
blkpat verify $DEV 0 $PAGES 7 || die "blkpat verify with two servers left"
assert_eq "$(nsw_recovery nsw copies_lost)" 0 "copies lost after rewriting"

# 4. EVICT and remove_server move whole groups, and lose nothing
server_ctl start 0 || die "restart server 0"
server_ctl start 2 || die "restart server 2"
wait_until 30 nsw "servers 0 and 2 up" servers_in_state nsw up 0 2
blkdiscard $DEV || die "blkdiscard"
fio_write 9
held3=$(netram_stat nsw 3 held)
# server 3's machine: 4 MiB under its 32 MiB reserve: it asks 1024 pages back
server_ctl set-memavailable 3 28M || die "set-memavailable 3"
asked_back() { [ "$(netram_stat nsw 3 evict_moved)" -gt 0 ]; }
wait_until 60 nsw "server 3 got pages back" asked_back
gave_back() { [ "$(netram_stat nsw 3 held)" -le $((held3 - 1024)) ]; }
wait_until 60 nsw "server 3 holds 1024 pages less" gave_back
dmsetup message nsw 0 remove_server $S2 || die "remove_server $S2"
removed2() { [ "$(netram_stat_of nsw $S2 state)" = removed ]; }
wait_until 120 nsw "server 2 drained and removed" removed2
assert_eq "$(netram_stat_of nsw $S2 held)" 0 "pages left on the removed server"
fio_verify_again $DEV $PAGES 9
assert_eq "$(nsw_recovery nsw pages_lost)" "$SCAN_EIO" "pages lost, no more than before"
dm_remove nsw || die "remove"
log "ok"
