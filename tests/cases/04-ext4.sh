# ext4 on the device: copy a tree with known checksums, fsck clean, remount
# and compare.
# mem: 256M
# disks: flash=32M disk=128M
# timeout: 600

load_nswap2l
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create failed"
DEV=/dev/mapper/nsw

# source tree: parts of the guest userland plus generated files
SRC=/tmp/src
mkdir -p $SRC/gen/small
cp -a /lib/modules /tests $SRC/
cp -a /usr/sbin $SRC/sbin
mkdir -p $SRC/libs && cp /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6 $SRC/libs/
i=0
while [ $i -lt 12 ]; do
	dd if=/dev/urandom of=$SRC/gen/big$i bs=64k count=$((16 + i * 8)) 2>/dev/null
	i=$((i + 1))
done
i=0
while [ $i -lt 400 ]; do
	head -c $((i * 37 + 1)) /dev/urandom >$SRC/gen/small/f$i
	i=$((i + 1))
done
ln -s gen/big0 $SRC/link
(cd $SRC && find . -type f | sort | xargs sha256sum) >/tmp/sums
log "source tree: $(wc -l </tmp/sums) files, $(du -sk $SRC | cut -f1) KiB"

mkfs.ext4 -q -b 4096 $DEV || die "mkfs.ext4"
mkdir -p /mnt/t
mount -t ext4 $DEV /mnt/t || die "mount"
cp -a $SRC/. /mnt/t/ || die "copy"
sync
show_status nsw
umount /mnt/t || die "umount"
e2fsck -fn $DEV || die "e2fsck -fn reports problems"
assert_gt "$(tier_stat nsw flash used)" 0 "flash used"
assert_gt "$(tier_stat nsw disk used)" 0 "disk used (tree larger than flash)"
drop_caches
mount -t ext4 -o ro $DEV /mnt/t || die "second mount"
(cd /mnt/t && sha256sum -c /tmp/sums >/tmp/check.out 2>&1) || { grep -v ': OK$' /tmp/check.out | head; die "checksums differ after remount"; }
[ "$(readlink /mnt/t/link)" = gen/big0 ] || die "symlink lost"
umount /mnt/t
dm_remove nsw || die "remove"
log "ok"
