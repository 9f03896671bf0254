# Spill: writing more than the flash tier holds fills flash to capacity and
# places the rest on disk; all data verifies.
# mem: 256M
# disks: flash=16M disk=128M
# timeout: 600

load_nswap2l
FP=$(dev_pages "$FLASH")
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create failed"
DEV=/dev/mapper/nsw
W=$((FP * 5))   # 5x what flash holds
blkpat write $DEV 0 $W 31 || die "write"
show_status nsw
assert_eq "$(tier_stat nsw flash used)" "$FP" "flash used == capacity"
assert_eq "$(tier_stat nsw flash capacity)" "$FP" "flash capacity"
assert_eq "$(tier_stat nsw disk used)" "$((W - FP))" "disk used == the rest"
assert_ge "$(tier_stat nsw flash writes)" "$FP" "flash writes"
assert_ge "$(tier_stat nsw disk writes)" "$((W - FP))" "disk writes"
drop_caches
blkpat verify $DEV 0 $W 31 || die "verify after spill"
blkpat zero $DEV $W $((PAGES - W)) || die "unwritten tail not zero"
assert_ge "$(tier_stat nsw disk reads)" "$((W - FP))" "disk reads"
# overwrite in place: no new slots
blkpat write $DEV 0 $W 32 || die "overwrite"
assert_eq "$(nsw_total nsw used)" "$W" "used after overwrite"
blkpat verify $DEV 0 $W 32 || die "verify after overwrite"
show_status nsw
dm_remove nsw || die "remove"
log "ok"
