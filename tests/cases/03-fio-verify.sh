# fio randwrite with crc32c verify over a device spanning flash and disk,
# a separate verify-only pass, and a mixed 4k-64k job.
# mem: 256M
# disks: flash=16M disk=64M
# timeout: 600

load_nswap2l
FP=$(dev_pages "$FLASH")
PAGES=$(dev_pages "$DISK")          # device as large as the disk tier
LEN=$((PAGES * 8))
[ "$PAGES" -gt "$FP" ] || die "test setup: device must be larger than flash"
dm_create nsw "0 $LEN nswap2l 2 flash=$FLASH disk=$DISK" || die "create failed"
DEV=/dev/mapper/nsw

COMMON="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --size=100% --randseed=4242 --verify=crc32c --verify_fatal=1"
# shellcheck disable=SC2086
run_fio randwrite --name=rw4k $COMMON --rw=randwrite --bs=4k --do_verify=1
show_status nsw
assert_eq "$(tier_stat nsw flash used)" "$FP" "flash used (should be full)"
assert_eq "$(tier_stat nsw disk used)" "$((PAGES - FP))" "disk used"
assert_eq "$(nsw_total nsw used)" "$PAGES" "used pages == pages written"
assert_ge "$(tier_stat nsw flash writes)" "$FP" "flash writes"
assert_ge "$(tier_stat nsw disk writes)" "$((PAGES - FP))" "disk writes"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"

# separate verify-only pass over the same layout (same job, same seed)
# shellcheck disable=SC2086
run_fio verify-only --name=rw4k $COMMON --rw=randwrite --bs=4k --verify_only
assert_ge "$(tier_stat nsw flash reads)" "$FP" "flash reads after verify"
assert_ge "$(tier_stat nsw disk reads)" "$((PAGES - FP))" "disk reads after verify"

# mixed block sizes, writes verified by fio
# shellcheck disable=SC2086
run_fio mixed --name=mixed $COMMON --randseed=777 --rw=randwrite --bsrange=4k-64k --do_verify=1
# and an independent check of a region with our own pattern
blkpat write $DEV 100 3000 5 || die "blkpat write"
drop_caches
blkpat verify $DEV 100 3000 5 || die "blkpat verify"
assert_eq "$(nsw_total nsw used)" "$PAGES" "used pages after overwrites"
show_status nsw
dm_remove nsw || die "remove"
log "ok"
