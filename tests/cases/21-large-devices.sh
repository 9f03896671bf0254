# Large tiers and large devices.  A 20 TiB disk and an 8 TiB flash device
# (sparse qcow2 disks) under a 64 GiB device: each tier takes no more slots
# than the device has pages (the slot bitmap was kmalloc'ed and counted in
# unsigned int: any tier over ~128 GiB failed to load).  A 1 TiB device,
# whose map takes 2 GiB, more than kvmalloc() gives (it refused with a
# WARNING).  A device too large for the machine's RAM is refused with a
# message that says how much its map would need.
# mem: 5G
# disks: flash=8T disk=20T
# timeout: 600

load_nswap2l
DEV=/dev/mapper/big
assert_eq "$(dev_sectors "$DISK")" $((20 << 31)) "sectors of the 20 TiB disk"
assert_eq "$(dev_sectors "$FLASH")" $((8 << 31)) "sectors of the 8 TiB flash device"

# check_ends PAGES SEED: pages at both ends and in the middle hold their data
check_ends() {
	blkpat write $DEV 0 256 "$2" || die "write the first pages of $1"
	blkpat write $DEV $(($1 - 256)) 256 $(($2 + 1)) || die "write the last pages of $1"
	blkpat verify $DEV 0 256 "$2" || die "verify the first pages of $1"
	blkpat verify $DEV $(($1 - 256)) 256 $(($2 + 1)) || die "verify the last pages of $1"
	blkpat zero $DEV $(($1 / 2)) 64 || die "pages never written must read as zeros ($1)"
}

# 1. 64 GiB over 8 TiB flash and 20 TiB disk
PAGES=$((64 << 18))
dm_create big "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK" || die "create over 8 TiB + 20 TiB"
show_status big
assert_eq "$(tier_stat big flash capacity)" $PAGES "flash slots (no more than the device's pages)"
assert_eq "$(tier_stat big disk capacity)" $PAGES "disk slots (no more than the device's pages)"
check_ends $PAGES 1
# the new pages took the first slots of flash
assert_eq "$(tier_stat big flash used)" 512 "flash slots in use"
blkdiscard $DEV || die "discard of the whole device"
assert_eq "$(tier_stat big flash used)" 0 "flash slots in use after a discard of everything"
dm_remove big || die "remove the 64 GiB device"

# 2. a map of 2 GiB (1 TiB device) over flash alone
PAGES=$((1 << 28))
before=$(free_kb)
dm_create big "0 $((PAGES * 8)) nswap2l 1 flash=$FLASH" || die "create of a 1 TiB device"
during=$(free_kb)
log "1 TiB device: $before kB free before, $during kB with it"
assert_ge "$((before - during))" $((2 << 20)) "kB the 2 GiB map takes"
check_ends $PAGES 3
dm_remove big || die "remove the 1 TiB device"
after=$(free_kb)
assert_ge "$after" $((before - 65536)) "kB free again after remove"

# 3. a device whose map does not fit: refused, with the size it would need
dmesg_mark
expect_fail "a 20 TiB device on a 5 GiB machine" dmsetup create --noudevsync big \
	--table "0 $((20 << 31)) nswap2l 1 disk=$DISK"
dm_exists big && die "device left behind by the refused create"
dmesg_new | grep -q "needs 40960 MiB of RAM for its page map" ||
	die "no dmesg line with the size the map would need: $(dmesg_new | tail -n 3)"
log "ok"
