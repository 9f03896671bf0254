# reliability=parity under swap: memcheck holds 1.5 times the guest's RAM in
# checksummed memory, swapped to groups of up to 3 pages and their parity
# over four servers, while prefetching moves pages to flash.  One server is
# killed (SIGKILL) in the middle: pages it held are rebuilt when swapped in
# and by recovery.  Then another server's machine wants memory back
# (EVICT) while recovery runs, and the groups that hold pages there move.
# Every sum comes out right, no page is lost, nothing stays on the dead
# server.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# 34, mirror under swap, runs on the other.
# kernels: 6.12
# mem: 128M
# servers: 4 reserve=32M
# disks: flash=192M disk=384M
# timeout: 1200

# timeout=10, not 3: under this load in an emulated guest a healthy server's
# reply can take more than 3 s (seen once in CI).  That server then counts as
# a second failure, and the pages whose redundancy was on both servers are
# lost, as they should be, failing the test.
load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 7 $(netram_table_arg | cut -d' ' -f1) $KEY flash=$FLASH disk=$DISK timeout=10 reliability=parity,group=3 prefetch=random,when=always,amount=written:20,interval=100" ||
	die "create failed"
MB=$(($(meminfo_kb MemTotal) * 3 / 2 / 1024))
log "memcheck: ${MB} MiB, a sequential pass and the final check"

mkswap $DEV >/dev/null || die "mkswap"
# else swap maps pages under writeback writable, and a page changed while
# written no longer matches its group's parity
assert_eq "$(queue_attr nsw stable_writes)" 1 "stable_writes"
swapon --discard $DEV || die "swapon"
memcheck -m $MB -p 1 -s 21 >/tmp/mc.out 2>&1 &
mc=$!
under_way() { [ "$(tier_stat nsw netram writes)" -gt 6000 ] && [ "$(pf_status nsw prefetched)" -gt 0 ]; }
wait_until 120 nsw "swapping to groups, prefetching" under_way
server_ctl kill 2 || die "kill server 2"
log "server 2 killed with $(tier_stat nsw netram used) pages in Network RAM, $(pf_status nsw prefetched) prefetched"
kill -0 $mc || die "memcheck ended before the server was killed"
wait_until 30 nsw "server 2 failed" servers_in_state nsw failed 2
# server 0's machine: 8 MiB under its 32 MiB reserve, while recovery may run
server_ctl set-memavailable 0 24M || die "set-memavailable 0"
memcheck_wait $mc /tmp/mc.out "memcheck failed on a parity device that lost a server"
show_status nsw
moved_back() { [ "$(netram_stat nsw 0 evict_moved)" -gt 0 ]; }
wait_until 60 nsw "server 0 got memory back" moved_back
wait_until 120 nsw "recovery done" nsw_recovered nsw
show_status nsw
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
assert_eq "$(netram_stat nsw 2 held)" 0 "pages left on the dead server"
assert_gt "$(pf_status nsw prefetched)" 0 "pages prefetched to flash"
swapoff $DEV || die "swapoff"
dm_remove nsw || die "remove"
log "ok"
