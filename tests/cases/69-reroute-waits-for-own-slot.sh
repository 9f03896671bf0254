# A write its server refuses, with every other slot of the device taken,
# waits for its own old slot instead of failing.  The server
# (tests/lib/misbehaving-server overstates-free) stores 512 pages but says
# it has room for 512 more; flash (8 MiB) is filled by the writes it
# refuses.  Writing a page on flash again then places it in Network RAM
# (faster, with room by the server's word) and queues its flash slot for
# release once the bios in flight, the write among them, are done; the
# server refuses the PUT, and the rerouted write finds no room in Network
# RAM and none on flash but that slot.  It failed with ENOSPC (seen in 62
# under load, prefetching having filled flash; under swap the page would
# have been lost); it now leaves its epoch, waits for the slot to be freed
# and writes the page there.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1
# disks: flash=8M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
server_ctl misbehave 0 overstates-free >/dev/null || die "server 0 with overstates-free"
STORED=512	# misbehaving-server's FEW_FREE
DEV=/dev/mapper/ro
# overcommit: the tiers' capacity counts the 512 pages the server only claims
dm_create ro "0 $((4096 * 8)) nswap2l 5 $(netram_table_arg) flash=$FLASH prefetch=none overcommit" ||
	die "create"
FLASH_PAGES=$(tier_stat ro flash capacity)
FULL=$((STORED + FLASH_PAGES))
blkpat write $DEV 0 $FULL 1 >/dev/null || die "fill Network RAM and flash ($FULL pages)"
assert_eq "$(tier_stat ro netram used)" $STORED "pages in Network RAM"
assert_eq "$(tier_stat ro flash used)" "$FLASH_PAGES" "pages on flash"
assert_eq "$(nsw_nospace ro)" 0 "nospace errors of the fill"
# a reply that says "room" after the last refusal
dd if=$DEV of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || die "read a page"
assert_gt "$(netram_stat ro 0 free)" 0 "free pages the server claims"

ON_FLASH=$((STORED + 100))
rerouted=$(nsw_rerouted ro)
blkpat write $DEV $ON_FLASH 1 2 >/dev/null ||
	die "write of a page on flash, refused by the server (nospace errors: $(nsw_nospace ro))"
show_status ro
assert_eq "$(($(nsw_rerouted ro) - rerouted))" 1 "writes refused and rerouted"
assert_eq "$(nsw_nospace ro)" 0 "nospace errors"
assert_eq "$(tier_stat ro flash used)" "$FLASH_PAGES" "pages on flash (the page in its own slot's place)"
assert_eq "$(tier_stat ro netram used)" $STORED "pages in Network RAM"
blkpat verify $DEV $ON_FLASH 1 2 >/dev/null || die "the page rewritten"
blkpat verify $DEV 0 $ON_FLASH 1 >/dev/null || die "the pages before it"
blkpat verify $DEV $((ON_FLASH + 1)) $((FULL - ON_FLASH - 1)) 1 >/dev/null || die "the pages after it"
dm_remove ro || die "remove"
log "ok"
