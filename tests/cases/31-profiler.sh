# The concurrency profiler (/sys/kernel/nswap2l/NAME/profile): it samples
# the bios in flight every 10 ms while the device is resumed (not while it
# is suspended); every histogram has 65 counts that sum to the samples.
# fio randread at iodepth 8 shows a read parallelism of about 8 (never much more),
# at iodepth 1 of 1, randwrite at iodepth 4 a write parallelism of about 4;
# the flash tier's counts and latencies follow, the idle disk tier's stay
# at zero.  "reset" (sysfs or message) clears it, anything else is refused;
# the status line ends with the same read and write parallelism.  The flash
# disk is throttled to 150 IOPS so that the device, not fio under
# emulation, sets the pace: fio then keeps its iodepth in flight.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# disks: flash=64M@hdd-7200 disk=64M
# timeout: 300

load_nswap2l
PAGES=4096                                    # 16 MiB: all of it on flash
dm_create prof "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create"
DEV=/dev/mapper/prof
F=$(prof_file prof)
[ -f "$F" ] || die "no $F"
FIO="--filename=$DEV --ioengine=libaio --direct=1 --bs=4k --size=100% --randseed=31 --group_reporting"

# check_shape FILE: every key there, numbers where numbers belong, histograms sum to samples
check_shape() {
	_f=$1
	assert_eq "$(kv_get "$_f" sample_ms)" 10 "sample_ms"
	_num "$(kv_get "$_f" samples)" samples
	for _k in read_parallelism write_parallelism reads_per_prefetch flash_read_parallelism \
		flash_write_parallelism disk_read_parallelism disk_write_parallelism; do
		_v=$(kv_get "$_f" $_k)
		echo "$_v" | grep -qE '^[0-9]+\.[0-9][0-9]$' || die "profile $_k: '$_v' is not of the form x.xx"
	done
	for _k in prefetched prefetched_reads cancelled; do
		_num "$(kv_get "$_f" $_k)" "profile $_k"
	done
	for _t in flash disk; do
		for _k in reads read_time_us read_mean_us read_max_us writes write_time_us write_mean_us write_max_us; do
			_num "$(kv_get "$_f" ${_t}_$_k)" "profile ${_t}_$_k"
		done
	done
	for _k in read_hist write_hist flash_read_hist flash_write_hist disk_read_hist disk_write_hist; do
		prof_hist_check "$_f" $_k
	done
	for _k in netram_read_hist netram_reads netram_read_parallelism; do
		assert_eq "$(kv_get "$_f" $_k)" missing "profile $_k on a device without Network RAM"
	done
}
# latency_ok FILE TIER read|write: mean = time / count, max >= mean > 0
latency_ok() {
	_n=$(kv_get "$1" ${2}_${3}s) _t=$(kv_get "$1" ${2}_${3}_time_us)
	_m=$(kv_get "$1" ${2}_${3}_mean_us) _x=$(kv_get "$1" ${2}_${3}_max_us)
	log "$2 ${3}s: $_n, mean $_m us, max $_x us"
	assert_gt "$_n" 0 "$2 ${3}s"
	assert_gt "$_m" 0 "$2 ${3}_mean_us"
	assert_ge "$_x" "$_m" "$2 ${3}_max_us >= mean"
	assert_le "$((_t / _n - 1))" "$_m" "$2 ${3}_mean_us vs time/count"
	assert_ge "$((_t / _n + 1))" "$_m" "$2 ${3}_mean_us vs time/count"
}
fio_ios() { # read|write: the I/Os fio issued in its last run
	sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p' /tmp/fio-last.log |
		awk -v d="$1" '{ print (d == "read" ? $1 : $2) }'
}

prof_snap prof /tmp/p0
cat /tmp/p0
check_shape /tmp/p0

# --- sampling rate: about 100 samples a second ------------------------------------
s0=$(prof_get prof samples) t0=$(uptime_cs)
sleep 2
s1=$(prof_get prof samples) t1=$(uptime_cs)
want=$((t1 - t0))                             # one sample per 10 ms
log "$((s1 - s0)) samples in $((t1 - t0))0 ms"
assert_ge "$((s1 - s0))" $((want / 5)) "samples in $((t1 - t0))0 ms"
assert_le "$((s1 - s0))" $((want * 6 / 5 + 5)) "samples in $((t1 - t0))0 ms"

# --- not while suspended ---------------------------------------------------------
s0=$(prof_get prof samples) t0=$(uptime_cs)
dmsetup suspend prof || die "suspend"
t1=$(uptime_cs)
sleep 3
t2=$(uptime_cs)
dmsetup resume prof || die "resume"
s1=$(prof_get prof samples) t3=$(uptime_cs)
resumed=$((t1 - t0 + t3 - t2))                # at most this long resumed, in 1/100 s
log "$((s1 - s0)) samples over $((t3 - t0))0 ms, at most $((resumed))0 ms of it resumed"
assert_le "$((s1 - s0))" $((resumed * 6 / 5 + 10)) "samples across 3 s suspended"

# --- fill the device so that reads go to flash --------------------------------------
# shellcheck disable=SC2086
run_fio fill --name=fill $FIO --rw=write --iodepth=4 --bs=1M
assert_eq "$(tier_stat prof flash used)" $PAGES "pages on flash"

# --- iodepth 8 -----------------------------------------------------------------
sysfs_put "$F" reset || die "reset"
# shellcheck disable=SC2086
run_fio qd8 --name=qd8 $FIO --rw=randread --iodepth=8 --time_based --runtime=5
prof_snap prof /tmp/p8
cat /tmp/p8
check_shape /tmp/p8
samples=$(kv_get /tmp/p8 samples)
rp=$(kv_get /tmp/p8 read_parallelism) frp=$(kv_get /tmp/p8 flash_read_parallelism)
log "iodepth 8: read parallelism $rp, flash $frp, over $samples samples"
assert_float_in 5 "$rp" 8.5 "read_parallelism at iodepth 8"
assert_float_in 5 "$frp" 8.5 "flash_read_parallelism at iodepth 8"
assert_gt "$(prof_bins /tmp/p8 read_hist 5 64)" 0 "samples with 5 or more reads in flight"
assert_le "$(prof_bins /tmp/p8 read_hist 10 64)" $((samples / 50)) "samples with 10 or more reads in flight"
assert_eq "$(prof_bins /tmp/p8 write_hist 1 64)" 0 "samples with writes in flight, reads only"
assert_eq "$(kv_get /tmp/p8 write_parallelism)" 0.00 "write_parallelism, reads only"
assert_eq "$(kv_get /tmp/p8 disk_reads)" 0 "disk reads"
assert_eq "$(kv_get /tmp/p8 disk_read_parallelism)" 0.00 "disk_read_parallelism"
assert_eq "$(prof_bins /tmp/p8 disk_read_hist 0 0)" "$samples" "samples with no disk read in flight"
n=$(fio_ios read)
fr=$(kv_get /tmp/p8 flash_reads)
log "fio issued $n reads, the flash tier completed $fr read bios"
assert_ge "$fr" $((n * 9 / 10)) "flash read bios vs fio's reads"
assert_le "$fr" $((n + 16)) "flash read bios vs fio's reads"
latency_ok /tmp/p8 flash read
# the status line ends with the same parallelism
st=$(dmsetup status prof)
echo "$st" | awk '{ exit !($(NF - 1) ~ /^[0-9]+\.[0-9][0-9]$/ && $NF ~ /^[0-9]+\.[0-9][0-9]$/) }' ||
	die "status does not end with two parallelism figures: $st"
assert_eq "$(pf_status prof read_parallelism)" "$(prof_get prof read_parallelism)" "read parallelism: status vs profile"
assert_eq "$(pf_status prof write_parallelism)" "$(prof_get prof write_parallelism)" "write parallelism: status vs profile"
assert_eq "$(pf_status prof policy)" none "prefetch policy in the status line"
assert_eq "$(pf_status prof prefetched) $(pf_status prof prefetched_reads) $(pf_status prof cancelled)" "0 0 0" \
	"prefetch counters in the status line"

# --- iodepth 1 -----------------------------------------------------------------
dmsetup message prof 0 profile reset || die "message profile reset"
# shellcheck disable=SC2086
run_fio qd1 --name=qd1 $FIO --rw=randread --iodepth=1 --time_based --runtime=3
prof_snap prof /tmp/p1
check_shape /tmp/p1
rp=$(kv_get /tmp/p1 read_parallelism)
log "iodepth 1: read parallelism $rp"
assert_float_in 0.9 "$rp" 1.5 "read_parallelism at iodepth 1"
assert_float_in 0.9 "$(kv_get /tmp/p1 flash_read_parallelism)" 1.5 "flash_read_parallelism at iodepth 1"
assert_le "$(prof_bins /tmp/p1 read_hist 3 64)" $(($(kv_get /tmp/p1 samples) / 50)) "samples with 3 or more reads in flight"
latency_ok /tmp/p1 flash read

# --- writes at iodepth 4 -----------------------------------------------------------
sysfs_put "$F" reset || die "reset"
# shellcheck disable=SC2086
run_fio qd4w --name=qd4w $FIO --rw=randwrite --iodepth=4 --size=1M --verify=crc32c --verify_fatal=1 --do_verify=0
prof_snap prof /tmp/p4
check_shape /tmp/p4
wp=$(kv_get /tmp/p4 write_parallelism)
log "randwrite iodepth 4: write parallelism $wp"
assert_float_in 2 "$wp" 4.5 "write_parallelism at iodepth 4"
assert_float_in 2 "$(kv_get /tmp/p4 flash_write_parallelism)" 4.5 "flash_write_parallelism at iodepth 4"
assert_gt "$(kv_get /tmp/p4 flash_writes)" 0 "flash write bios"
latency_ok /tmp/p4 flash write
assert_eq "$(kv_get /tmp/p4 disk_writes)" 0 "disk writes"
# shellcheck disable=SC2086
run_fio qd4w-verify --name=qd4w $FIO --rw=randwrite --iodepth=4 --size=1M --verify=crc32c --verify_fatal=1 --verify_only

# --- reset -------------------------------------------------------------------------
before=$(prof_get prof samples)
_num "$before" samples
sysfs_put "$F" reset || die "reset"
prof_snap prof /tmp/pr
check_shape /tmp/pr
after=$(kv_get /tmp/pr samples)
log "samples before reset $before, after $after"
assert_lt "$after" "$before" "samples after reset"
assert_le "$after" 100 "samples right after reset"
for k in flash_reads flash_writes flash_read_time_us flash_read_max_us flash_write_max_us; do
	assert_eq "$(kv_get /tmp/pr $k)" 0 "$k after reset"
done
assert_eq "$(kv_get /tmp/pr read_parallelism)" 0.00 "read_parallelism after reset, idle"
assert_eq "$(prof_bins /tmp/pr read_hist 0 0)" "$after" "samples with no read in flight, idle"
# by message
dd if=$DEV of=/dev/null bs=4k count=64 iflag=direct status=none || die "dd read"
assert_gt "$(prof_get prof flash_reads)" 0 "flash reads after dd"
dmsetup message prof 0 profile reset || die "message profile reset"
assert_eq "$(prof_get prof flash_reads)" 0 "flash reads after message profile reset"
# anything else is refused and clears nothing
dd if=$DEV of=/dev/null bs=4k count=64 iflag=direct status=none || die "dd read"
r=$(prof_get prof flash_reads)
assert_gt "$r" 0 "flash reads after dd"
expect_fail "write 'bogus' to profile" sysfs_put "$F" bogus
expect_fail "write 'resets' to profile" sysfs_put "$F" resets
expect_fail "message profile bogus" dmsetup message prof 0 profile bogus
assert_eq "$(prof_get prof flash_reads)" "$r" "flash reads after refused resets"
show_status prof
dm_remove prof || die "remove"
log "ok"
