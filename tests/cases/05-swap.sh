# Swap on the device in a small guest: memcheck with 1.5x RAM (more swap
# than flash holds) must verify, tiers see reads and writes, swapoff works;
# again (1.25x RAM) with swapon --discard.
# mem: 128M
# disks: flash=64M disk=384M
# timeout: 900

load_nswap2l
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create failed"
DEV=/dev/mapper/nsw
total_mb=$(($(meminfo_kb MemTotal) / 1024))
MB=$((total_mb * 3 / 2))
log "guest RAM ${total_mb} MiB, memcheck ${MB} MiB"

mkswap $DEV >/dev/null || die "mkswap"
swapon $DEV || die "swapon"
cat /proc/swaps
memcheck -m $MB -p 1 -s 1 || die "memcheck failed with swap on nswap2l"
show_status nsw
grep -E 'SwapTotal|SwapFree' /proc/meminfo
assert_gt "$(nsw_total nsw writes)" 10000 "pages written to the tiers"
assert_gt "$(nsw_total nsw reads)" 1000 "pages read from the tiers"
assert_gt "$(tier_stat nsw flash writes)" 0 "flash writes"
assert_gt "$(tier_stat nsw disk writes)" 0 "disk writes (swap larger than flash)"
swapoff $DEV || die "swapoff"
grep -q "$DEV\|dm-" /proc/swaps && die "still in /proc/swaps after swapoff"

# again with discard: swapon discards the whole area, then freed swap pages
d0=$(nsw_total nsw discards)
used0=$(nsw_total nsw used)
swapon --discard $DEV || die "swapon --discard"
used1=$(nsw_total nsw used)
log "used before swapon --discard: $used0, after: $used1"
assert_gt "$(nsw_total nsw discards)" "$d0" "discards after swapon --discard"
assert_le "$used1" 1 "used pages after swapon --discard (only the swap header may remain)"
memcheck -m $((total_mb * 5 / 4)) -p 1 -s 2 || die "memcheck failed with swap (discard) on nswap2l"
show_status nsw
swapoff $DEV || die "swapoff (discard)"
dm_remove nsw || die "remove"
log "ok"
