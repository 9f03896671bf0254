# Recovery follows recovery_rate, md's speed_limit_min and _max: set by
# message or sysfs, checked (min at least 1 and at most max).  A mirrored
# device whose server is killed (SIGKILL) recovers its pages within a low
# maximum, over the time it takes (dmesg's pages/s); another recovery
# held at a lower maximum (50) speeds up once the maximum is raised while it
# runs, the device idle.  Every page reads right afterwards.
# The mover's rate logic, over interfaces that the kernel-facing cases
# test on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 5
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/nsw
PAGES=2048                                  # 8 MiB, about 820 pages per server
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 $(netram_table_arg) timeout=3 reliability=mirror" ||
	die "create failed"
SYS=/sys/kernel/nswap2l/nsw
ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
lost() { nsw_recovery nsw copies_lost; }

# 1. the defaults, shown by the message and sysfs; bad values refused
rate=$(dmsetup message nsw 0 recovery_rate) || die "recovery_rate message refused: $(dmesg | tail -1)"
assert_eq "$rate" "$(cat $SYS/recovery_rate_min) $(cat $SYS/recovery_rate_max)" "recovery_rate: message and sysfs"
dmsetup message nsw 0 help | grep -q "^recovery_rate " || die "help has no recovery_rate"
dmesg_mark
expect_fail "min above max" dmsetup message nsw 0 recovery_rate 300 200
expect_fail "min 0" dmsetup message nsw 0 recovery_rate 0 200
expect_fail "not a number" dmsetup message nsw 0 recovery_rate 10 fast
expect_fail "sysfs max below min" sysfs_put $SYS/recovery_rate_max 0
dmesg_new | grep -q "recovery_rate 300 200: the minimum must be at least 1 and at most the maximum" ||
	die "no dmesg line for a bad recovery_rate: $(dmesg_new)"
assert_eq "$(dmsetup message nsw 0 recovery_rate)" "$rate" "recovery_rate after refusals"
sysfs_put $SYS/recovery_rate_min 20 || die "sysfs recovery_rate_min"
sysfs_put $SYS/recovery_rate_max 300 || die "sysfs recovery_rate_max"
assert_eq "$(dmsetup message nsw 0 recovery_rate)" "20 300" "recovery_rate set through sysfs"

# 2. a maximum of 200 pages/s holds over the whole recovery
dmsetup message nsw 0 recovery_rate 20 200 || die "recovery_rate 20 200"
blkpat write $DEV 0 $PAGES 5 || die "blkpat write"
held=$(netram_stat nsw 1 held)
assert_gt "$held" 400 "copies on server 1"
dmesg_mark
server_ctl kill 1 || die "kill server 1"
wait_until 30 nsw "server 1 failed" servers_in_state nsw failed 1
wait_until 60 nsw "recovery done" nsw_recovered nsw
line=$(dmesg_new | grep "recovery done in") || die "no dmesg line for the recovery: $(dmesg_new)"
log "$line"
set -- $(echo "$line" | sed -n 's/.*recovery done in \([0-9]*\) ms: \([0-9]*\) pages copied again (\([0-9]*\) pages\/s).*/\1 \2 \3/p')
[ $# = 3 ] || die "recovery line without a rate: $line"
assert_ge "$2" "$held" "pages copied again"
assert_le "$(($2 * 1000 / $1))" 220 "recovery's pages/s with a maximum of 200"
assert_le "$3" 220 "pages/s in dmesg with a maximum of 200"
blkpat verify $DEV 0 $PAGES 5 || die "blkpat verify after the first recovery"

# 3. held at 50 pages/s, then the maximum raised while it runs: faster
dmsetup message nsw 0 recovery_rate 20 50 || die "recovery_rate 20 50"
assert_gt "$(netram_stat nsw 3 held)" 600 "copies on server 3"
server_ctl kill 3 || die "kill server 3"
wait_until 30 nsw "server 3 failed" servers_in_state nsw failed 3
sleep 1
c1=$(lost) t1=$(ms)
sleep 3
c2=$(lost) t2=$(ms)
slow=$(((c1 - c2) * 1000 / (t2 - t1)))
log "held at 50 pages/s: $((c1 - c2)) pages in $((t2 - t1)) ms ($slow pages/s), $c2 left"
assert_le "$slow" 58 "pages/s with a maximum of 50"
assert_gt "$c2" 300 "copies left to recover at the higher maximum"
dmsetup message nsw 0 recovery_rate 20 100000 || die "recovery_rate 20 100000"
until nsw_recovered nsw; do
	[ $(($(ms) - t2)) -lt 60000 ] || die "recovery not done 60 s after the maximum was raised"
	sleep 0.1
done
fast=$((c2 * 1000 / ($(ms) - t2)))
log "maximum raised: $c2 pages at $fast pages/s"
assert_gt "$fast" $((3 * slow)) "pages/s after the maximum was raised, against $slow before"
blkpat verify $DEV 0 $PAGES 5 || die "blkpat verify after the second recovery"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
dm_remove nsw || die "remove"
log "ok"
