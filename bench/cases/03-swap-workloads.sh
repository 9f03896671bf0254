# Swap workloads with the guest's RAM overcommitted 2x: memcheck fills a
# region twice the guest's free RAM (WL1: fill, then one sequential
# read/verify pass) and then reads, verifies and rewrites a quarter of it in
# random order (WL2: random read/modify/write).  Swap on nswap2l over one
# nswapd (Network RAM only), on an emulated SATA SSD, on an emulated 7200 rpm
# disk, on nbd to "nbdkit memory" over the same network path as nswapd, and
# on zram (lz4), one after the other in one boot; BENCH_ROUNDS rounds
# (default 1), BENCH_SWAP_DEVICES picks devices, comma-separated (default
# all five; the harness passes no value with spaces).
# Reported: seconds (median and spread over the rounds), the speed-up over
# the emulated disk, and nswap2l's speed-up over nbd round by round.  Goal:
# WL1 and WL2 at least 1.5x faster on nswap2l than on nbd; Nswap2L reported
# up to 30x over disk.
# mem: 192M
# servers: 1
# nbdkit: 1G
# disks: ssd=1G@sata-ssd hdd=1G@hdd-7200
# timeout: 5400

load_nswap2l
netram_load_key >/dev/null
modprobe nbd nbds_max=1 || die "modprobe nbd"
nbd-client -N swap 169.254.100.98 10809 /dev/nbd0 -b 4096 >/dev/null 2>&1 || die "nbd-client"
modprobe zram num_devices=1 || die "modprobe zram"
echo lz4 >/sys/block/zram0/comp_algorithm
echo 1G >/sys/block/zram0/disksize
dm_create nsw "0 $((1024 * 2048)) nswap2l 2 $(netram_table_arg)" || die "create nsw"

free_mb=$(($(meminfo_kb MemAvailable) / 1024))
MB=$((free_mb * 2))
log "MemAvailable ${free_mb} MiB: workload region ${MB} MiB"

run_on() { # label device
	mkswap "$2" >/dev/null || die "mkswap $2"
	swapon "$2" || die "swapon $2"
	rc=0
	memcheck -m $MB -p 2 -s 5 >/tmp/mc.out 2>&1 || rc=$?
	if [ $rc -eq 137 ]; then
		# zram keeps swapped pages in guest RAM: random patterns do not
		# compress, so a 2x overcommit runs the guest out of memory
		swapoff "$2" || die "swapoff $2"
		echo "@@BENCH swap-workloads $1 wl1=out-of-memory wl2=out-of-memory region_mb=$MB round=$round"
		return
	fi
	[ $rc -eq 0 ] || { cat /tmp/mc.out; die "memcheck on $1 (status $rc)"; }
	swapoff "$2" || die "swapoff $2"
	fill=$(sed -n 's/^memcheck: filled in \([0-9.]*\)s$/\1/p' /tmp/mc.out)
	seq=$(sed -n 's/^memcheck: pass 1 (sequential).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out)
	rnd=$(sed -n 's/^memcheck: pass 2 (random).*, \([0-9.]*\)s$/\1/p' /tmp/mc.out)
	wl1=$(awk -v a="$fill" -v b="$seq" 'BEGIN { printf "%.1f", a + b }')
	echo "@@BENCH swap-workloads $1 wl1=$wl1 wl2=$rnd region_mb=$MB round=$round"
}

round=1
while [ $round -le "${BENCH_ROUNDS:-1}" ]; do
	for d in $(echo "${BENCH_SWAP_DEVICES:-nswap2l,nbd,ssd,hdd,zram}" | tr , ' '); do
		log "round $round: $d"
		case $d in
		nswap2l) run_on nswap2l /dev/mapper/nsw ;;
		nbd) run_on nbd /dev/nbd0 ;;
		ssd) run_on ssd "$SSD" ;;
		hdd) run_on hdd "$HDD" ;;
		zram) run_on zram /dev/zram0 ;;
		*) die "unknown device '$d' in BENCH_SWAP_DEVICES" ;;
		esac
	done
	round=$((round + 1))
done
show_status nsw
dm_remove nsw
