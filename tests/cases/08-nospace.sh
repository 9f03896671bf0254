# Overcommit: writes past the tiers' capacity fail with ENOSPC and count as
# nospace errors; earlier data still verifies; discard makes room again.
# mem: 256M
# disks: flash=16M disk=32M
# timeout: 600

load_nswap2l
CAP=$(nsw_capacity_pages "$FLASH" "$DISK")
PAGES=$((CAP * 3))
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 flash=$FLASH disk=$DISK overcommit" || die "overcommit create failed"
DEV=/dev/mapper/nsw
blkpat write $DEV 0 $CAP 41 || die "writing up to capacity failed"
assert_eq "$(nsw_total nsw used)" "$CAP" "used at capacity"
assert_eq "$(nsw_nospace nsw)" 0 "nospace before overflow"

if blkpat write $DEV $CAP 1000 42 >/tmp/over.out; then
	cat /tmp/over.out
	die "writes past capacity succeeded"
fi
cat /tmp/over.out
grep -q 'failed=1000 ' /tmp/over.out || die "expected all 1000 overflow pages to fail"
grep -q 'errno=28 ' /tmp/over.out || die "overflow writes did not fail with ENOSPC"
show_status nsw
assert_gt "$(nsw_nospace nsw)" 0 "nospace counter"
assert_eq "$(nsw_total nsw used)" "$CAP" "used after failed writes"
blkpat zero $DEV $CAP 1000 || die "pages whose writes failed are not zeros"
drop_caches
blkpat verify $DEV 0 $CAP 41 || die "earlier data corrupted by overflow"

# free 500 pages, then 500 new pages fit
blkdiscard -o 0 -l $((500 * 4096)) $DEV || die "blkdiscard"
assert_eq "$(nsw_total nsw used)" "$((CAP - 500))" "used after discard"
ns=$(nsw_nospace nsw)
blkpat write $DEV $((PAGES - 500)) 500 43 || die "writes after discard failed"
assert_eq "$(nsw_nospace nsw)" "$ns" "nospace counter after successful writes"
blkpat verify $DEV $((PAGES - 500)) 500 43 || die "verify new pages"
blkpat verify $DEV 500 $((CAP - 500)) 41 || die "verify old pages"
show_status nsw
dm_remove nsw || die "remove"
log "ok"
