# Network RAM against the kernel's nbd client over the same path: nswap2l
# over one nswapd (with the default protection, and with protect=none),
# nswap2l over two nswapds, and /dev/nbd0 connected to
# "nbdkit memory", through QEMU user networking to the host's loopback
# (guestfwd to tests/lib/guestfwd-relay), or with bench/run --net-path tap
# through a tap device to servers in a private network namespace.  4 KiB
# random write and read (libaio QD16 and psync QD1), 64 KiB random (libaio
# QD8), 1 MiB sequential (libaio QD4): IOPS, p99 completion latency, MiB/s,
# guest CPU seconds per GiB moved (all of the guest's busy time, fio
# included), request messages per 4 KiB page (nbd: requests completed;
# nswap2l: PUT, GET and FREE messages; each a round trip) and bytes on the
# guest's NIC per page, both ways.  Measured side by side in one boot,
# interleaved over several rounds; medians reported.  With bench/run
# --baseline-module, the nswap2l devices are made and measured once per pass
# of each build (nbd in every pass, as the yardstick).
# Goals: nswap2l over one server >= 1.5x nbd on every job; two servers
# >= 1.6x one.  Issue 30: with the default protection >= 1.0x nbd on
# every job and >= 1.5x on the QD16 jobs, with protect=none >= 1.5x
# except QD1 reads; the default's guest CPU per GiB <= 1.5x protect=none's
# on the 4 KiB QD16 and 1 MiB jobs; 1.0 message per page for QD1 writes.
# mem: 768M
# servers: 2
# nbdkit: 512M
# timeout: 3000

REGION_MB=${BENCH_REGION_MB:-128}
RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-5}
SECTORS=$((REGION_MB * 2048))

netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
modprobe nbd nbds_max=1 || die "modprobe nbd failed"
nbd-client -N bench 169.254.100.98 10809 /dev/nbd0 -b 4096 >/tmp/nbd.out 2>&1 || die "nbd-client cannot connect to nbdkit: $(cat /tmp/nbd.out)"
DEVICES="/dev/nbd0 /dev/mapper/nsw1 /dev/mapper/nsw1n /dev/mapper/nsw2"
# Map every page first, so that reads are served by the servers.
prefill_random /dev/nbd0 "$REGION_MB"
# sectors read and written on a block device so far
# (/dev/mapper nodes are not symlinks here: find the device by its numbers)
dev_sectors() {
	set -- $(stat -L -c '%t %T' "$1")
	awk '{ print $3 + $7 }' "/sys/dev/block/$((0x$1)):$((0x$2))/stat"
}
# bytes on the guest's NIC so far, both ways (frames, headers included)
wire_bytes() { echo $(($(cat /sys/class/net/eth0/statistics/tx_bytes) + $(cat /sys/class/net/eth0/statistics/rx_bytes))); }
# request messages a device has sent so far
dev_requests() {
	case "$1" in
	/dev/nbd0) awk '{ print $1 + $5 }' /sys/block/nbd0/stat ;;
	*) awk 'NR > 1 { n += $12 } END { print n + 0 }' "/sys/kernel/nswap2l/$(basename "$1")/servers" ;;
	esac
}

# fio_job dev rw engine depth bs ->
#   "IOPS p99_usec MiB/s cpu_s_per_GiB msgs_per_page wire_bytes_per_page"
fio_job() {
	c0=$(cpu_busy) s0=$(dev_sectors "$1") m0=$(dev_requests "$1") w0=$(wire_bytes)
	fio --name=b --filename="$1" --rw="$2" --ioengine="$3" --iodepth="$4" --bs="$5" \
		--direct=1 --size=${REGION_MB}M --time_based --runtime="$RUNTIME" --ramp_time=1 \
		--randrepeat=0 --norandommap --output-format=terse --terse-version=3 \
		>/tmp/fio.out 2>/tmp/fio.err || die "fio $2 on $1 failed: $(cat /tmp/fio.err)"
	c1=$(cpu_busy) s1=$(dev_sectors "$1") m1=$(dev_requests "$1") w1=$(wire_bytes)
	# terse v3: read IOPS 8, bw KiB/s 7, clat percentiles 18-37;
	# write IOPS 49, bw 48, clat percentiles 59-78.  CPU and messages over
	# all the job's sectors (ramp included).
	awk -F';' -v rw="$2" -v cpu=$((c1 - c0)) -v sec=$((s1 - s0)) -v msgs=$((m1 - m0)) -v wire=$((w1 - w0)) '{
		w = rw ~ /write/; b = w ? 41 : 0
		p99 = 0
		for (i = 18 + b; i <= 37 + b; i++) if ($i ~ /^99\.000000%=/) { split($i, kv, "="); p99 = kv[2] }
		# (a bare ">" among printf arguments would redirect the output)
		pages = sec / 8; cpu_gib = 0; msgs_page = 0; wire_page = 0
		if (pages > 0) { cpu_gib = cpu / 100 / (pages / 262144); msgs_page = msgs / pages; wire_page = wire / pages }
		printf "%s %s %.1f %.2f %.3f %.0f\n", $(8 + b), p99, $(7 + b) / 1024, cpu_gib, msgs_page, wire_page
	}' /tmp/fio.out
}

for module in $(module_passes); do
	use_module "$module"
	name=$(bench_name netram-vs-nbd "$module")
	dm_create nsw1 "0 $SECTORS nswap2l 2 netram=$(netram_server 0) $KEY" || die "create nsw1"
	dm_create nsw1n "0 $SECTORS nswap2l 3 netram=$(netram_server 0) $KEY protect=none" || die "create nsw1n"
	dm_create nsw2 "0 $SECTORS nswap2l 2 netram=$(netram_server 0),$(netram_server 1) $KEY" || die "create nsw2"
	prefill_random /dev/mapper/nsw1 "$REGION_MB"
	prefill_random /dev/mapper/nsw1n "$REGION_MB"
	prefill_random /dev/mapper/nsw2 "$REGION_MB"
	for job in "randwrite libaio 16 4k" "randread libaio 16 4k" "randwrite psync 1 4k" \
		"randread psync 1 4k" "randwrite libaio 8 64k" "randread libaio 8 64k" \
		"write libaio 4 1M" "read libaio 4 1M"; do
		set -- $job
		key="$1-qd$3-$4"
		# BENCH_JOBS: only the jobs it names (comma-separated keys), e.g. to study one
		case ",${BENCH_JOBS:-$key}," in *",$key,"*) ;; *) continue ;; esac
		for d in nbd nsw1 nsw1n nsw2; do eval "iops_$d= p99_$d= mbs_$d= cpu_$d= msgs_$d= wire_$d="; done
		r1="" r1n="" r2=""
		round=0
		while [ $round -lt "$ROUNDS" ]; do
			for dev in $DEVICES; do
				d=$(basename "$dev" | sed 's/nbd0/nbd/')
				set -- $(fio_job "$dev" $job)
				eval "iops_$d=\"\$iops_$d $1\" p99_$d=\"\$p99_$d $2\" mbs_$d=\"\$mbs_$d $3\" cur_$d=$1"
				eval "cpu_$d=\"\$cpu_$d $4\" msgs_$d=\"\$msgs_$d $5\" wire_$d=\"\$wire_$d $6\""
				set -- $job
			done
			r1="$r1 $(awk -v a="$cur_nsw1" -v b="$cur_nbd" 'BEGIN { printf "%.3f", a / b }')"
			r1n="$r1n $(awk -v a="$cur_nsw1n" -v b="$cur_nbd" 'BEGIN { printf "%.3f", a / b }')"
			r2="$r2 $(awk -v a="$cur_nsw2" -v b="$cur_nsw1" 'BEGIN { printf "%.3f", a / b }')"
			round=$((round + 1))
		done
		line="@@BENCH $name $key"
		for m in iops p99 mbs cpu msgs wire; do
			case $m in iops) suffix= ;; *) suffix=_$m ;; esac
			for d in nbd nsw1 nsw1n nsw2; do
				eval "line=\"\$line $d$suffix=\$(echo \$${m}_$d | median)\""
			done
		done
		echo "$line nsw1_vs_nbd=$(echo $r1 | median) nsw1n_vs_nbd=$(echo $r1n | median)" \
			"nsw2_vs_nsw1=$(echo $r2 | median) rounds=[nbd:$iops_nbd][nsw1:$iops_nsw1][nsw1n:$iops_nsw1n][nsw2:$iops_nsw2]"
	done
	show_status nsw1
	show_status nsw1n
	show_status nsw2
	dm_remove nsw2
	dm_remove nsw1n
	dm_remove nsw1
done
nbd-client -d /dev/nbd0 >/dev/null 2>&1 || true
