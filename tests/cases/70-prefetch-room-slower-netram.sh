# when=pays counts the room it makes in Network RAM only while Network RAM,
# under the moves that make it, still reads faster than flash (issue 33).
# The moves' own requests slow Network RAM: here a server that answers one
# request at a time, a GET in 2 ms per page (tests/lib/misbehaving-server
# slow-gets), so the foreground's one-page reads queue behind the mover's
# many-page ones, and a flash (dm-delay) whose reads take 10 ms.  With Network RAM counted as scarce (when=pays:100)
# rr moves; once the tiers' reads, compared over the same intervals, show
# Network RAM slower than flash, the worker moves nothing more (a module that
# counts scarce room as paying whatever the latencies keeps moving, and the
# pages it keeps in Network RAM are read slower than from flash).  Reads in
# the intervals after wake-ups that moved nothing measure the two tiers
# without the moves (prefetch/stats quiet_compared_*).  The data verifies.
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

# comparison PREFIX: "reads flash_us netram_us" of prefetch/stats, read at once
comparison() {
	awk -v p="$1" '$1 == p "reads" { r = $2 } $1 == p "flash_read_us" { f = $2 }
		$1 == p "netram_read_us" { n = $2 } END { print r + 0, f + 0, n + 0 }' \
		/sys/kernel/nswap2l/room/prefetch/stats
}
# netram_slower_loaded: the comparison over every interval is trusted and has Network RAM slower
netram_slower_loaded() {
	set -- $(comparison compared_)
	[ "$1" -ge 64 ] && [ "$3" -gt "$2" ]
}

# one page at a time, as swap reads, over the whole device, while rr moves
fio --name=r --filename=$DEV --ioengine=psync --direct=1 --bs=4k --rw=randread \
	--time_based --runtime=40 --randseed=2 --eta=never --output=/tmp/reads.log &
reads=$!
pf_set room when pays:100 || die "when pays:100"
pf_set room policy rr || die "policy rr"
wait_until 30 room "Network RAM's reads slower than flash's under the moves" netram_slower_loaded
moved=$(pf_stat room prefetched) w=$(pf_stat room wakeups)
log "under the moves (flash reads, flash us, Network RAM us): $(comparison compared_); $moved pages moved"
assert_lt "$moved" $N "pages moved when Network RAM was found slower (the mover had more to move)"
wait_until 30 room "10 wake-ups" pf_stat_ge room wakeups $((w + 10))
assert_eq "$(pf_stat room prefetched)" "$moved" "pages moved while Network RAM, under the moves, reads slower than flash"

wait_until 30 room "reads compared in quiet intervals" pf_stat_ge room quiet_compared_reads 64
set -- $(comparison quiet_compared_)
log "without the moves (flash reads, flash us, Network RAM us): $*"
assert_lt "$3" "$2" "Network RAM's read latency against flash's without the moves (the premise: idle, it is faster)"
wait "$reads" || { tail -n 15 /tmp/reads.log; die "fio reads"; }

# shellcheck disable=SC2086
run_fio verify --name=w $FILL --rw=randwrite --verify=crc32c --verify_only --verify_fatal=1
dm_remove room || die "remove"
dm_remove slowflash || die "remove the dm-delay flash"
server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
