# In-flight tracking under two concurrent waiters.  Discards free slots and
# the mover frees pages' old homes, each only after the bios that looked
# them up have completed.  With fault injection every read and write is held
# up to 200 ms (a random time each, so that later bios overtake earlier
# ones) between its map lookup and its tier, and the discard worker and the
# mover wait at once all the time.  When one could flip the in-flight epoch
# while the other waited, a waiter missed bios counted in the other epoch:
# the mover copied a page before a write to its old home landed there (an
# acknowledged write lost, region A), or a late write landed in a slot
# already given to another page (region C).
# Region A: written once, then rewritten pass after pass with checksummed
# pages (64 at a time), each pass verified.  Region B: random reads and writes while a loop discards it.
# Region C: checksummed pages written, verified and discarded over and over.
# The mover drains server 0 and takes it back, again and again.
# The module's own logic, so it runs on one kernel (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 2 max=32M
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0)
DEV=/dev/mapper/nsw
A=0 A_PAGES=1024 B=1024 B_PAGES=2048 C=3072 C_PAGES=32 PAGES=3104
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$(netram_server 1) $KEY flash=$FLASH" ||
	die "create failed"
HOLD=/sys/module/dm_nswap2l/parameters/fault_hold_ms
assert_eq "$(cat $HOLD)" 0 "fault injection off by default"
blkpat write $DEV $A $A_PAGES 1000 >/dev/null || die "fill region A"
echo 200 >$HOLD

fio --eta=never --name=b --filename=$DEV --offset=$((B * 4096)) --size=$((B_PAGES * 4096)) --rw=randrw \
	--bs=4k --ioengine=libaio --iodepth=16 --direct=1 --time_based --runtime=30 --output=/tmp/fio-b.log &
FIO_B=$!
(
	while kill -0 $FIO_B 2>/dev/null; do
		start=$(awk -v b=$B -v n=$B_PAGES 'BEGIN { srand(); print b + int(rand() * (n - 64)) }')
		blkdiscard -f -o $((start * 4096)) -l $((64 * 4096)) $DEV 2>/dev/null || exit 1
	done
) &
DISCARDER=$!
(
	cycles=0
	# a device has 16 server slots, removed servers included
	while kill -0 $FIO_B 2>/dev/null && [ $cycles -lt 10 ]; do
		cycles=$((cycles + 1))
		dmsetup message nsw 0 remove_server $S0 || exit 1
		while [ "$(netram_stat_of nsw $S0 state)" != removed ] && kill -0 $FIO_B 2>/dev/null; do
			sleep 0.5
		done
		[ "$(netram_stat_of nsw $S0 state)" = removed ] || break
		dmsetup message nsw 0 add_server $S0 || exit 1
		sleep 2
	done
) &
MOVER=$!
(
	seed=1000
	while kill -0 $FIO_B 2>/dev/null; do
		seed=$((seed + 1))
		blkpat write $DEV $A $A_PAGES $seed >/dev/null || exit 1
		blkpat verify $DEV $A $A_PAGES $seed || exit 1
	done
	echo $seed >/tmp/a-seed
) &
REWRITER=$!

pass=0
while kill -0 $FIO_B 2>/dev/null; do
	pass=$((pass + 1))
	blkpat write $DEV $C $C_PAGES $pass >/dev/null || die "pass $pass: writing region C failed"
	blkpat verify $DEV $C $C_PAGES $pass >/dev/null ||
		die "pass $pass: region C corrupted (a late write reached a slot given to another page)"
	blkdiscard -f -o $((C * 4096)) -l $((C_PAGES * 4096)) $DEV 2>/dev/null ||
		die "pass $pass: discarding region C"
done
wait $REWRITER || die "region A lost acknowledged writes (a rewrite pass did not verify)"
wait $FIO_B || { tail -n 20 /tmp/fio-b.log; die "fio on region B failed"; }
wait $DISCARDER || die "discard loop failed"
wait $MOVER || die "remove_server/add_server loop failed"
echo 0 >$HOLD
grep -E 'WRITE:|READ:' /tmp/fio-b.log | sed "s/^/[$NST_NAME] fio: /"
show_status nsw
seed=$(cat /tmp/a-seed)
log "$pass passes over region C, $((seed - 1000)) rewrite passes over region A, $(nsw_moved nsw) pages moved"
assert_ge "$pass" 3 "passes over region C"
assert_ge "$((seed - 1000))" 3 "rewrite passes over region A"
assert_gt "$(nsw_moved nsw)" 100 "pages moved while the regions were in use"
assert_gt "$(nsw_total nsw discards)" 100 "pages discarded"
blkpat verify $DEV $A $A_PAGES "$seed" || die "region A after the race"
dm_remove nsw || die "remove"
log "ok"
