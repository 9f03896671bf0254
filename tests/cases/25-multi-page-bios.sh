# Multi-page bios: a bio over pages that share one home goes there whole
# (flash, one Network RAM server, in one message), and is cut where the
# homes change (a full server spilling to flash, pages never written or
# discarded); every page holds what was written and unwritten ones read as
# zeros.  Fails on a module that cuts every bio to one page.
# mem: 256M
# servers: 1 max=4M reserve=0
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/mp
MB=8
PAGES=$((MB * 256))

# at least MIN pages a bio on average for TIER's reads|writes
assert_pages_per_bio() { # tier read|write min
	_pages=$(sysfs_stat mp tiers "$1" "${2}s")
	_bios=$(sysfs_stat mp tiers "$1" "${2}_bios")
	log "$1 ${2}s: $_pages pages in $_bios bios"
	assert_gt "$_bios" 0 "$1 ${2} bios"
	assert_ge "$((_pages / _bios))" "$3" "$1: pages per $2 bio"
}

# --- one tier: 1 MiB bios stay (almost) whole -------------------------------
dm_create mp "0 $((2 * PAGES * 8)) nswap2l 1 flash=$FLASH" || die "create flash-only"
head -c $((MB << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of=$DEV bs=1M oflag=direct status=none || die "dd write"
dd if=$DEV of=/tmp/back bs=1M count=$MB iflag=direct status=none || die "dd read"
cmp /tmp/data /tmp/back || die "flash: 1 MiB reads do not return what 1 MiB writes wrote"
assert_eq "$(sysfs_stat mp tiers flash writes)" $PAGES "flash pages written"
assert_pages_per_bio flash write 32
assert_pages_per_bio flash read 32
# pages never written read as zeros, in long bios too
blkpat zero $DEV $PAGES $PAGES || die "unwritten pages must read as zeros"
assert_ge "$(nsw_zero_reads mp)" $PAGES "zero reads"
dm_remove mp || die "remove flash-only"

# --- Network RAM spilling to flash: runs cut where the homes change ----------
dm_create mp "0 $((2 * PAGES * 8)) nswap2l 3 netram=$(netram_server 0) $KEY flash=$FLASH" ||
	die "create netram+flash"
dd if=/tmp/data of=$DEV bs=1M oflag=direct status=none || die "dd write over two tiers"
show_status mp
nr=$(tier_stat mp netram used)
fl=$(tier_stat mp flash used)
log "netram holds $nr pages, flash $fl"
assert_gt "$nr" 0 "pages on Network RAM"
assert_gt "$fl" 0 "pages spilled to flash"
assert_eq "$((nr + fl))" $PAGES "pages stored"
assert_pages_per_bio netram write 16
assert_pages_per_bio flash write 16
# a PUT carries many pages: messages per page, FREEs included
req=$(sysfs_stat mp servers "$(netram_server 0)" requests)
log "server requests: $req for $nr pages"
assert_le "$((req * 16))" "$nr" "requests for 16 pages at most one"
dd if=$DEV of=/tmp/back bs=1M count=$MB iflag=direct status=none || die "dd read over two tiers"
cmp /tmp/data /tmp/back || die "reads across the Network RAM / flash boundary return wrong data"
assert_pages_per_bio netram read 16

# holes: discard 1 MiB in the middle, read the whole region in 1 MiB bios
blkpat write $DEV 0 $PAGES 25 || die "blkpat write"
blkdiscard -o $((2 << 20)) -l $((1 << 20)) $DEV || die "blkdiscard"
dd if=$DEV of=/tmp/back bs=1M count=$MB iflag=direct status=none || die "dd read with a hole"
blkpat verify $DEV 0 512 25 || die "pages before the hole"
blkpat zero $DEV 512 256 || die "the discarded MiB must read as zeros"
blkpat verify $DEV 768 $((PAGES - 768)) 25 || die "pages after the hole"
# the hole gets new homes, the rest is rewritten in place, all of it verified
blkpat write $DEV 0 $PAGES 26 || die "blkpat rewrite"
blkpat verify $DEV 0 $PAGES 26 || die "blkpat verify after rewrite"
assert_eq "$(nsw_nospace mp)" 0 "nospace errors"
assert_eq "$(netram_stat mp 0 errors)" 0 "server errors"
dm_remove mp || die "remove netram+flash"
