# The map costs at most 8 bytes per 4 KiB page, over flash alone
# (overcommit) and with a Network RAM server too: measured as the slope of
# MemTotal - MemAvailable between a 4 GiB and a 24 GiB device (0.25 bytes of
# allowance for MemAvailable's noise), plus a fixed cost per device (tier
# buffers, mover, threads) of at most 4 MiB.  All of it is freed on remove.
# mem: 512M
# disks: flash=64M
# servers: 1
# timeout: 600

load_nswap2l
SMALL=$((4 * 1024 * 1024 / 4))           # 4 GiB device, in pages
BIG=$((24 * 1024 * 1024 / 4))            # 24 GiB device
FIXED_LIMIT=$((4 * 1024 * 1024))

used_bytes() { # MemTotal - MemAvailable, after settling
	drop_caches
	sleep 1
	drop_caches
	echo $((($(meminfo_kb MemTotal) - $(meminfo_kb MemAvailable)) * 1024))
}

# cost TABLE-ARGS PAGES: bytes the device takes; also checks I/O and release
cost() {
	b0=$(used_bytes)
	dm_create big "0 $(($2 * 8)) nswap2l $1" || die "create of $2 pages over $1 failed"
	b1=$(used_bytes)
	blkpat write /dev/mapper/big 0 64 51 || die "write start"
	blkpat write /dev/mapper/big $(($2 - 64)) 64 52 || die "write end"
	blkpat verify /dev/mapper/big 0 64 51 || die "verify start"
	blkpat verify /dev/mapper/big $(($2 - 64)) 64 52 || die "verify end"
	blkpat zero /dev/mapper/big $(($2 / 2)) 64 || die "middle not zero"
	dm_remove big || die "remove"
	b2=$(used_bytes)
	assert_le "$((b2 - b0))" "$((FIXED_LIMIT / 2))" "memory not returned after remove ($2 pages over $1)"
	echo $((b1 - b0))
}

measure() { # table args after the length
	small=$(cost "$1" $SMALL) || exit 1
	big=$(cost "$1" $BIG) || exit 1
	per_page=$(awk -v a="$small" -v b="$big" -v p=$((BIG - SMALL)) 'BEGIN { printf "%.2f", (b - a) / p }')
	fixed=$(awk -v a="$small" -v pp="$per_page" -v p=$SMALL 'BEGIN { printf "%d", a - pp * p }')
	log "map memory ($1): 4 GiB device $small bytes, 24 GiB $big bytes: $per_page bytes/page + $fixed bytes fixed"
	echo "MAP-MEMORY table='$1' bytes_per_page=$per_page fixed_bytes=$fixed"
	awk -v pp="$per_page" 'BEGIN { exit !(pp <= 8.25) }' || die "map costs $per_page bytes per page over $1 (limit 8)"
	assert_le "$fixed" "$FIXED_LIMIT" "fixed cost in bytes over $1"
}

# warm up: create and remove a small device once (slab caches, workqueues)
dm_create warm "0 $(($(dev_pages "$FLASH") * 8)) nswap2l 1 flash=$FLASH" || die "warm-up create"
dm_remove warm
netram_load_key >/dev/null
measure "2 flash=$FLASH overcommit"
measure "3 netram=$(netram_server 0) $(netram_table_arg | cut -d' ' -f2) flash=$FLASH"
log "ok"
