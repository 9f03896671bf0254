# Prefetching from Network RAM to flash (Nswap2L's Tables IV, V, VI and
# VIII): swap on nswap2l over one nswapd (Network RAM) plus a flash disk
# whose latency the host sets (bench/prefetch holds each of its I/Os in
# dm-latency until it has taken a chosen multiple of Network RAM's read
# latency under swap).  Per
# workload and policy (Control = none, rr, random, lrs, mrs, auto), a new
# device with prefetch=<policy>,amount=written:10,interval=100: runtime,
# flash reads per prefetched page, average read parallelism.  WL1: memcheck
# fill + one sequential verify pass; WL2: memcheck's random
# read/modify/write pass (after its fill and sequential pass, not timed);
# par: three memcheck processes that all hold their filled memory before
# they verify (memcheck -H), pages written once and read by
# three verify passes, no rewrites.  scarce (issue 33): the server offers
# less Network RAM than the swapped working set (server_ctl set-max, default
# 3/4 of MemAvailable); a cold process fills MemAvailable and stops, a hot one
# fills 5/4 of it (so its own passes swap) and stops; then only the hot
# passes (verify + 50 % rewrite) are timed, with the swap-ins per tier
# (profile) and /proc/vmstat's pswpin/pswpout (and the readahead among the
# swap-ins: swap_ra, swap_ra_hit) over them: Control's Network
# RAM holds what was written first (cold), a policy moving cold pages keeps
# the hot ones there.  Its policies run with BENCH_PREFETCH_SCARCE_OPTS
# (default amount=free:25,interval=100).  Run it through bench/prefetch,
# which calibrates first (BENCH_PREFETCH_MODE=calibrate) and makes the table.
# mem: 192M
# servers: 1
# disks: flash=1G
# timeout: 21600

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
DEV=/dev/mapper/pf

# kv FILE KEY: value of the line "KEY value" (own helper: guest-lib's
# prefetch helpers are still changing)
kv() {
	[ -r "$1" ] || { echo -; return 0; }
	awk -v k="$2" '$1 == k { print $2; f = 1; exit } END { if (!f) print "-" }' "$1"
}
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
# all_stopped PID...: 0 when every one is stopped, 1 while some run, 2 when one is gone
all_stopped() {
	for _p; do
		case $(awk '{ print $3 }' /proc/$_p/stat 2>/dev/null) in
		T) ;;
		R | S | D) return 1 ;;
		*) return 2 ;;
		esac
	done
}

# qd1_read_us DEV SIZE_MB: write SIZE_MB, then 4 KiB psync QD1 random reads
# for BENCH_CAL_SECS (default 5): 1e6 / IOPS
qd1_read_us() {
	run_fio "fill $1" --name=fill --filename="$1" --rw=write --bs=1M --direct=1 \
		--ioengine=psync --size="${2}M"
	fio --minimal --name=cal --filename="$1" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--iodepth=1 --size="${2}M" --time_based --runtime="${BENCH_CAL_SECS:-5}" --ramp_time=1 \
		>/tmp/cal.out || { cat /tmp/cal.out; die "fio randread on $1"; }
	awk -F';' '{ if ($8 > 0) printf "%.0f\n", 1e6 / $8; else print "-" }' /tmp/cal.out
}

# The flash: every I/O takes BENCH_FLASH_TOTAL_US from its arrival to its
# completion (dm-latency's "total", built by bench/prefetch), whatever the
# queue depth and the load.
if [ -n "${BENCH_FLASH_TOTAL_US:-}" ]; then
	modprobe dm-latency || die "modprobe dm-latency (bench/prefetch passes it with --extra-module)"
	dm_create flashlat "0 $(blockdev --getsz "$FLASH") latency $FLASH $BENCH_FLASH_TOTAL_US $BENCH_FLASH_TOTAL_US total" ||
		die "create the delayed flash"
	FLASH=/dev/mapper/flashlat
fi
# flash_wait_us: the read wait dm-latency has settled on ("-" without it)
flash_wait_us() {
	[ -e /dev/mapper/flashlat ] || { echo -; return 0; }
	dmsetup status flashlat | awk '{ print $4 }'
}

SPEED=${BENCH_PREFETCH_SPEED:-native}
POLICIES=$(echo "${BENCH_PREFETCH_POLICIES:-none,rr,random,lrs,mrs,auto}" | tr , ' ')
WLS=$(echo "${BENCH_PREFETCH_WLS:-wl1,wl2,par,scarce}" | tr , ' ')
PF_OPTS=${BENCH_PREFETCH_OPTS:-amount=written:10,interval=100}
SCARCE_OPTS=${BENCH_PREFETCH_SCARCE_OPTS:-amount=free:25,interval=100}
free_mb=$(($(meminfo_kb MemAvailable) / 1024))
MB=${BENCH_REGION_MB:-$((free_mb * 2))}
# scarce: Network RAM below the swapped working set (cold + hot - RAM); the
# hot set alone (less what RAM keeps) fits it
NETRAM_MB=${BENCH_SCARCE_NETRAM_MB:-$((free_mb * 3 / 4))}
COLD_MB=${BENCH_SCARCE_COLD_MB:-$free_mb}
HOT_MB=${BENCH_SCARCE_HOT_MB:-$((free_mb * 5 / 4))}
HOT_PASSES=${BENCH_SCARCE_PASSES:-3}
NP=$(echo $POLICIES | wc -w)
log "MemAvailable ${free_mb} MiB: workload region ${MB} MiB; flash at $SPEED; policies $POLICIES; workloads $WLS; prefetch=<policy>,$PF_OPTS"
case " $WLS " in *" scarce "*)
	log "scarce: Network RAM ${NETRAM_MB} MiB, cold ${COLD_MB} MiB, hot ${HOT_MB} MiB ($HOT_PASSES passes); prefetch=<policy>,$SCARCE_OPTS" ;;
esac

# workload WL: run it, set SECS (the timed part)
workload() {
	case $1 in
	wl1)
		memcheck -m "$MB" -p 1 -r 0 -s 5 >/tmp/mc.out 2>&1 || { cat /tmp/mc.out; die "memcheck wl1"; }
		fill=$(sed -n 's/^memcheck: filled in \([0-9.]*\)s$/\1/p' /tmp/mc.out)
		seq=$(sed -n 's/^memcheck: pass 1 (sequential).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out)
		SECS=$(awk -v a="$fill" -v b="$seq" 'BEGIN { printf "%.1f", a + b }') ;;
	wl2)
		memcheck -m "$MB" -p 2 -s 5 >/tmp/mc.out 2>&1 || { cat /tmp/mc.out; die "memcheck wl2"; }
		SECS=$(sed -n 's/^memcheck: pass 2 (random).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out) ;;
	par)
		# Each process fills its memory and stops (memcheck -H) until all
		# three hold theirs: started one after another, one could finish
		# before the next began (0.3 s, nothing swapped).
		t0=$(now_cs)
		pids=
		for i in 1 2 3; do
			memcheck -H -m $((MB / 3)) -p 3 -r 0 -s $((5 + i)) >/tmp/mc$i.out 2>&1 &
			pids="$pids $!"
		done
		wait_stopped "memcheck par" "/tmp/mc[123].out" $pids
		kill -CONT $pids
		i=0
		for p in $pids; do
			i=$((i + 1))
			wait $p || { cat /tmp/mc$i.out; die "memcheck par $i"; }
		done
		SECS=$(awk -v a="$t0" -v b="$(now_cs)" 'BEGIN { printf "%.1f", (b - a) / 100 }') ;;
	scarce)
		# cold first: what Control's Network RAM fills with
		memcheck -H -m "$COLD_MB" -p 1 -r 0 -s 11 >/tmp/mc1.out 2>&1 &
		cold=$!
		wait_stopped "memcheck scarce cold" /tmp/mc1.out $cold
		memcheck -H -m "$HOT_MB" -p "$HOT_PASSES" -r 50 -s 12 >/tmp/mc2.out 2>&1 &
		hot=$!
		wait_stopped "memcheck scarce hot" /tmp/mc2.out $hot
		# only the hot passes count: tiers' reads and swap traffic from here
		echo reset >/sys/kernel/nswap2l/pf/profile || die "profile reset"
		in0=$(vmstat_count pswpin) out0=$(vmstat_count pswpout)
		ra0=$(vmstat_count swap_ra) rahit0=$(vmstat_count swap_ra_hit)
		t0=$(now_cs)
		kill -CONT $hot
		wait $hot || { cat /tmp/mc2.out; die "memcheck scarce hot"; }
		SECS=$(awk -v a="$t0" -v b="$(now_cs)" 'BEGIN { printf "%.1f", (b - a) / 100 }')
		SWAPINS=$(($(vmstat_count pswpin) - in0)) SWAPOUTS=$(($(vmstat_count pswpout) - out0))
		SWAP_RA=$(($(vmstat_count swap_ra) - ra0)) SWAP_RA_HIT=$(($(vmstat_count swap_ra_hit) - rahit0))
		kill -KILL $cold
		wait $cold 2>/dev/null || true ;;
	*) die "unknown workload '$1' in BENCH_PREFETCH_WLS" ;;
	esac
	case "$SECS" in '' | *[!0-9.]*) cat /tmp/mc.out; die "no time from workload $1" ;; esac
}

# wait_stopped WHAT OUTPUTS PID...: until every memcheck PID has filled its
# memory and stopped (memcheck -H); OUTPUTS (a glob) are shown if one ended
wait_stopped() {
	_ws_what=$1 _ws_outs=$2
	shift 2
	until all_stopped "$@"; do
		[ $? -eq 1 ] || { cat $_ws_outs; die "$_ws_what ended before it filled its memory"; }
		sleep 0.1
	done
}
vmstat_count() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# Network RAM's read latency as the workloads see it: swapped to alone by
# WL2 (its requests cost the emulated CPU, so the latency grows with the
# load: 1.6-2x the QD1 one); the flash disk's own at QD1.
if [ "${BENCH_PREFETCH_MODE:-run}" = calibrate ]; then
	dm_create pfcal "0 $((1024 * 2048)) nswap2l 2 $NETRAM" || die "create netram-only device"
	n_qd1=$(qd1_read_us /dev/mapper/pfcal 128)
	mkswap /dev/mapper/pfcal >/dev/null || die "mkswap"
	swapon /dev/mapper/pfcal || die "swapon"
	echo reset >/sys/kernel/nswap2l/pfcal/profile || die "profile reset"
	workload wl2
	cat /sys/kernel/nswap2l/pfcal/profile >/tmp/cal.prof || die "read profile"
	swapoff /dev/mapper/pfcal || die "swapoff"
	dm_remove pfcal
	n_us=$(kv /tmp/cal.prof netram_read_mean_us)
	f_us=$(qd1_read_us "$FLASH" 128)
	blkdiscard "$FLASH" 2>/dev/null || true
	echo "@@BENCH prefetch calibrate netram_us=$n_us netram_qd1_us=$n_qd1 flash_us=$f_us"
	log "calibrated: Network RAM ${n_us} us under swap (${n_qd1} us QD1), flash ${f_us} us QD1 (4 KiB random reads)"
	exit 0
fi

run_one() { # wl policy round
	opt="prefetch=$2"
	if [ "$1" = scarce ]; then
		[ "$2" = none ] || opt="prefetch=$2,$SCARCE_OPTS"
		server_ctl set-max 0 "${NETRAM_MB}M" >/dev/null || die "set-max 0 ${NETRAM_MB}M"
	else
		[ "$2" = none ] || opt="prefetch=$2,$PF_OPTS"
	fi
	dm_create pf "0 $((1024 * 2048)) nswap2l 4 $NETRAM flash=$FLASH $opt" || die "create with $opt"
	# the settings in full, the module's defaults included (the report shows them)
	if [ "$2" != none ] && [ "$1" != scarce ] && [ -z "${FULL_SHOWN:-}" ]; then
		log "prefetch in full: $(dmsetup table pf | grep -o 'prefetch=[^ ]*')"
		FULL_SHOWN=1
	fi
	mkswap $DEV >/dev/null || die "mkswap"
	swapon $DEV || die "swapon"
	echo reset >/sys/kernel/nswap2l/pf/profile || die "profile reset"
	# the workloads but scarce time only part of their run: their swap
	# counts and µs per swap-in cover the whole of it
	in0=$(vmstat_count pswpin) out0=$(vmstat_count pswpout) t0=$(now_cs)
	workload "$1"
	if [ "$1" != scarce ]; then
		WALL=$(awk -v a="$t0" -v b="$(now_cs)" 'BEGIN { printf "%.1f", (b - a) / 100 }')
		SWAPINS=$(($(vmstat_count pswpin) - in0)) SWAPOUTS=$(($(vmstat_count pswpout) - out0))
	fi
	cat /sys/kernel/nswap2l/pf/prefetch/stats >/tmp/pf.stats 2>/dev/null || : >/tmp/pf.stats
	cat /sys/kernel/nswap2l/pf/profile >/tmp/pf.prof || die "read profile"
	wait_us=$(flash_wait_us)	# before swapoff reads everything back
	swapoff $DEV || die "swapoff"
	if [ "$1" = scarce ]; then
		nr=$(kv /tmp/pf.prof netram_reads) fr=$(kv /tmp/pf.prof flash_reads)
		echo "@@BENCH prefetch speed=$SPEED wl=$1 policy=$2 secs=$SECS swapins=$SWAPINS swapouts=$SWAPOUTS" \
			"us_per_swapin=$(awk -v s="$SECS" -v n="$SWAPINS" 'BEGIN { if (n > 0) printf "%.0f", s * 1e6 / n; else print "-" }')" \
			"us_per_swapped_page=$(awk -v s="$SECS" -v n="$((SWAPINS + SWAPOUTS))" 'BEGIN { if (n > 0) printf "%.0f", s * 1e6 / n; else print "-" }')" \
			"netram_share=$(awk -v n="$nr" -v f="$fr" 'BEGIN { if (n + f > 0) printf "%.3f", n / (n + f); else print "-" }')" \
			"netram_reads=$nr flash_reads=$fr" \
			"netram_read_us=$(kv /tmp/pf.prof netram_read_mean_us) flash_read_us=$(kv /tmp/pf.prof flash_read_mean_us)" \
			"prefetched=$(kv /tmp/pf.stats prefetched) reads_per_prefetch=$(kv /tmp/pf.stats reads_per_prefetch)" \
			"swap_ra=$SWAP_RA swap_ra_hit=$SWAP_RA_HIT flash_wait_us=$wait_us" \
			"choice=$(kv /tmp/pf.stats choice) netram_mb=$NETRAM_MB cold_mb=$COLD_MB hot_mb=$HOT_MB round=$3" \
			"compared_netram_us=$(kv /tmp/pf.stats compared_netram_read_us) compared_flash_us=$(kv /tmp/pf.stats compared_flash_read_us)" \
			"quiet_netram_us=$(kv /tmp/pf.stats quiet_compared_netram_read_us) quiet_flash_us=$(kv /tmp/pf.stats quiet_compared_flash_read_us)" \
			"rate_pct=$(kv /tmp/pf.stats rate_pct)"
	else
		echo "@@BENCH prefetch speed=$SPEED wl=$1 policy=$2 secs=$SECS prefetched=$(kv /tmp/pf.stats prefetched)" \
			"wall=$WALL swapins=$SWAPINS swapouts=$SWAPOUTS" \
			"us_per_swapin=$(awk -v s="$WALL" -v n="$SWAPINS" 'BEGIN { if (n > 0) printf "%.0f", s * 1e6 / n; else print "-" }')" \
			"reads_per_prefetch=$(kv /tmp/pf.stats reads_per_prefetch) read_par=$(kv /tmp/pf.prof read_parallelism)" \
			"netram_read_us=$(kv /tmp/pf.prof netram_read_mean_us) flash_read_us=$(kv /tmp/pf.prof flash_read_mean_us)" \
			"netram_reads=$(kv /tmp/pf.prof netram_reads) flash_reads=$(kv /tmp/pf.prof flash_reads)" \
			"flash_wait_us=$wait_us choice=$(kv /tmp/pf.stats choice) region_mb=$MB round=$3"
	fi
	dm_remove pf || die "remove"
	blkdiscard "$FLASH" 2>/dev/null || true
	# the other workloads run with the servers' whole memory
	[ "$1" != scarce ] || server_ctl set-max 0 none >/dev/null || die "set-max 0 none"
}

total=$(($(echo $WLS | wc -w) * NP * ${BENCH_ROUNDS:-1}))
k=0
round=1
while [ $round -le "${BENCH_ROUNDS:-1}" ]; do
	for wl in $WLS; do
		# rotate the policy order by one per round
		i=0
		order=
		for p in $POLICIES; do
			[ $i -ge $(((round - 1) % NP)) ] && order="$order $p"
			i=$((i + 1))
		done
		i=0
		for p in $POLICIES; do
			[ $i -lt $(((round - 1) % NP)) ] && order="$order $p"
			i=$((i + 1))
		done
		for p in $order; do
			k=$((k + 1))
			echo "[bench] prefetch run $k of $total: flash $SPEED, $wl, policy $p, round $round"
			run_one "$wl" "$p" "$round"
		done
	done
	round=$((round + 1))
done
