# Prefetching when Network RAM is scarce (Nswap2L: moving pages to flash
# keeps Network RAM free for new writes).  One server holds 4,096 pages; a
# device of 12,288 is filled once without prefetching (the first third
# lands in Network RAM, the rest spills to flash), then a hot set of 2,048 pages written last
# (on flash) is written again round after round.  Without prefetching
# Network RAM stays full of the cold pages written first and the hot set
# stays on flash; with lrs and amount=free:25 (pages not touched since its
# clock hand last passed, as many as keep a quarter of Network RAM free)
# the cold pages move to flash and the hot set's writes
# go back to Network RAM, where reading it finds it.  auto, given more
# rounds (it tries every policy first, then one at random at one wake-up in
# eight), must learn the same: with Network RAM scarce, a policy whose
# pages come straight back (mrs) pays least.  Where the hot set
# lives is read from the tier counters while it is read back; the data
# verifies.  Each device is removed before the next (RELEASE leaves the
# server empty).
# kernels: 6.12
# mem: 256M
# servers: 1 max=16M reserve=0
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
NETRAM_PAGES=4096
PAGES=12288
HOT=2048
HOT_FIRST=$((PAGES - HOT))

# hot_in_netram POLICY ROUNDS: prints how many hot pages Network RAM served
hot_in_netram() {
	_p=$1 _rounds=$2
	dm_create sc "0 $((PAGES * 8)) nswap2l 4 $NETRAM flash=$FLASH prefetch=none,amount=free:25,interval=200" ||
		die "create for prefetch=$_p"
	# Network RAM fills with whatever is written first
	blkpat write /dev/mapper/sc 0 $PAGES 7 >/dev/null || die "$_p: fill"
	pf_set sc policy $_p || die "set policy $_p"
	# the server's own bookkeeping takes some of its 16 MiB
	_held=$(tier_stat sc netram used)
	assert_ge "$_held" $((NETRAM_PAGES * 3 / 4)) "$_p: pages in Network RAM after the fill"
	assert_le "$_held" $NETRAM_PAGES "$_p: pages in Network RAM after the fill"
	_r=0
	while [ $_r -lt $_rounds ]; do
		_r=$((_r + 1))
		blkpat write /dev/mapper/sc $HOT_FIRST $HOT $((10 + _r)) >/dev/null || die "$_p: hot round $_r"
		# a wake-up per round, however fast the guest writes
		if [ "$_p" = none ]; then
			sleep 0.2
		else
			_w=$(pf_stat sc wakeups)
			wait_until 30 sc "$_p: a wake-up after hot round $_r" pf_stat_ge sc wakeups $((_w + 1))
		fi
	done
	_n0=$(tier_stat sc netram reads) _f0=$(tier_stat sc flash reads)
	blkpat verify /dev/mapper/sc $HOT_FIRST $HOT $((10 + _rounds)) >&2 || die "$_p: hot set data"
	_n1=$(tier_stat sc netram reads) _f1=$(tier_stat sc flash reads)
	blkpat verify /dev/mapper/sc 0 $HOT_FIRST 7 >&2 || die "$_p: cold data"
	log "$_p: hot set read $((_n1 - _n0)) pages from Network RAM, $((_f1 - _f0)) from flash; $(pf_stat sc prefetched) pages prefetched, $(pf_stat sc rewritten) of them written again; choice $(pf_stat sc choice)" >&2
	if [ "$_p" = auto ]; then
		grep -E '^(auto_|.*_prefetched |.*_rewritten |.*_score )' /sys/kernel/nswap2l/sc/prefetch/stats | tr '\n' ' ' >&2
		# mrs moved the pages being written: they came straight back
		_mrs=$(pf_stat sc mrs_score) _lrs=$(pf_stat sc lrs_score)
		assert_le "$_mrs" -500 "auto: mrs's score (per mille of its pages that paid)"
		assert_gt "$_lrs" "$_mrs" "auto: lrs's score against mrs's"
	fi
	assert_eq "$((_n1 - _n0 + _f1 - _f0))" $HOT "$_p: pages read of the hot set"
	assert_eq "$(nsw_nospace sc)" 0 "$_p: nospace errors"
	dm_remove sc || die "$_p: remove"
	echo $((_n1 - _n0))
}

control=$(hot_in_netram none 8)
lrs=$(hot_in_netram lrs 8)
auto=$(hot_in_netram auto 16)
log "hot pages in Network RAM: $control without prefetching, $lrs with lrs, $auto with auto"
assert_le "$control" $((HOT / 20)) "hot pages in Network RAM without prefetching"
assert_ge "$lrs" $((HOT * 9 / 10)) "hot pages in Network RAM with lrs"
# one last wake-up that tries mrs moves at most a quarter of Network RAM
assert_ge "$auto" $((HOT / 2)) "hot pages in Network RAM with auto"
log "ok"
