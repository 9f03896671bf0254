# Prefetching from Network RAM to flash, policy by policy.  First lrs and
# mrs on a workload that tells them apart: region A is written and left
# alone (amount written:0 moves nothing; mrs's hand ages it at every
# wake-up), then region B is written with a quota of exactly the pages B
# brings (written:100, one long interval; for lrs, whose hand ages only
# while it looks for pages, B twice): lrs moves A to flash and leaves B in
# Network RAM, mrs the opposite, as the tier that serves each region's
# reads shows.  Then swap with checksummed memory (memcheck) under each of
# rr, random, lrs, mrs and auto: memory verifies, the pages are counted for
# the policy's own arm and flash fills while memcheck runs (without
# prefetching it stays empty: the server has room for everything).
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 128M
# servers: 1
# disks: flash=64M disk=256M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
ARMS="rr random lrs mrs"

# --- lrs vs mrs ----------------------------------------------------------------
N=1024
A=0
B=$((2 * N))
SLACK=32                        # pages a region may read from the "wrong" tier
flash_has() { [ "$(tier_stat "$1" flash used)" -ge "$2" ]; }

# tell_apart POLICY A|B: POLICY must move region A (or B) to flash, not the other
tell_apart() {
	_p=$1
	dm_create lm "0 $((4 * N * 8)) nswap2l 4 $NETRAM flash=$FLASH prefetch=$_p,when=always,amount=written:0,interval=100" ||
		die "create with prefetch=$_p"
	_lm_dev=/dev/mapper/lm
	assert_eq "$(pf_get lm policy)" "$_p" "$_p: prefetch policy"
	assert_eq "$(pf_get lm amount)" written:0:4096 "$_p: prefetch amount"
	blkpat write $_lm_dev $A $N 41 || die "$_p: write region A"
	_w=$(pf_stat lm wakeups)
	_num "$_w" "$_p: wakeups"
	# every wake-up's hand passes all of A and clears its bits
	wait_until 30 lm "$_p: 3 wake-ups after writing A" pf_stat_ge lm wakeups $((_w + 3))
	assert_eq "$(pf_stat lm prefetched)" 0 "$_p: pages prefetched with amount written:0"
	assert_eq "$(tier_stat lm flash used)" 0 "$_p: flash used with amount written:0"
	assert_eq "$(tier_stat lm netram used)" $N "$_p: pages in Network RAM after writing A"

	# B is written within one 2 s interval: no wake-up with nothing written
	# (an aging lap) falls in the middle of it and clears B's bits
	pf_set lm interval 2000 || die "$_p: set interval 2000"
	pf_set lm amount written:100 || die "$_p: set amount written:100"
	assert_eq "$(pf_get lm amount)" written:100:4096 "$_p: prefetch amount"
	blkpat write $_lm_dev $B $N 42 || die "$_p: write region B"
	if [ "$_p" = lrs ]; then
		# lrs's hand ages only while it looks for pages (CLOCK): its
		# first lap clears A's and B's bits and takes nothing; B
		# written again, the next one takes A
		_w=$(pf_stat lm wakeups)
		wait_until 30 lm "lrs: a wake-up after writing B" pf_stat_ge lm wakeups $((_w + 1))
		blkpat write $_lm_dev $B $N 42 || die "$_p: write region B again"
	fi
	wait_until 60 lm "$_p: $N pages prefetched after writing B" pf_stat_ge lm prefetched $N
	wait_until 30 lm "$_p: $N pages on flash" flash_has lm $N
	show_status lm
	assert_ge "$(pf_stat lm "${_p}_prefetched")" $N "$_p: pages its arm prefetched"

	_fr0=$(tier_stat lm flash reads) _nr0=$(tier_stat lm netram reads) _pr0=$(pf_stat lm "${_p}_reads")
	blkpat verify $_lm_dev $A $N 41 || die "$_p: region A corrupted"
	_fr1=$(tier_stat lm flash reads) _nr1=$(tier_stat lm netram reads)
	blkpat verify $_lm_dev $B $N 42 || die "$_p: region B corrupted"
	_fr2=$(tier_stat lm flash reads) _nr2=$(tier_stat lm netram reads) _pr2=$(pf_stat lm "${_p}_reads")
	_num "$_pr0" "$_p: ${_p}_reads"
	_num "$_pr2" "$_p: ${_p}_reads"
	_fa=$((_fr1 - _fr0)) _na=$((_nr1 - _nr0)) _fb=$((_fr2 - _fr1)) _nb=$((_nr2 - _nr1))
	log "$_p: reading A: $_fa pages from flash, $_na from Network RAM; B: $_fb and $_nb"
	if [ "$2" = A ]; then
		_fl=$_fa _nf=$_na _nl=$_nb _ff=$_fb
	else
		_fl=$_fb _nf=$_nb _nl=$_na _ff=$_fa
	fi
	assert_ge "$_fl" $((N - SLACK)) "$_p: flash reads of region $2 (prefetched)"
	assert_le "$_nf" $SLACK "$_p: Network RAM reads of region $2 (prefetched)"
	assert_ge "$_nl" $((N - SLACK)) "$_p: Network RAM reads of the region left there"
	assert_le "$_ff" $SLACK "$_p: flash reads of the region left in Network RAM"
	assert_ge "$((_pr2 - _pr0))" $((N - SLACK)) "$_p: flash reads of pages its arm prefetched"
	dm_remove lm || die "$_p: remove"
}
tell_apart lrs A
tell_apart mrs B

# --- swap under each policy ------------------------------------------------------
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 5 $NETRAM flash=$FLASH disk=$DISK prefetch=rr,when=always,amount=written:50,interval=100" ||
	die "create swap device"
DEV=/dev/mapper/nsw
# 8 MiB more than is available: enough swapping for prefetching to act
# (thousands of pages per policy), little enough for five runs to stay
# short under emulation
avail_mb=$(($(meminfo_kb MemAvailable) / 1024))
MB=$((avail_mb + 8))
log "guest RAM available ${avail_mb} MiB, memcheck ${MB} MiB per policy"
mkswap $DEV >/dev/null || die "mkswap"
arm_sum() { # FIELD: prefetched|reads summed over the arms
	_s=0
	for _a in $ARMS; do
		_v=$(pf_stat nsw "${_a}_$1")
		_num "$_v" "${_a}_$1"
		_s=$((_s + _v))
	done
	echo $_s
}
flash_le() { [ "$(tier_stat nsw flash used)" -le "$1" ]; }

seed=0
for p in rr random lrs mrs auto; do
	seed=$((seed + 1))
	[ $p = rr ] || pf_set nsw policy $p || die "set policy $p"
	assert_eq "$(pf_get nsw policy)" $p "prefetch policy"
	assert_eq "$(pf_stat nsw policy)" $p "policy in prefetch/stats"
	assert_eq "$(pf_status nsw policy)" $p "policy in the status line"
	# swapon discards all but the header page (which may have been prefetched)
	swapon --discard $DEV || die "swapon ($p)"
	wait_until 30 nsw "flash empty after swapon --discard ($p)" flash_le 1
	f0=$(tier_stat nsw flash used)
	pf0=$(pf_stat nsw prefetched) arms0=$(arm_sum prefetched) own0=$(pf_stat nsw "${p}_prefetched")
	memcheck -m $MB -p 1 -s $seed >/tmp/mc.out 2>&1 &
	mc=$!
	fmax=$f0
	while kill -0 $mc 2>/dev/null; do
		sleep 1
		f=$(tier_stat nsw flash used)
		_num "$f" "flash used"
		[ "$f" -le "$fmax" ] || fmax=$f
	done
	memcheck_wait $mc /tmp/mc.out "memcheck failed with swap on nswap2l, prefetch policy $p"
	pf1=$(pf_stat nsw prefetched) arms1=$(arm_sum prefetched)
	show_status nsw
	log "$p: $((pf1 - pf0)) pages prefetched, at most $fmax on flash while memcheck ran"
	assert_gt "$pf1" "$pf0" "$p: pages prefetched while memcheck ran"
	assert_gt "$fmax" "$f0" "$p: pages on flash while memcheck ran"
	if [ $p = auto ]; then
		assert_gt "$arms1" "$arms0" "auto: pages prefetched, summed over the arms"
		choice=$(pf_stat nsw choice)
		case " $ARMS " in *" $choice "*) ;; *) die "auto: choice '$choice' is not one of $ARMS" ;; esac
	else
		assert_gt "$(pf_stat nsw "${p}_prefetched")" "$own0" "$p: pages its own arm prefetched"
		assert_eq "$(pf_stat nsw choice)" $p "$p: choice"
	fi
	swapoff $DEV || die "swapoff ($p)"
done

# the counters add up once the worker is idle (nothing written: quota 0)
w=$(pf_stat nsw wakeups)
wait_until 30 nsw "2 wake-ups with nothing written" pf_stat_ge nsw wakeups $((w + 2))
cat /sys/kernel/nswap2l/nsw/prefetch/stats
assert_eq "$(arm_sum prefetched)" "$(pf_stat nsw prefetched)" "prefetched, summed over the arms"
assert_eq "$(arm_sum reads)" "$(pf_stat nsw prefetched_reads)" "prefetched_reads, summed over the arms"
assert_gt "$(pf_stat nsw prefetched_reads)" 0 "swap-ins served by prefetched pages"
assert_eq "$(pf_status nsw prefetched)" "$(pf_stat nsw prefetched)" "prefetched in the status line"
assert_eq "$(pf_status nsw prefetched_reads)" "$(pf_stat nsw prefetched_reads)" "prefetched_reads in the status line"
float_in 0 "$(pf_stat nsw reads_per_prefetch)" 1000000 ||
	die "reads_per_prefetch '$(pf_stat nsw reads_per_prefetch)' is not a number"
assert_eq "$(netram_stat nsw 0 errors)" 0 "server errors"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
assert_eq "$(nsw_moved nsw)" 0 "moved_pages (prefetching does not count there)"
dm_remove nsw || die "remove"
log "ok"
