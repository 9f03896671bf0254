# The map costs at most 8 bytes per 4 KiB page, over flash alone
# (overcommit) and with a Network RAM server too: measured as the slope of
# the kernel's own allocations (VmallocUsed + SUnreclaim + Percpu, exact
# counters, unlike MemAvailable which lazily freed memory blurs by MiBs)
# between a 4 GiB and a 24 GiB device (the map is 8 bytes a page; vmalloc
# adds a page pointer per 4 KiB of it, 0.016 bytes a page: allowed up to
# 8.05), plus a fixed cost per device (tier
# buffers, threads) of at most 4 MiB.  The memory in use (MemTotal less the
# free pages, those on the per-CPU lists included: 6.12 keeps up to ~17 MiB
# there, which MemFree leaves out) must agree within 4 MiB for each device,
# and everything is freed on remove.
# The module's own logic, so it runs on one kernel (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 512M
# disks: flash=64M
# servers: 1
# timeout: 600

load_nswap2l
SMALL=$((4 * 1024 * 1024 / 4))           # 4 GiB device, in pages
BIG=$((24 * 1024 * 1024 / 4))            # 24 GiB device
FIXED_LIMIT=$((4 * 1024 * 1024))

settle() { drop_caches; sleep 1; drop_caches; }
used_bytes() { echo $((($(meminfo_kb MemTotal) - $(free_kb)) * 1024)); }
kernel_bytes() { echo $((($(meminfo_kb VmallocUsed) + $(meminfo_kb SUnreclaim) + $(meminfo_kb Percpu)) * 1024)); }

# cost TABLE-ARGS PAGES: kernel bytes the device takes (on stdout); also
# checks MemFree, some I/O, and that the memory comes back on remove
cost() {
	exec 3>&1 1>&2
	settle
	b0=$(used_bytes)
	k0=$(kernel_bytes)
	dm_create big "0 $(($2 * 8)) nswap2l $1" || die "create of $2 pages over $1 failed"
	settle
	b1=$(used_bytes)
	k1=$(kernel_bytes)
	assert_le "$((b1 - b0))" "$(($2 * 8 + FIXED_LIMIT))" "memory in use, growth for $2 pages over $1"
	blkpat write /dev/mapper/big 0 64 51 || die "write start"
	blkpat write /dev/mapper/big $(($2 - 64)) 64 52 || die "write end"
	blkpat verify /dev/mapper/big 0 64 51 || die "verify start"
	blkpat verify /dev/mapper/big $(($2 - 64)) 64 52 || die "verify end"
	blkpat zero /dev/mapper/big $(($2 / 2)) 64 || die "middle not zero"
	dm_remove big || die "remove"
	settle
	b2=$(used_bytes)
	assert_le "$((b2 - b0))" "$((FIXED_LIMIT / 2))" "memory not returned after remove ($2 pages over $1)"
	echo $((k1 - k0)) >&3
}

measure() { # table args after the length
	small=$(cost "$1" $SMALL) || exit 1
	big=$(cost "$1" $BIG) || exit 1
	_num "$small" "cost of the small device"
	_num "$big" "cost of the big device"
	per_page=$(awk -v a="$small" -v b="$big" -v p=$((BIG - SMALL)) 'BEGIN { printf "%.3f", (b - a) / p }')
	fixed=$(awk -v a="$small" -v pp="$per_page" -v p=$SMALL 'BEGIN { printf "%d", a - pp * p }')
	log "map memory ($1): 4 GiB device $small bytes, 24 GiB $big bytes: $per_page bytes/page + $fixed bytes fixed"
	echo "MAP-MEMORY table='$1' bytes_per_page=$per_page fixed_bytes=$fixed"
	awk -v pp="$per_page" 'BEGIN { exit !(pp <= 8.05) }' || die "map costs $per_page bytes per page over $1 (limit 8 + vmalloc's 0.016)"
	assert_le "$fixed" "$FIXED_LIMIT" "fixed cost in bytes over $1"
}

# warm up: create and remove a small device once (slab caches, workqueues)
dm_create warm "0 $(($(dev_pages "$FLASH") * 8)) nswap2l 1 flash=$FLASH" || die "warm-up create"
dm_remove warm
netram_load_key >/dev/null
measure "2 flash=$FLASH overcommit"
measure "3 netram=$(netram_server 0) $(netram_table_arg | cut -d' ' -f2) flash=$FLASH"
log "ok"
