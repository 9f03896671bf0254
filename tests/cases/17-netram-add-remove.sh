# Servers added and drained at run time while fio writes and verifies: a
# drained server's pages move elsewhere before it is disconnected; full
# servers spill to flash and disk.  Wrong add/remove requests are refused.
# A server added and removed 16 times reuses the slots of removed ones.
# A removed server's room is not Network RAM's capacity.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 3 max=16M
# disks: flash=16M disk=64M
# timeout: 1200

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=16384                                 # 64 MiB: more than the servers take
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$S0 $KEY flash=$FLASH disk=$DISK" ||
	die "create failed"
COMMON="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --verify_fatal=1 --bs=4k"

blkpat write $DEV 0 2048 41 || die "blkpat write"

dmesg_mark
expect_fail "remove_server of an unknown server" dmsetup message nsw 0 remove_server 169.254.100.200:7000
expect_fail "remove_server of the last server" dmsetup message nsw 0 remove_server "$S0"
expect_fail "add_server of a server already in use" dmsetup message nsw 0 add_server "$S0"
expect_fail "add_server of a bad address" dmsetup message nsw 0 add_server 300.1.2.3:7000
expect_fail "add_server of a server that does not answer" dmsetup message nsw 0 add_server 169.254.100.123:7000
dmesg_new | grep -q "remove_server 169.254.100.200:7000: not a server" || die "no dmesg line for the unknown server"
dmesg_new | grep -q "the last server stays" || die "no dmesg line for the last server"

# shellcheck disable=SC2086
fio --name=busy $COMMON --offset=8M --size=40M --randseed=43 --rw=randwrite --do_verify=1 \
	--output=/tmp/busy.out &
busy=$!
sleep 2
dmsetup message nsw 0 add_server "$S1" || die "add_server $S1"
dmsetup message nsw 0 add_server "$S2" || die "add_server $S2"
nsw_check_shape nsw 3 3
sleep 3
dmsetup message nsw 0 remove_server "$S0" || die "remove_server $S0"
server0_removed() { [ "$(netram_stat nsw 0 state)" = removed ]; }
wait_until 180 nsw "server 0 removed" server0_removed
wait $busy || { cat /tmp/busy.out; die "fio write+verify failed while servers came and went"; }
show_status nsw
assert_eq "$(netram_stat nsw 0 held)" 0 "pages left on the removed server"
# the two servers left offer 4,096 pages each (max=16M); the removed one's
# last word on its free room (all of it, once drained) is not capacity
assert_le "$(tier_stat nsw netram capacity)" 8192 "Network RAM's capacity without the removed server"
assert_gt "$(nsw_moved nsw)" 0 "pages moved off the removed server"
assert_gt "$(netram_stat nsw 1 held)" 0 "pages on the added server 1"
assert_gt "$(netram_stat nsw 2 held)" 0 "pages on the added server 2"
assert_gt "$(tier_stat nsw flash used)" 0 "pages spilled to flash (servers full)"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
dmsetup table nsw | grep -q "netram=$S1,$S2 " || die "table after remove: $(dmsetup table nsw)"
dmesg | grep -q "server $S0 drained" || die "no dmesg line for the drained server"

blkpat verify $DEV 0 2048 41 || die "pages written before the changes"
# shellcheck disable=SC2086
run_fio busy-verify --name=busy $COMMON --offset=8M --size=40M --randseed=43 --rw=randwrite --verify_only

# A removed server's slot is taken by the next one added: 16 servers at a
# time, any number over the device's life.  Each round places new pages on
# the added server (the most free), drains them off and reads them back.
s0_removed() { [ "$(netram_stat_of nsw "$S0" state)" = removed ]; }
for round in $(seq 1 16); do
	dmsetup message nsw 0 add_server "$S0" || die "add_server $S0, round $round"
	blkdiscard -o 0 -l 256K $DEV || die "blkdiscard, round $round"
	blkpat write $DEV 0 64 $((100 + round)) || die "blkpat write, round $round"
	assert_gt "$(netram_stat_of nsw "$S0" held)" 0 "pages on $S0, round $round"
	dmsetup message nsw 0 remove_server "$S0" || die "remove_server $S0, round $round"
	wait_until 60 nsw "$S0 removed, round $round" s0_removed
	blkpat verify $DEV 0 64 $((100 + round)) || die "pages drained off $S0, round $round"
done
show_status nsw
assert_eq "$(dmsetup status nsw | awk '{ print $(10 + $5 * 6) }')" 16 "server slots"
dm_remove nsw || die "remove"
log "ok"
