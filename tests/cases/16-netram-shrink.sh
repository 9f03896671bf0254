# A server's machine needs its memory back while fio writes and verifies:
# the server asks for pages back (EVICT), the target moves them to flash (the
# other server has no room left either), the server's holdings shrink, and
# no data is lost.
# Memory pressure is simulated through nswapd's --memavailable-file (the
# harness's set-memavailable); tests/host covers a real cgroup limit.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 2 max=24M reserve=32M
# disks: flash=64M disk=64M
# timeout: 1200

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/nsw
PAGES=8192                                  # 32 MiB over two 24 MiB servers
# protect=none: on a protected tier every overwrite frees its page's key and
# takes a new one, which would mix the pages fio's rewrites free or place on
# server 0 into the count of those the eviction moved
dm_create nsw "0 $((PAGES * 8)) nswap2l 5 $(netram_table_arg) flash=$FLASH disk=$DISK protect=none" ||
	die "create failed"
COMMON="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --verify_fatal=1 --bs=4k"

# first half: written once, checked at the end; second half: fio under way
# shellcheck disable=SC2086
run_fio fill --name=fill $COMMON --offset=0 --size=16M --randseed=31 --rw=randwrite --do_verify=0
blkpat write $DEV 4096 4096 32 || die "blkpat write"
show_status nsw
h0=$(netram_stat nsw 0 held)
assert_eq "$(tier_stat nsw netram used)" $PAGES "pages in Network RAM before the shrink"
assert_gt "$h0" 2048 "pages on server 0"

# shellcheck disable=SC2086
fio --name=busy $COMMON --offset=16M --size=12M --randseed=33 --rw=randwrite --do_verify=1 \
	--output=/tmp/busy.out &
busy=$!
sleep 2
# server 1: exactly the 32M reserve available, so it takes no new pages
server_ctl set-memavailable 1 32M || die "set-memavailable 1"
# nswapd samples memory once a tick and the target learns it from the next
# reply: until the target sees server 1 full, moved pages could still go there
server1_full() { [ "$(netram_stat nsw 1 free)" -eq 0 ]; }
wait_until 30 nsw "the target sees server 1 full" server1_full
# server 0: 32M reserve, 24M available: it must give back 8 MiB = 2048 pages
server_ctl set-memavailable 0 24M || die "set-memavailable 0"
server0_got_pages_back() { [ "$(netram_stat nsw 0 evict_moved)" -ge 1024 ]; }
wait_until 120 nsw "server 0 got 1024 pages back" server0_got_pages_back
wait $busy || { cat /tmp/busy.out; die "fio write+verify failed during the shrink"; }
grep -E 'READ:|WRITE:' /tmp/busy.out
# The file stands still where a machine's MemAvailable would rise with the
# pages given back, so server 0 would go on asking every second: give it its
# memory back, and let the round under way end before counting.  A move has a
# batch on both tiers for a moment; a page counted twice for good does not settle.
server_ctl set-memavailable 0 40M || die "set-memavailable 0 40M"
server0_settled() {
	[ "$(server_stat 0 evict_pending)" = 0 ] && [ "$(nsw_total nsw used)" -eq $PAGES ]
}
wait_until 60 nsw "server 0 has no eviction under way and the tiers hold $PAGES pages" server0_settled
show_status nsw

asked=$(netram_stat nsw 0 evict_asked)
moved=$(netram_stat nsw 0 evict_moved)
log "server 0: held $h0 before, $(netram_stat nsw 0 held) after; asked back $asked, moved $moved"
assert_ge "$asked" 2048 "pages server 0 asked back"
assert_ge "$(nsw_moved nsw)" "$moved" "pages moved by the mover"
assert_le "$(netram_stat nsw 0 held)" $((h0 - 1024)) "pages left on server 0"
assert_ge "$(tier_stat nsw flash used)" "$moved" "pages on flash (where the moved pages had to go)"
assert_eq "$(nsw_total nsw used)" $PAGES "pages stored, all tiers"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
json=$(server_ctl stats 0) || die "stats 0"
log "server 0 stats: $json"

# every page is still right
# shellcheck disable=SC2086
run_fio fill-verify --name=fill $COMMON --offset=0 --size=16M --randseed=31 --rw=randwrite --verify_only
# shellcheck disable=SC2086
run_fio busy-verify --name=busy $COMMON --offset=16M --size=12M --randseed=33 --rw=randwrite --verify_only
blkpat verify $DEV 7168 1024 32 || die "pages fio did not touch lost their contents"
dm_remove nsw || die "remove"
log "ok"
