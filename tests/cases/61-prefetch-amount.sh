# Prefetching's amount bounds every policy, and a removed device's pages
# leave its server at once.  Devices of 8,192 pages are made one after
# another over one server that holds 10,240, one per policy (rr, random,
# lrs, mrs, auto), each written once: with the default amount=written:10
# each policy moves at most 10 % of what was written, flash holds exactly
# the pages it moved (no write spilled there: the device before left the
# server empty at its removal, RELEASE; a server that kept them for its
# grace period had no room for the next device), and the data verifies.
# Then amount=written:100:64: a burst of 4,096 writes is moved at most 64
# pages per wake-up (largest_wakeup) and in all at most what was written.
# After each removal the server holds no page of it within a second.
# kernels: 6.1
# mem: 256M
# servers: 1 max=40M reserve=0
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
PAGES=8192
BURST=4096
CAP=64

server_empty() { [ "$(server_stat 0 held_pages)" = 0 ]; }

seed=0
for p in rr random lrs mrs auto; do
	seed=$((seed + 2))
	assert_eq "$(server_stat 0 held_pages)" 0 "$p: pages on the server before the device"
	dm_create am "0 $((PAGES * 8)) nswap2l 4 $NETRAM flash=$FLASH prefetch=$p" ||
		die "create with prefetch=$p"
	assert_eq "$(pf_get am amount)" written:10:4096 "$p: the default amount"
	blkpat write /dev/mapper/am 0 $PAGES $seed >/dev/null || die "$p: write"
	w=$(pf_stat am wakeups)
	_num "$w" "$p: wakeups"
	wait_until 30 am "$p: 3 wake-ups after the writes" pf_stat_ge am wakeups $((w + 3))
	moved=$(pf_stat am prefetched)
	_num "$moved" "$p: prefetched"
	log "$p: $moved of $PAGES pages written moved to flash, largest wake-up $(pf_stat am largest_wakeup)"
	assert_le "$moved" $((PAGES / 10)) "$p: pages moved with amount written:10"
	assert_eq "$(tier_stat am flash used)" "$moved" "$p: pages on flash (moved, none spilled)"
	assert_eq "$(tier_stat am flash writes)" 0 "$p: writes that went to flash for want of room"
	assert_eq "$(nsw_nospace am)" 0 "$p: nospace errors"

	pf_set am amount written:100:$CAP || die "$p: set amount written:100:$CAP"
	blkpat write /dev/mapper/am 0 $BURST $((seed + 1)) >/dev/null || die "$p: burst"
	w=$(pf_stat am wakeups)
	wait_until 30 am "$p: 3 wake-ups after the burst" pf_stat_ge am wakeups $((w + 3))
	largest=$(pf_stat am largest_wakeup)
	burst_moved=$(($(pf_stat am prefetched) - moved))
	log "$p: $burst_moved pages moved after a burst of $BURST, at most $largest at one wake-up"
	assert_le "$largest" $CAP "$p: pages moved at one wake-up with amount written:100:$CAP"
	assert_le "$burst_moved" $BURST "$p: pages moved after the burst"
	blkpat verify /dev/mapper/am 0 $BURST $((seed + 1)) || die "$p: burst data"
	blkpat verify /dev/mapper/am $BURST $((PAGES - BURST)) $seed || die "$p: data"
	assert_eq "$(netram_stat am 0 errors)" 0 "$p: server errors"
	dm_remove am || die "$p: remove"
	wait_until 1 am "$p: the server freed the removed device's pages" server_empty
done
dmesg | grep -q "did not answer RELEASE" && die "a removal waited for RELEASE in vain: $(dmesg | grep RELEASE)"
log "ok"
