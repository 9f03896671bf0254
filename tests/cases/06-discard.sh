# Discard frees slots: blkdiscard of a range and of the whole device, reads
# of discarded pages return zeros, the flash device receives discards, and
# fstrim on ext4 frees slots.
# mem: 256M
# disks: flash=16M disk=64M
# timeout: 600

load_nswap2l
FP=$(dev_pages "$FLASH")
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create failed"
DEV=/dev/mapper/nsw
flash_discards() { awk '{ print $12 }' /sys/block/$(basename $FLASH)/stat; }

blkpat write $DEV 0 $PAGES 21 || die "fill"
assert_eq "$(nsw_total nsw used)" "$PAGES" "used after fill"
assert_eq "$(tier_stat nsw flash used)" "$FP" "flash full after fill"
show_status nsw

# a range crossing the flash/disk boundary: pages [FP-500, FP+1500)
A=$((FP - 500))
N=2000
fd0=$(flash_discards)
d0=$(nsw_total nsw discards)
blkdiscard -o $((A * 4096)) -l $((N * 4096)) $DEV || die "blkdiscard range"
show_status nsw
assert_eq "$(nsw_total nsw used)" "$((PAGES - N))" "used after discarding $N pages"
assert_eq "$(tier_stat nsw flash used)" "$((FP - 500))" "flash used after range discard"
assert_ge "$(($(nsw_total nsw discards) - d0))" 1 "discard counter"
blkpat zero $DEV $A $N || die "discarded pages do not read as zeros"
blkpat verify $DEV 0 $A 21 || die "data before the discarded range"
blkpat verify $DEV $((A + N)) $((PAGES - A - N)) 21 || die "data after the discarded range"
fd1=$(flash_discards)
log "flash device discard requests: $fd0 -> $fd1"
assert_gt "$fd1" "$fd0" "discards reaching the flash device"

# rewrite part of the hole: slots are reused (flash first)
blkpat write $DEV $A 100 22 || die "rewrite into hole"
assert_eq "$(tier_stat nsw flash used)" "$((FP - 400))" "flash used after rewriting 100 pages"
blkpat verify $DEV $A 100 22 || die "rewritten pages"

# whole device
blkdiscard $DEV || die "blkdiscard whole"
assert_eq "$(nsw_total nsw used)" 0 "used after discarding everything"
blkpat zero $DEV 0 $PAGES || die "device not zero after full discard"
show_status nsw

# ext4 + fstrim
mkfs.ext4 -q -b 4096 -E nodiscard $DEV || die "mkfs"
mkdir -p /mnt/t
mount -t ext4 $DEV /mnt/t || die "mount"
dd if=/dev/urandom of=/mnt/t/a bs=1M count=40 2>/dev/null || die "write file"
sync
rm /mnt/t/a
sync
before=$(nsw_total nsw used)
fstrim -v /mnt/t || die "fstrim"
after=$(nsw_total nsw used)
log "used before fstrim $before, after $after"
assert_lt "$after" "$before" "used after fstrim"
assert_le "$after" "$((before - 9000))" "used after fstrim (40 MiB file removed)"
umount /mnt/t
dm_remove nsw || die "remove"
log "ok"
