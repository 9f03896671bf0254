# Swap over two nswapd servers plus flash and disk: two memcheck processes
# at once, together 1.5x the guest's RAM in checksummed memory, must
# verify; both servers must take pages and give them back.  Then
# stress-ng --vm workers, twice the RAM, verify what they wrote.
# kernels: 6.12
# mem: 128M
# servers: 2
# disks: flash=64M disk=384M
# timeout: 1200

load_nswap2l
netram_load_key >/dev/null
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 $(netram_table_arg) flash=$FLASH disk=$DISK" ||
	die "create failed"
DEV=/dev/mapper/nsw
total_mb=$(($(meminfo_kb MemTotal) / 1024))
MB=$((total_mb * 3 / 2))
log "guest RAM ${total_mb} MiB, memcheck ${MB} MiB in two processes"

mkswap $DEV >/dev/null || die "mkswap"
swapon --discard $DEV || die "swapon"
memcheck -m $((MB / 2)) -p 1 -s 3 &
p1=$!
memcheck -m $((MB / 2)) -p 1 -s 4 || die "memcheck (2nd process) failed with swap on nswap2l"
wait $p1 || die "memcheck (1st process) failed with swap on nswap2l"
show_status nsw
writes=$(tier_stat nsw netram writes)
stress-ng --vm 2 --vm-bytes "${total_mb}M" --vm-keep --verify --timeout 10s \
	--metrics-brief >/tmp/stress.out 2>&1 || { cat /tmp/stress.out; die "stress-ng --vm --verify failed"; }
grep -E ' vm |run completed' /tmp/stress.out
! grep -q ' fail: ' /tmp/stress.out && grep -q '] successful run completed' /tmp/stress.out ||
	{ cat /tmp/stress.out; die "stress-ng reported a failure"; }
assert_gt "$(tier_stat nsw netram writes)" "$writes" "pages stress-ng sent to Network RAM"
show_status nsw
assert_gt "$(tier_stat nsw netram writes)" 10000 "pages written to Network RAM"
assert_gt "$(tier_stat nsw netram reads)" 1000 "pages read from Network RAM"
assert_gt "$(netram_stat nsw 0 held)" 0 "pages held by server 0"
assert_gt "$(netram_stat nsw 1 held)" 0 "pages held by server 1"
assert_eq "$(netram_stat nsw 0 errors)" 0 "server 0 errors"
assert_eq "$(netram_stat nsw 1 errors)" 0 "server 1 errors"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
swapoff $DEV || die "swapoff"
dm_remove nsw || die "remove"
log "ok"
