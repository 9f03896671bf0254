# reliability=mirror with protect= encrypts a write's pages once for both
# copies (issue 32: "a mirrored write encrypts once"): the same ciphertext
# and seal go to both servers, the key being the AAD on each.
#  a. Mixed-size random writes (fio, QD16): the servers' own seals
#     (`sealed` in sysfs) are a small share of the pages written, and both
#     servers receive every page.
#  b. Memory short (fault_bounce_reserve_only: the page allocator fails
#     for bounce pages): each server's sender seals its own copy, as
#     before, and the writes go on.
#  c. Every page verifies, spread over both copies; then with server 0
#     killed, every page verifies from server 1's copy alone, none refused.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 2
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB: two regions of 8 MiB
HALF=$((PAGES / 2))
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$(netram_server 0),$(netram_server 1) $KEY timeout=8 reliability=mirror" ||
	die "create failed"
servers_stat() { sysfs_stat nsw servers "$1" "$2"; }
sealed_sum() { echo $(($(servers_stat "$(netram_server 0)" sealed) + $(servers_stat "$(netram_server 1)" sealed))); }
puts_sum() { echo $(($(server_stat 0 pages_put) + $(server_stat 1 pages_put))); }
# each region's pages written once each, in random order, 4-64 KiB at a time
region() { echo "--name=$1 --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1
	--bsrange=4k-64k --bs_unaligned=0 --offset=$2 --size=$((HALF * 4))k --rw=randwrite
	--randseed=59 --verify=crc32c --verify_fatal=1"; }

# a. sealed once
# shellcheck disable=SC2046
run_fio write-a $(region a 0) --do_verify=0
sealed=$(sealed_sum) puts=$(puts_sum)
log "region a: $HALF pages written, $puts pages PUT on the servers, $sealed sealed by a server's sender alone"
assert_ge "$puts" $((2 * HALF)) "pages the two servers received"
assert_le $((10 * sealed)) "$HALF" "pages sealed per server, x10 (against the pages written)"

# b. memory short: each sender seals its own copy
FAULT=/sys/module/dm_nswap2l/parameters/fault_bounce_reserve_only
echo 1 >$FAULT || die "set fault_bounce_reserve_only"
# shellcheck disable=SC2046
run_fio write-b $(region b $((HALF * 4))k) --do_verify=0
echo 0 >$FAULT
more=$(($(sealed_sum) - sealed))
log "region b, the page allocator failing: $more pages sealed by a server's sender alone"
assert_ge "$more" $((2 * HALF)) "pages each server sealed itself with memory short"

# c. every copy checks
# shellcheck disable=SC2046
run_fio verify-a $(region a 0) --verify_only
# shellcheck disable=SC2046
run_fio verify-b $(region b $((HALF * 4))k) --verify_only
server_ctl kill 0 || die "kill server 0"
failed0() { [ "$(netram_stat nsw 0 state)" = failed ]; }
wait_until 30 nsw "server 0 failed" failed0
# shellcheck disable=SC2046
run_fio verify-a-on-1 $(region a 0) --verify_only
# shellcheck disable=SC2046
run_fio verify-b-on-1 $(region b $((HALF * 4))k) --verify_only
show_status nsw
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost with one server dead"
assert_eq "$(nsw_recovery nsw refused)" 0 "pages refused by their seals"
dm_remove nsw || die "remove"
log "ok"
