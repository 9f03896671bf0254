# A rerouted write whose pages find no one run: a 64-page write to a
# Network RAM server that stalls fails over to flash, where only every
# other slot is free, so the worker splits it into pieces, one per free
# slot; every page then reads back what was written last, and the pages
# around the holes keep theirs.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1 max=16M reserve=0
# disks: flash=1M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/sp
FP=$(dev_pages "$FLASH")                # flash slots
RUN=1024                                # first page of the 64-page run
dm_create sp "0 $((2048 * 8)) nswap2l 4 netram=$(netram_server 0) $KEY flash=$FLASH timeout=2" ||
	die "create"
server_is() { [ "$(netram_stat sp 0 state)" = "$1" ]; }

# 1. the server stalls and fails: new pages go to flash, which fills up;
# then every other page of its first half is discarded
server_ctl stop 0 || die "stop server 0"
blkpat write $DEV 0 "$FP" 1 || die "fill flash"
wait_until 20 sp "server 0 failed" server_is failed
assert_eq "$(tier_stat sp flash used)" "$FP" "flash slots used"
p=0
while [ $p -lt $((FP / 2)) ]; do
	blkdiscard -o $((p * 4096)) -l 4096 $DEV || die "blkdiscard page $p"
	p=$((p + 2))
done
holes=$((FP / 4))
assert_eq "$(tier_stat sp flash used)" $((FP - holes)) "flash slots used after discards"

# 2. the server is back: a 64-page run goes to it in one bio
server_ctl cont 0 || die "cont server 0"
wait_until 30 sp "server 0 up" server_is up
blkpat write $DEV $RUN 64 2 || die "write the run"
assert_eq "$(tier_stat sp netram used)" 64 "pages on the server"

# 3. it stalls again while the run is rewritten: the write fails over to
# flash in pieces
bios0=$(sysfs_stat sp tiers flash write_bios)
rerouted0=$(nsw_rerouted sp)
server_ctl stop 0 || die "stop server 0 again"
blkpat write $DEV $RUN 64 3 || die "rewrite the run across the stall"
server_ctl cont 0 || die "cont server 0 again"
show_status sp
assert_gt "$(nsw_rerouted sp)" "$rerouted0" "rerouted writes"
pieces=$(($(sysfs_stat sp tiers flash write_bios) - bios0))
log "the rerouted run went to flash in $pieces bios"
assert_ge "$pieces" $((holes / 2)) "pieces of the split write"
assert_eq "$(tier_stat sp flash used)" $((FP - holes + 64)) "flash slots used"

# 4. contents
blkpat verify $DEV $RUN 64 3 || die "the rerouted run"
p=0
while [ $p -lt $((FP / 2)) ]; do
	blkpat zero $DEV $p 1 || die "discarded page $p"
	blkpat verify $DEV $((p + 1)) 1 1 || die "page $((p + 1)) between the holes"
	p=$((p + 2))
done
blkpat verify $DEV $((FP / 2)) $((FP / 2)) 1 || die "second half of the flash pages"
wait_until 30 sp "server 0 up again" server_is up
assert_eq "$(nsw_nospace sp)" 0 "nospace errors"
dm_remove sp || die "remove"
