# when=pays judges its moves by what they cost Network RAM's reads
# (issue 33): the moves' own requests slow Network RAM.  Here a server that
# answers one request at a time, a GET in 2 ms per page
# (tests/lib/misbehaving-server slow-gets), so the foreground's one-page
# reads queue behind the mover's many-page ones.
# 1. Room: with a flash (dm-delay) whose reads take 10 ms and Network RAM
#    counted as scarce (when=pays:100), rr moves; once the tiers' reads,
#    compared over the same intervals, show Network RAM slower than flash,
#    the worker moves nothing more (a module that counts scarce room as
#    paying whatever the latencies keeps moving, and the pages it keeps in
#    Network RAM are read slower than from flash).  Reads in the intervals
#    after wake-ups that moved nothing measure the two tiers without the
#    moves (prefetch/stats quiet_compared_*): there Network RAM is faster.
# 2. Reads: with a flash faster than the idle Network RAM and room to
#    spare, rr moves while flash's reads save more than the moves add to
#    Network RAM's; once the moves add more, it moves at most a tenth of its
#    full rate (a module that moves whenever flash is the faster keeps
#    moving at full rate).
# The data verifies.
# kernels: 6.1
# mem: 256M
# servers: 1
# disks: flash=128M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/room
N=16384
FILL="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k --randseed=70"

server_ctl misbehave 0 slow-gets >/dev/null || die "server 0 with slow-gets"
dm_create slowflash "0 $(blockdev --getsz "$FLASH") delay $FLASH 0 10 $FLASH 0 0" ||
	die "create the dm-delay flash"
dm_create room "0 $((N * 8)) nswap2l 4 $(netram_table_arg) flash=/dev/mapper/slowflash prefetch=none,amount=held:100:256,interval=10" ||
	die "create"
# shellcheck disable=SC2086
run_fio fill --name=w $FILL --rw=randwrite --verify=crc32c --do_verify=0
assert_eq "$(sysfs_stat room tiers netram writes)" $N "pages written to Network RAM"

# comparison NAME PREFIX: "reads flash_us netram_us" of NAME's prefetch/stats, read at once
comparison() {
	awk -v p="$2" '$1 == p "reads" { r = $2 } $1 == p "flash_read_us" { f = $2 }
		$1 == p "netram_read_us" { n = $2 } END { print r + 0, f + 0, n + 0 }' \
		"/sys/kernel/nswap2l/$1/prefetch/stats"
}
# netram_slower_loaded: the comparison over every interval is trusted and has Network RAM slower
netram_slower_loaded() {
	set -- $(comparison room compared_)
	[ "$1" -ge 64 ] && [ "$3" -gt "$2" ]
}
# assert_no_moves NAME WHAT: NAME's worker moves nothing in its next 10 wake-ups
assert_no_moves() {
	_moved=$(pf_stat "$1" prefetched) _w=$(pf_stat "$1" wakeups)
	wait_until 30 "$1" "10 wake-ups" pf_stat_ge "$1" wakeups $((_w + 10))
	assert_eq "$(pf_stat "$1" prefetched)" "$_moved" "$2"
}

# one page at a time, as swap reads, over the whole device, while rr moves
fio --name=r --filename=$DEV --ioengine=psync --direct=1 --bs=4k --rw=randread \
	--time_based --runtime=120 --randseed=2 --eta=never --output=/tmp/reads.log &
reads=$!
pf_set room when pays:100 || die "when pays:100"
pf_set room policy rr || die "policy rr"
wait_until 30 room "Network RAM's reads slower than flash's under the moves" netram_slower_loaded
moved=$(pf_stat room prefetched)
log "under the moves (flash reads, flash us, Network RAM us): $(comparison room compared_); $moved pages moved"
assert_lt "$moved" $N "pages moved when Network RAM was found slower (the mover had more to move)"
assert_no_moves room "pages moved while Network RAM, under the moves, reads slower than flash"

wait_until 30 room "reads compared in quiet intervals" pf_stat_ge room quiet_compared_reads 64
set -- $(comparison room quiet_compared_)
log "without the moves (flash reads, flash us, Network RAM us): $*"
assert_lt "$3" "$2" "Network RAM's read latency against flash's without the moves (the premise: idle, it is faster)"
kill "$reads" 2>/dev/null; wait "$reads" 2>/dev/null || :	# the reads were only a load

# shellcheck disable=SC2086
run_fio verify --name=w $FILL --rw=randwrite --verify=crc32c --verify_only --verify_fatal=1
dm_remove room || die "remove"
dm_remove slowflash || die "remove the dm-delay flash"

# 2. the flash itself, faster than the idle Network RAM
DEV=/dev/mapper/reads
FILL="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k --randseed=71"
dm_create reads "0 $((N * 8)) nswap2l 4 $(netram_table_arg) flash=$FLASH prefetch=none,amount=held:100:256,interval=10" ||
	die "create"
# shellcheck disable=SC2086
run_fio fill --name=w $FILL --rw=randwrite --verify=crc32c --do_verify=0
# reads_lose_more: both comparisons trusted; flash faster than the idle
# Network RAM, by less than the moves add to Network RAM's reads
reads_lose_more() {
	set -- $(comparison reads compared_) $(comparison reads quiet_compared_)
	[ "$1" -ge 64 ] && [ "$4" -ge 64 ] && [ "$5" -le "$6" ] && [ $(($3 - $6)) -gt $(($6 - $5)) ]
}
# reads of the first pages (the probe moves them: flash) and of the last
# (rr reaches them last: Network RAM), one page at a time each
fio --filename=$DEV --ioengine=psync --direct=1 --bs=4k --rw=randread --time_based --runtime=120 \
	--randseed=3 --eta=never --output=/tmp/reads.log \
	--name=first --offset=0 --size=1M --name=last --offset=$(((N - 256) * 4096)) --size=1M &
reads=$!
pf_set reads policy rr || die "policy rr"
wait_until 30 reads "flash's reads saving less than the moves add to Network RAM's" reads_lose_more
log "all intervals (flash reads, flash us, Network RAM us): $(comparison reads compared_);" \
	"quiet: $(comparison reads quiet_compared_); $(pf_stat reads prefetched) pages moved"
assert_le "$(pf_stat reads prefetched)" $((N / 2)) "pages moved when the moves were found to cost more (the mover had as many more to move)"
# Each tier's latency is counted when a read ends, so a Network RAM read
# that waited behind the mover's ends in the quiet interval after it: the
# two comparisons move with such reads, and a wake-up now and then moves
# again.  At full rate the next 100 wake-ups would move all the pages left.
moved=$(pf_stat reads prefetched) w=$(pf_stat reads wakeups)
wait_until 60 reads "100 wake-ups" pf_stat_ge reads wakeups $((w + 100))
log "the next 100 wake-ups moved $(($(pf_stat reads prefetched) - moved)) pages"
assert_le "$(($(pf_stat reads prefetched) - moved))" 2560 \
	"pages moved in 100 wake-ups while flash's reads save less than the moves add to Network RAM's (a tenth of the full rate)"
kill "$reads" 2>/dev/null; wait "$reads" 2>/dev/null || :	# the reads were only a load
# shellcheck disable=SC2086
run_fio verify --name=w $FILL --rw=randwrite --verify=crc32c --verify_only --verify_fatal=1
dm_remove reads || die "remove"
server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
