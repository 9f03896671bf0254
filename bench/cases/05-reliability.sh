# What reliability=mirror and reliability=parity cost, how much server
# memory they take and how fast they recover.  Over the same six nswapd
# servers, one device per mode (none, mirror, parity with groups of 5) side
# by side in one boot: 4 KiB random write and read IOPS (libaio QD16),
# interleaved over BENCH_ROUNDS rounds (default 5, median of the per-round
# ratios mode / none), then WL2 (memcheck's random read/modify/write pass
# with the guest's RAM overcommitted 2x) swapping to each device.  Goals:
# mirror at most 10 % slower (Hecatonchire: < 10 %), parity at most 5 %
# (Nswap: ~4 %).  Server pages held per page stored, after a sequential
# fill and after the random writes (parity keeps overwritten pages until
# their group empties): mirror 2.0, parity 6/5 = 1.2 when groups are full.
# The random writes also give the guest CPU time and the bytes sent per
# page written.  Recovery: a device of each redundant mode holding 128 MiB
# loses a server (SIGKILL) while fio reads it, then, idle, another one;
# reported (medians of BENCH_RECOVERY_ROUNDS rounds, default 3): the pages
# the dead server held per second of recovery, that rate over the device's
# own 1 MiB sequential read rate, the foreground IOPS during recovery over
# those before (and the foreground IOPS given up per page/s recovered), the
# idle recovery's rate and the bytes the client sent per page it recovered.
# Nswap recovered about 7,000 pages/s on 2008 hardware.  The servers are
# each other's --peer (one --peer-key), as a cluster set up for migration
# is: a mirror's lost copies are then copied by the survivors themselves.
# mem: 192M
# servers: 6 peers
# timeout: 3600

REGION_MB=${BENCH_REGION_MB:-64}
RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-5}
MODES="none mirror parity"

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
SERVERS=$(netram_server 0)
for i in 1 2 3 4 5; do SERVERS=$SERVERS,$(netram_server $i); done
held_sum() { # dev: server pages held for it
	_h=0
	for i in 0 1 2 3 4 5; do _h=$((_h + $(netram_stat "$1" $i held))); done
	echo $_h
}
per_page() { awk -v h="$1" -v u="$2" 'BEGIN { printf "%.2f", h / u }'; }
server_pages() { # when: server pages per page stored, for each device
	_line="@@BENCH reliability server-pages-$1"
	for r in $MODES; do
		_line="$_line $r=$(per_page "$(held_sum "nsw_$r")" "$(tier_stat "nsw_$r" netram used)")"
	done
	echo "$_line"
}

for r in $MODES; do
	dm_create "nsw_$r" "0 $((REGION_MB * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=$r" ||
		die "create nsw_$r"
	dd if=/dev/zero of="/dev/mapper/nsw_$r" bs=1M count="$REGION_MB" oflag=direct 2>/dev/null ||
		die "prefill of nsw_$r"
done
server_pages after-fill
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
# measured_iops dev job: IOPS, and the guest CPU (µs) and bytes sent per
# page of the run (fio's ramp second included, alike for every mode)
measured_iops() {
	_c0=$(cpu_busy) _s0=$(io_sectors "$1") _t0=$(net_tx_bytes)
	_iops=$(fio_iops "$1" "$2" libaio 16)
	_pages=$((($(io_sectors "$1") - _s0) / 8))
	[ "$_pages" -gt 0 ] || die "no pages moved by $2 on $1"
	awk -v i="$_iops" -v b="$(($(cpu_busy) - _c0))" -v t="$(($(net_tx_bytes) - _t0))" -v p="$_pages" \
		'BEGIN { printf "%s %.0f %.0f\n", i, b * 10000 / p, t / p }'
}
for job in randwrite randread; do
	r_mirror="" r_parity="" all=""
	for r in $MODES; do eval "i_$r= cpu_$r= tx_$r="; done
	for round in $(seq 1 "$ROUNDS"); do
		log "$job round $round of $ROUNDS"
		for r in $MODES; do
			set -- $(measured_iops "/dev/mapper/nsw_$r" $job)
			eval "i_$r=\"\$i_$r $1\" cpu_$r=\"\$cpu_$r $2\" tx_$r=\"\$tx_$r $3\" iops_$r=$1"
		done
		r_mirror="$r_mirror $(ratio "$iops_mirror" "$iops_none")"
		r_parity="$r_parity $(ratio "$iops_parity" "$iops_none")"
	done
	line="@@BENCH reliability $job-qd16-4k"
	for r in $MODES; do
		eval "line=\"\$line $r=\$(echo \$i_$r | median) ${r}_cpu=\$(echo \$cpu_$r | median)\""
		eval "line=\"\$line ${r}_tx=\$(echo \$tx_$r | median)\"; all=\"\$all[$r:\$i_$r]\""
	done
	echo "$line mirror_ratio=$(echo $r_mirror | median) parity_ratio=$(echo $r_parity | median)" \
		"rounds=$all"
done
server_pages after-random-writes
for r in $MODES; do dm_remove "nsw_$r" || die "remove nsw_$r"; done

# WL2 swapping to each device (the pass memcheck times as "random")
free_mb=$(($(meminfo_kb MemAvailable) / 1024))
MB=$((free_mb * 2))
for r in $MODES; do
	dm_create "swap_$r" "0 $((1024 * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=$r" ||
		die "create swap_$r"
done
for round in $(seq 1 "${BENCH_SWAP_ROUNDS:-1}"); do
	for r in $MODES; do
		log "WL2 on reliability=$r, round $round (${MB} MiB)"
		mkswap "/dev/mapper/swap_$r" >/dev/null || die "mkswap"
		swapon "/dev/mapper/swap_$r" || die "swapon"
		memcheck -m $MB -p 2 -s 5 >/tmp/mc.out 2>&1 || { cat /tmp/mc.out; die "memcheck on $r"; }
		swapoff "/dev/mapper/swap_$r" || die "swapoff"
		wl2=$(sed -n 's/^memcheck: pass 2 (random).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out)
		echo "@@BENCH reliability wl2-swap-round$round $r=$wl2"
	done
done
for r in $MODES; do dm_remove "swap_$r" || die "remove swap_$r"; done

# Recovery: 128 MiB on the six servers; server 1 is killed under a
# random-read load (busy), then, once it is back, server 2 with the device
# idle; BENCH_RECOVERY_ROUNDS rounds (default 3), modes interleaved
RMB=128
# recover_from_kill I: kill server I, wait for the recovery; sets rec_ms
# (as the target reports it) and rec_moved (pages copied again, from dmesg)
recover_from_kill() {
	dmesg_mark
	server_ctl kill "$1" >/dev/null || die "kill server $1"
	# failed first: each look is its own dmsetup status, and the other two
	# must be read after the failure, not before it
	recovered() { [ "$(netram_stat rec "$1" state)" = failed ] &&
		[ "$(nsw_recovery rec recovering)" = 0 ] && [ "$(nsw_recovery rec copies_lost)" = 0 ]; }
	wait_until 900 rec "recovery done" recovered "$1"
	rec_ms=$(nsw_recovery rec recovery_ms)
	[ "$rec_ms" -gt 0 ] || die "recovery_ms is 0 after the recovery: status $(dmsetup status rec)"
	rec_moved=$(dmesg_new | sed -n 's/.*recovery done in [0-9]* ms: \([0-9]*\) pages copied again.*/\1/p' | tail -n1)
}
server_up() { [ "$(netram_stat rec "$1" state)" = up ]; }
per_s() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%.0f", p * 1000 / m }'; }
for round in $(seq 1 "${BENCH_RECOVERY_ROUNDS:-3}"); do
	for r in mirror parity; do
		log "recovery round $round, reliability=$r"
		dm_create rec "0 $((RMB * 2048)) nswap2l 4 netram=$SERVERS $KEY timeout=3 reliability=$r" ||
			die "create rec ($r)"
		DEV=/dev/mapper/rec
		blkpat write $DEV 0 $((RMB * 256)) 3 || die "blkpat write"
		fio --name=seq --filename=$DEV --rw=read --bs=1M --ioengine=libaio --iodepth=4 --direct=1 \
			--size=${RMB}M --output-format=terse --terse-version=3 >/tmp/seq.out 2>&1 || die "fio seq read"
		seq_kbs=$(cut -d';' -f7 /tmp/seq.out)
		before=$(fio_iops $DEV randread libaio 16)
		lost=$(netram_stat rec 1 held)
		fio --name=fg --filename=$DEV --rw=randread --ioengine=libaio --iodepth=16 --bs=4k --direct=1 \
			--size=${RMB}M --time_based --runtime=900 --norandommap --randrepeat=0 \
			--output=/dev/null &
		fg=$!
		sleep 2
		t0=$(date +%s)
		reads0=$(tier_stat rec netram reads)            # foreground pages only: the mover's are not counted
		recover_from_kill 1
		ms=$rec_ms moved=${rec_moved:-0}
		t1=$(date +%s)
		reads1=$(tier_stat rec netram reads)
		kill -0 $fg 2>/dev/null || die "the foreground reads stopped during recovery"
		kill -INT $fg
		wait $fg || true
		log "$r: recovered $((t1 - t0)) s after the kill (timeout=3 included)"
		during=$(((reads1 - reads0) / (t1 - t0)))
		show_status rec
		blkpat verify $DEV 0 $((RMB * 256)) 3 || die "blkpat verify after recovery ($r)"
		server_ctl start 1 >/dev/null || die "restart server 1"
		wait_until 60 rec "server 1 back" server_up 1
		idle_lost=$(netram_stat rec 2 held)
		tx0=$(net_tx_bytes)
		recover_from_kill 2
		idle_ms=$rec_ms
		# what the client sent per page recovered (idle: recovery's traffic alone)
		idle_tx=$((($(net_tx_bytes) - tx0) / idle_lost))
		# parity: the device's count so far, busy and idle recovery together
		repaired=$(dmesg_new | sed -n 's/.* \([0-9]*\) parity groups repaired in place so far.*/\1/p' | tail -n1)
		blkpat verify $DEV 0 $((RMB * 256)) 3 || die "blkpat verify after the idle recovery ($r)"
		server_ctl start 2 >/dev/null || die "restart server 2"
		echo "@@BENCH reliability recovery-$r round=$round pages_lost_with_server=$lost moved=$moved" \
			"recovery_ms=$ms pages_per_s=$(per_s "$lost" "$ms")" \
			"seq_pages_per_s=$(awk -v k="$seq_kbs" 'BEGIN { printf "%.0f", k / 4 }')" \
			"fg_iops_before=$before fg_iops_during=$during idle_pages=$idle_lost idle_ms=$idle_ms" \
			"idle_pages_per_s=$(per_s "$idle_lost" "$idle_ms") idle_tx_per_page=$idle_tx" \
			"${repaired:+ repaired_groups=$repaired}"
		dm_remove rec || die "remove rec"
	done
done
