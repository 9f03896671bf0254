# Small requests go together: while two PUTs (two GETs) are out to a server,
# the next 4 KiB writes (reads) wait and leave in one message.  Against a
# server that takes 5 ms a request (tests/lib/misbehaving-server
# slow-replies), random 4 KiB I/O at QD16 costs at most one message per four
# pages, and every page reads back what was written (fio crc32c).  Fails on
# a module that sends a PUT for each page as soon as it comes (one message
# per page).
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/batch
PAGES=2048
SERVER=$(netram_server 0)

COMMON="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --size=100% --bs=4k --randseed=28"

server_ctl misbehave 0 slow-replies >/dev/null || die "server 0 with slow-replies"
dm_create batch "0 $((PAGES * 8)) nswap2l 2 $(netram_table_arg)" || die "create"

# assert_batched BEFORE PAGES WHAT: one message per 4 PAGES at most since the count BEFORE
assert_batched() {
	_msgs=$(($(sysfs_stat batch servers "$SERVER" requests) - $1))
	log "$3: $_msgs messages for $2 pages"
	assert_gt "$_msgs" 0 "$3: messages"
	assert_le "$((_msgs * 4))" "$2" "$3: messages for 4 pages at most one"
}

req=$(sysfs_stat batch servers "$SERVER" requests)
# shellcheck disable=SC2086
run_fio randwrite --name=w $COMMON --rw=randwrite --verify=crc32c --do_verify=0
assert_eq "$(sysfs_stat batch tiers netram writes)" $PAGES "pages written"
assert_batched "$req" $PAGES "4 KiB random writes, QD16"

req=$(sysfs_stat batch servers "$SERVER" requests)
# shellcheck disable=SC2086
run_fio randread --name=r $COMMON --rw=randread
assert_batched "$req" $PAGES "4 KiB random reads, QD16"

# shellcheck disable=SC2086
run_fio verify --name=w $COMMON --rw=randwrite --verify=crc32c --verify_only --verify_fatal=1
show_status batch
assert_eq "$(netram_stat batch 0 errors)" 0 "server errors"
assert_eq "$(netram_stat batch 0 state)" up "server state"
dm_remove batch || die "remove"
server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
