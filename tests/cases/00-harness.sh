# Harness smoke test (does not need dm-nswap2l): virtio disks, tools disk,
# dm-linear via dmsetup, O_DIRECT pattern helper, fio, memcheck self-test.
# mem: 256M
# disks: flash=16M disk=32M
# timeout: 180
# needs-module: no

[ -b "$FLASH" ] || die "FLASH disk missing"
[ -b "$DISK" ] || die "DISK disk missing"
assert_eq "$FLASH" /dev/vda "first declared disk"
assert_eq "$DISK" /dev/vdb "second declared disk"
assert_eq "$(dev_sectors "$FLASH")" 32768 "flash sectors"
for m in dm_mod brd zram nbd loop; do
	modprobe $m || die "modprobe $m"
done
[ -d /sys/module/dm_mod ] || die "dm_mod not loaded"

dm_create lin "0 $(dev_sectors "$FLASH") linear $FLASH 0"
assert_eq "$(dmsetup table lin)" "0 32768 linear $(dev_majmin "$FLASH") 0" "dm-linear table"
blkpat write /dev/mapper/lin 0 4096 42 || die "blkpat write"
blkpat verify "$FLASH" 0 4096 42 || die "blkpat verify via the lower device"
expect_fail "blkpat wrong seed" blkpat verify /dev/mapper/lin 0 16 43
blkpat zero "$DISK" 0 8192 || die "fresh disk not zero"
fio --name=h --filename=/dev/mapper/lin --rw=randwrite --bs=4k --ioengine=libaio --iodepth=8 \
	--direct=1 --size=8M --verify=crc32c --do_verify=1 --output-format=terse >/dev/null || die "fio"
dm_remove lin || die "remove"
mkfs.ext4 -q "$DISK" || die "mkfs"
e2fsck -fn "$DISK" >/dev/null || die "e2fsck"
expect_fail "memcheck self-test" memcheck -m 4 -p 1 -C >/dev/null
memcheck -m 16 -p 2 || die "memcheck"
# Guests boot nokaslr, so the kernel's text is where /proc/kallsyms says on
# every boot: tests/run keeps this list for its hang reports, which name the
# functions a hung guest's vCPUs are in (Debian ships no real System.map).
stext=$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)
assert_eq "$stext" ffffffff81000000 "_stext (nokaslr: the link address)"
grep ' [tT] ' /proc/kallsyms | grep -v '\[' | gzip -1 >/tmp/kallsyms.gz || die "kernel text symbols"
assert_gt "$(gzip -dc /tmp/kallsyms.gz | wc -l)" 10000 "kernel text symbols"
export_file /tmp/kallsyms.gz
if modprobe dm-nswap2l; then log "dm-nswap2l loads"; else log "dm-nswap2l not available (ok for this case)"; fi
log "harness ok"
