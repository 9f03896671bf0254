# when=idle backs off while its moves slow foreground reads (issue 33): a
# device read one page at a time is "idle" by the bios in flight, yet every
# page moved to flash is a write that its reads queue behind.  Flash is a
# disk throttled to 512 KiB/s, reads and writes together (@usb-stick);
# Network RAM (one server, 8 MiB) holds 2/3 of the device, flash the rest;
# fio reads the whole device at QD1 while rr moves Network RAM's pages
# (when=idle:2, up to 64 pages a wake-up: more than flash writes in an
# interval).  One wake-up in eight moves nothing; reads after moves are
# slower than after those, so the rate halves until the moves fit beside
# the reads (prefetch/stats: rate_pct, read_after_moves_us,
# read_after_control_us): less than half the cap moves a wake-up, where
# without backing off the worker moves all 64 at every one.  Once the
# reads stop, the moves slow nothing and the rate comes back.  A policy
# put in its place starts again (the rate and averages were kept, shown as
# its own, and applied when the first came back).  Every page verifies.
# kernels: 6.12
# servers: 1 max=8M
# disks: flash=64M@usb-stick
# timeout: 400

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/pl
N=3072
CAP=64
WINDOW=24	# wake-ups measured

dm_create pl "0 $((N * 8)) nswap2l 4 $(netram_table_arg) flash=$FLASH prefetch=none,when=idle:2,amount=held:100:$CAP,interval=100" ||
	die "create"
blkpat write $DEV 0 $N 1 >/dev/null || die "write"
log "Network RAM holds $(tier_stat pl netram used) pages, flash $(tier_stat pl flash used)"
assert_ge "$(tier_stat pl flash used)" $((N / 4)) "pages on flash, which the reads wait for (the premise)"

fio --name=fg --filename=$DEV --ioengine=psync --direct=1 --bs=4k --rw=randread \
	--time_based --runtime=300 --randseed=3 --eta=never --output=/tmp/fg.out &
reader=$!
reading() { [ "$(tier_stat pl flash reads)" -ge 64 ]; }
wait_until 60 pl "fio reading" reading
pf_set pl policy rr || die "policy rr"
# Within 8 wake-ups one moves nothing; the next measures the reads after
# it, and four halvings bring the rate down to 1/16: then the window.
wait_until 60 pl "14 wake-ups under the reads" pf_stat_ge pl wakeups 14
p0=$(pf_stat pl prefetched) w0=$(pf_stat pl wakeups)
wait_until 120 pl "$WINDOW more wake-ups" pf_stat_ge pl wakeups $((w0 + WINDOW))
moved=$(($(pf_stat pl prefetched) - p0))
log "moved $moved pages in $WINDOW wake-ups ($p0 before); rate $(pf_stat pl rate_pct) %; reads after moves $(pf_stat pl read_after_moves_us) us, after none $(pf_stat pl read_after_control_us) us"
kill -0 $reader || die "fio ended early: $(cat /tmp/fg.out)"
assert_le "$moved" $((WINDOW * CAP / 2)) "pages moved in $WINDOW wake-ups while moves slow the reads (half the cap a wake-up)"
assert_le "$(pf_stat pl rate_pct)" 50 "rate while moves slow the reads"

kill $reader
wait $reader || log "fio stopped (status $?)"
rate_back() { [ "$(pf_stat pl rate_pct)" = 100 ]; }
wait_until 60 pl "the rate back once the reads stopped" rate_back
log "rate back to $(pf_stat pl rate_pct) %, $(pf_stat pl prefetched) pages moved"
# what one policy learnt is not another's: its averages start again
assert_gt "$(pf_stat pl read_after_moves_us)" 0 "read latency after moves, learnt"
pf_set pl when always || die "when=always"
assert_eq "$(pf_stat pl read_after_moves_us)" 0 "read latency after moves once when=always replaced when=idle"
assert_eq "$(pf_stat pl rate_pct)" 100 "rate once when=always replaced when=idle"
pf_set pl policy none || die "policy none"
blkpat verify $DEV 0 $N 1 || die "data"
dm_remove pl || die "remove"
log "ok"
