# Prefetching moves only while a move pays (issue 33): the default
# when=pays moves pages while flash reads are faster than Network RAM's or
# not measured yet, or while Network RAM is scarce.  Flash here is a
# dm-delay that holds every read 8 ms, far slower than Network RAM.  A
# fresh device moves a probe of 256 pages in all, however many wake-ups go
# by, while flash reads are not measured (moving at full rate meanwhile
# filled flash during a swap fill); reads of the moved pages (one page each,
# as swap's) measure the flash; then, with Network RAM mostly free, new pages stay in
# Network RAM (with when=always rr would move
# them all), but for one wake-up's probe after 1024 wake-ups in which
# flash served no read (its last measure would stand for good).
# when=pays:100 (scarce below 100 % free: always here) moves them; the data
# verifies throughout.
# kernels: 6.1
# servers: 1
# disks: flash=64M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
DEV=/dev/mapper/pays
N=1024

dm_create slowflash "0 $(blockdev --getsz "$FLASH") delay $FLASH 0 8 $FLASH 0 0" ||
	die "create the dm-delay flash"
dm_create pays "0 $((3 * N * 8)) nswap2l 4 $NETRAM flash=/dev/mapper/slowflash prefetch=rr,amount=held:100:64,interval=50" ||
	die "create"
assert_eq "$(pf_get pays when)" pays:25 "the default when"

# 1. flash not measured yet: the worker moves a probe, no more
PROBE=256
blkpat write $DEV 0 $N 1 >/dev/null || die "write the first region"
wait_until 30 pays "the probe moved while flash reads are not measured" pf_stat_ge pays prefetched $PROBE
w=$(pf_stat pays wakeups)
wait_until 30 pays "20 wake-ups after the probe" pf_stat_ge pays wakeups $((w + 20))
assert_eq "$(pf_stat pays prefetched)" $PROBE "pages moved while flash reads are not measured (64 a wake-up allowed)"
pf_set pays policy none || die "policy none"
# one page per read, as swap reads: a tier's latency is per bio
dd if=$DEV of=/dev/null bs=4096 count=$N iflag=direct 2>/dev/null || die "read the first region"
blkpat verify $DEV 0 $N 1 || die "first region"
flash_us=$(prof_get pays flash_read_mean_us) netram_us=$(prof_get pays netram_read_mean_us)
log "$(pf_stat pays prefetched) pages moved; reads: flash $flash_us us, Network RAM $netram_us us"
assert_gt "$flash_us" "$netram_us" "flash read latency over Network RAM's (the premise)"

# 2. flash measured slower, Network RAM mostly free: nothing moves
blkpat write $DEV $N $N 2 >/dev/null || die "write the second region"
moved=$(pf_stat pays prefetched)
pf_set pays policy rr || die "policy rr"
w=$(pf_stat pays wakeups)
wait_until 30 pays "20 wake-ups" pf_stat_ge pays wakeups $((w + 20))
assert_eq "$(pf_stat pays prefetched)" "$moved" "pages moved while a move does not pay"

# 2b. nothing read from flash since: after 1024 wake-ups, one wake-up's probe again
pf_set pays interval 10 || die "interval 10"
wait_until 90 pays "a probe again after 1024 wake-ups with no flash read" \
	pf_stat_ge pays prefetched $((moved + 1))
reprobed=$(($(pf_stat pays prefetched) - moved))
log "probed again after $(($(pf_stat pays wakeups) - w)) wake-ups: $reprobed pages"
assert_ge "$(pf_stat pays wakeups)" $((w + 1000)) "wake-ups before the probe again"
assert_eq "$reprobed" 64 "pages of the probe again (one wake-up's, 64 allowed)"
moved=$(pf_stat pays prefetched)

# 3. Network RAM scarce by the setting: the worker moves again
pf_set pays when pays:100 || die "when pays:100"
wait_until 30 pays "pages moved while Network RAM counts as scarce" \
	pf_stat_ge pays prefetched $((moved + 64))
log "$(( $(pf_stat pays prefetched) - moved )) pages moved with when=pays:100"
blkpat verify $DEV 0 $N 1 || die "first region, at the end"
blkpat verify $DEV $N $N 2 || die "second region"
dm_remove pays || die "remove"
dm_remove slowflash || die "remove the dm-delay flash"
log "ok"
