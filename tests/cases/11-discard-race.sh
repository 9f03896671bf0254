# Discards racing with I/O: a slot freed by a discard must not be handed to
# another page while a write that looked the old page up is still in flight,
# or that late write lands in the new owner's data.  Region B takes random
# writes and reads from fio while a loop keeps discarding it; region C is
# repeatedly written with checksummed pages (which reuse the slots B frees),
# verified and discarded.  Every C pass must verify and the counters must add
# up afterwards.  (blkdiscard -f: two of them run at once, so no O_EXCL.)
# mem: 256M
# disks: flash=32M
# timeout: 600

load_nswap2l
PAGES=$(dev_pages "$FLASH")
HALF=$((PAGES / 2))
dm_create nsw "0 $((PAGES * 8)) nswap2l 1 flash=$FLASH" || die "create failed"
DEV=/dev/mapper/nsw

fio --eta=never --name=b --filename=$DEV --offset=0 --size=$((HALF * 4096)) --rw=randrw --bs=4k \
	--ioengine=libaio --iodepth=16 --direct=1 --time_based --runtime=20 --output=/tmp/fio-b.log &
FIO=$!
(
	while kill -0 $FIO 2>/dev/null; do
		start=$(awk -v h=$HALF 'BEGIN { srand(); print int(rand() * (h - 64)) }')
		blkdiscard -f -o $((start * 4096)) -l $((64 * 4096)) $DEV || exit 1
	done
) &
DISCARDER=$!

sleep 2
pass=0
while kill -0 $FIO 2>/dev/null && [ $pass -lt 200 ]; do
	pass=$((pass + 1))
	blkpat write $DEV $HALF $HALF $pass >/dev/null || die "pass $pass: writing region C failed"
	blkpat verify $DEV $HALF $HALF $pass >/dev/null || die "pass $pass: region C corrupted (a stale write reached a reused slot?)"
	blkdiscard -f -o $((HALF * 4096)) -l $((HALF * 4096)) $DEV || die "pass $pass: discarding region C"
done
wait $FIO || { tail -n 20 /tmp/fio-b.log; die "fio on region B failed"; }
wait $DISCARDER || die "discard loop on region B failed"
log "$pass write/verify/discard passes over region C while region B was discarded under I/O"
assert_ge "$pass" 3 "passes over region C"
grep -E 'WRITE:|READ:' /tmp/fio-b.log

# Counters add up: every mapped page holds one slot, discarded pages read zeros.
blkdiscard $DEV || die "final discard"
show_status nsw
assert_eq "$(tier_stat nsw flash used)" 0 "slots in use after discarding everything"
blkpat zero $DEV 0 $PAGES || die "pages not zero after discarding everything"
blkpat write $DEV 0 $PAGES 999 || die "refill"
blkpat verify $DEV 0 $PAGES 999 || die "refill verify"
assert_eq "$(tier_stat nsw flash used)" "$PAGES" "slots in use after refill"
dm_remove nsw || die "remove"
log "ok"
