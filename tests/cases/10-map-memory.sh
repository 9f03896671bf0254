# The per-page map of a large overcommit device costs at most 8 bytes per
# 4 KiB page plus 1 MiB of slack; it is freed on remove.
# mem: 384M
# disks: flash=64M
# timeout: 300

load_nswap2l
PAGES=$((16 * 1024 * 1024 / 4))          # 16 GiB device
SLACK=$((1024 * 1024))

used_bytes() { # MemTotal - MemAvailable, after settling
	drop_caches
	sleep 1
	drop_caches
	echo $((($(meminfo_kb MemTotal) - $(meminfo_kb MemAvailable)) * 1024))
}
# warm up: create and remove a small device once (slab caches, workqueues)
dm_create warm "0 $(($(dev_pages "$FLASH") * 8)) nswap2l 1 flash=$FLASH" || die "warm-up create"
dm_remove warm

b0=$(used_bytes)
grep -E 'MemAvailable|Slab|VmallocUsed' /proc/meminfo
dm_create big "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH overcommit" || die "16 GiB overcommit create failed"
b1=$(used_bytes)
grep -E 'MemAvailable|Slab|VmallocUsed' /proc/meminfo
delta=$((b1 - b0))
per_page=$(awk -v d=$delta -v p=$PAGES 'BEGIN { printf "%.2f", d / p }')
log "map memory: $delta bytes for $PAGES pages = $per_page bytes/page (limit 8 + $SLACK bytes slack)"
echo "MAP-MEMORY bytes_per_page=$per_page delta_bytes=$delta pages=$PAGES"
assert_le "$delta" "$((PAGES * 8 + SLACK))" "map memory in bytes"
# a little I/O on the big device, at both ends
blkpat write /dev/mapper/big 0 64 51 || die "write start"
blkpat write /dev/mapper/big $((PAGES - 64)) 64 52 || die "write end"
blkpat verify /dev/mapper/big 0 64 51 || die "verify start"
blkpat verify /dev/mapper/big $((PAGES - 64)) 64 52 || die "verify end"
blkpat zero /dev/mapper/big $((PAGES / 2)) 64 || die "middle not zero"
dm_remove big || die "remove"
b2=$(used_bytes)
log "after remove: $((b2 - b0)) bytes above the baseline"
assert_le "$((b2 - b0))" "$((2 * SLACK))" "memory not returned after remove"
log "ok"
