# when=pays compares the tiers' reads under the same load (issue 33): a
# tier's mean since the device was made mixes loads, so Network RAM reads
# queued 128 deep early on made a flash that is slower than Network RAM at
# the time look faster, and the probe's reads let the worker move at full
# rate.  Here Network RAM is read 128 deep first, then the probe moves
# (rr, 64 pages a wake-up allowed), then the whole device is read one page
# at a time: flash (a dm-delay that holds every read 3 ms) is slower than
# Network RAM in the same intervals, though its mean since creation is
# below Network RAM's.  The worker compares the intervals in which both
# served reads (prefetch/stats: compared_*), finds flash slower and moves
# nothing past the probe; the data verifies.
# kernels: 6.1
# servers: 1
# disks: flash=64M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
DEV=/dev/mapper/pl
N=4096
PROBE=256

dm_create slowflash "0 $(blockdev --getsz "$FLASH") delay $FLASH 0 3 $FLASH 0 0" ||
	die "create the dm-delay flash"
dm_create pl "0 $((N * 8)) nswap2l 4 $NETRAM flash=/dev/mapper/slowflash prefetch=none,amount=held:100:64,interval=50" ||
	die "create"
blkpat write $DEV 0 $N 1 >/dev/null || die "write"

# 1. Network RAM under load: reads queue
run_fio loaded --name=loaded --filename=$DEV --ioengine=libaio --iodepth=128 --direct=1 --bs=4k \
	--rw=randread --number_ios=16384 --randseed=1
log "Network RAM reads 128 deep: $(prof_get pl netram_read_mean_us) us"

# 2. the probe: flash is not measured yet
pf_set pl policy rr || die "policy rr"
wait_until 30 pl "the probe moved" pf_stat_ge pl prefetched $PROBE
assert_eq "$(pf_stat pl compared_reads)" 0 "flash reads compared before any was read"

# 3. one page at a time over the whole device: both tiers in every interval
run_fio quiet --name=quiet --filename=$DEV --ioengine=psync --direct=1 --bs=4k \
	--rw=randread --number_ios=2048 --randseed=2
flash_us=$(prof_get pl flash_read_mean_us) netram_us=$(prof_get pl netram_read_mean_us)
cf=$(pf_stat pl compared_flash_read_us) cn=$(pf_stat pl compared_netram_read_us)
log "reads since creation: flash $flash_us us, Network RAM $netram_us us; in the same intervals ($(pf_stat pl compared_reads) flash reads): flash $cf us, Network RAM $cn us"
assert_lt "$flash_us" "$netram_us" "flash's mean read latency since creation against Network RAM's (the premise: it looks faster)"
assert_ge "$(pf_stat pl compared_reads)" 64 "flash reads compared with Network RAM's in the same intervals"
assert_gt "$cf" "$cn" "flash's read latency against Network RAM's, in the same intervals"

w=$(pf_stat pl wakeups)
wait_until 30 pl "20 wake-ups after the reads" pf_stat_ge pl wakeups $((w + 20))
assert_eq "$(pf_stat pl prefetched)" $PROBE "pages moved: the probe, nothing more (flash is slower)"
blkpat verify $DEV 0 $N 1 || die "data"
dm_remove pl || die "remove"
dm_remove slowflash || die "remove the dm-delay flash"
log "ok"
