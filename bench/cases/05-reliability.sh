# What reliability=mirror costs and how fast it recovers.  Over the same
# three nswapd servers, one device with reliability=none and one with
# mirror, side by side in one boot: 4 KiB random write and read IOPS
# (libaio QD16), interleaved over BENCH_ROUNDS rounds (default 5, median of
# the per-round ratios mirror / none), then WL2 (memcheck's random
# read/modify/write pass with the guest's RAM overcommitted 2x) swapping to
# each device.  Goal: mirror at most 10 % slower (Hecatonchire: < 10 %).
# Recovery: a mirrored device holding 128 MiB (about 85 MiB of copies on each
# server) loses a server (SIGKILL) while fio reads it; reported: the pages
# copied again per second, that rate over the device's own 1 MiB sequential
# read rate, and the foreground IOPS during recovery over those before.
# Nswap recovered about 7,000 pages/s on 2008 hardware.
# mem: 192M
# servers: 3
# timeout: 3600

REGION_MB=${BENCH_REGION_MB:-64}
RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-5}

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
SERVERS=$(netram_server 0),$(netram_server 1),$(netram_server 2)

for r in none mirror; do
	dm_create "nsw_$r" "0 $((REGION_MB * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=$r" ||
		die "create nsw_$r"
	dd if=/dev/zero of="/dev/mapper/nsw_$r" bs=1M count="$REGION_MB" oflag=direct 2>/dev/null ||
		die "prefill of nsw_$r"
done
for job in randwrite randread; do
	r_none="" r_mirror="" ratios=""
	for round in $(seq 1 "$ROUNDS"); do
		log "$job round $round of $ROUNDS"
		none=$(fio_iops /dev/mapper/nsw_none $job libaio 16)
		mirror=$(fio_iops /dev/mapper/nsw_mirror $job libaio 16)
		r_none="$r_none $none" r_mirror="$r_mirror $mirror"
		ratios="$ratios $(awk -v a="$mirror" -v b="$none" 'BEGIN { printf "%.4f", a / b }')"
	done
	echo "@@BENCH reliability $job-qd16-4k none=$(echo $r_none | median) mirror=$(echo $r_mirror | median) ratio=$(echo $ratios | median) rounds=[none:$r_none][mirror:$r_mirror]"
done
for r in none mirror; do dm_remove "nsw_$r" || die "remove nsw_$r"; done

# WL2 swapping to each device (the pass memcheck times as "random")
free_mb=$(($(meminfo_kb MemAvailable) / 1024))
MB=$((free_mb * 2))
for r in none mirror; do
	dm_create "swap_$r" "0 $((1024 * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=$r" ||
		die "create swap_$r"
done
for round in $(seq 1 "${BENCH_SWAP_ROUNDS:-1}"); do
	for r in none mirror; do
		log "WL2 on reliability=$r, round $round (${MB} MiB)"
		mkswap "/dev/mapper/swap_$r" >/dev/null || die "mkswap"
		swapon "/dev/mapper/swap_$r" || die "swapon"
		memcheck -m $MB -p 2 -s 5 >/tmp/mc.out 2>&1 || { cat /tmp/mc.out; die "memcheck on $r"; }
		swapoff "/dev/mapper/swap_$r" || die "swapoff"
		wl2=$(sed -n 's/^memcheck: pass 2 (random).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out)
		echo "@@BENCH reliability wl2-swap-round$round $r=$wl2"
	done
done
for r in none mirror; do dm_remove "swap_$r" || die "remove swap_$r"; done

# Recovery: 128 MiB mirrored, about 85 MiB of copies on each of the three servers
RMB=128
dm_create rec "0 $((RMB * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=mirror" ||
	die "create rec"
DEV=/dev/mapper/rec
blkpat write $DEV 0 $((RMB * 256)) 3 || die "blkpat write"
log "copies on server 1: $(netram_stat rec 1 held) pages"
fio --name=seq --filename=$DEV --rw=read --bs=1M --ioengine=libaio --iodepth=4 --direct=1 \
	--size=${RMB}M --output-format=terse --terse-version=3 >/tmp/seq.out 2>&1 || die "fio seq read"
seq_kbs=$(cut -d';' -f7 /tmp/seq.out)
before=$(fio_iops $DEV randread libaio 16)
lost=$(netram_stat rec 1 held)
fio --name=fg --filename=$DEV --rw=randread --ioengine=libaio --iodepth=16 --bs=4k --direct=1 \
	--size=${RMB}M --time_based --runtime=600 --norandommap --randrepeat=0 \
	--output=/dev/null &
fg=$!
sleep 2
server_ctl kill 1 || die "kill server 1"
t0=$(date +%s)
reads0=$(tier_stat rec netram reads)            # foreground pages only: the mover's are not counted
recovered() { [ "$(nsw_recovery rec recovering)" = 0 ] && [ "$(nsw_recovery rec copies_lost)" = 0 ] &&
	[ "$(netram_stat rec 1 state)" = failed ]; }
wait_until 900 rec "recovery done" recovered
t1=$(date +%s)
reads1=$(tier_stat rec netram reads)
kill -0 $fg 2>/dev/null || die "the foreground reads stopped during recovery"
kill -INT $fg
wait $fg || true
log "recovered $((t1 - t0)) s after the kill (timeout=3 included)"
during=$(((reads1 - reads0) / (t1 - t0)))
ms=$(nsw_recovery rec recovery_ms)
show_status rec
blkpat verify $DEV 0 $((RMB * 256)) 3 || die "blkpat verify after recovery"
echo "@@BENCH reliability recovery copies_lost=$lost recovery_ms=$ms pages_per_s=$(awk -v p="$lost" -v m="$ms" 'BEGIN { printf "%.0f", p * 1000 / m }') seq_pages_per_s=$(awk -v k="$seq_kbs" 'BEGIN { printf "%.0f", k / 4 }') fg_iops_before=$before fg_iops_during=$during"
dm_remove rec || die "remove rec"
