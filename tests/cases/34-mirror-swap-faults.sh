# reliability=mirror under swap: two memcheck processes hold 1.5 times the
# guest's RAM in checksummed memory while prefetching moves pages to flash.
# One server is killed (SIGKILL) while they swap and pages are being
# prefetched, and then a second server's machine wants its memory back
# (EVICT) while recovery runs: every sum comes out right, no page is lost,
# and recovery ends with every Network RAM page on two servers again.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# 36, parity under swap, runs on the other.
# kernels: 6.1
# mem: 128M
# servers: 3 reserve=32M
# disks: flash=192M disk=384M
# timeout: 1200

# timeout=10, not 3: under this load in an emulated guest a healthy server's
# reply can take more than 3 s (seen once in CI).  That server then counts as
# a second failure, and the pages whose redundancy was on both servers are
# lost, as they should be, failing the test.
load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=$(dev_pages "$DISK")
dm_create nsw "0 $((PAGES * 8)) nswap2l 7 netram=$S0,$S1,$S2 $KEY flash=$FLASH disk=$DISK timeout=10 reliability=mirror prefetch=rr,when=always,amount=written:30,interval=100" ||
	die "create failed"
total_mb=$(($(meminfo_kb MemTotal) / 1024))
MB=$((total_mb * 3 / 2))
log "guest RAM ${total_mb} MiB, memcheck ${MB} MiB in two processes"

mkswap $DEV >/dev/null || die "mkswap"
swapon --discard $DEV || die "swapon"
memcheck -m $((MB / 2)) -p 2 -s 11 >/tmp/mc1.out 2>&1 &
p1=$!
memcheck -m $((MB / 2)) -p 2 -s 12 >/tmp/mc2.out 2>&1 &
p2=$!
swapping() { [ "$(tier_stat nsw netram writes)" -gt 5000 ] && [ "$(pf_status nsw prefetched)" -gt 0 ]; }
wait_until 120 nsw "swapping to Network RAM, prefetching under way" swapping
server_ctl kill 1 || die "kill server 1"
log "server 1 killed: $(pf_status nsw prefetched) pages prefetched so far"
kill -0 $p1 && kill -0 $p2 || die "memcheck ended before the server was killed"
failed1() { [ "$(netram_stat nsw 1 state)" = failed ]; }
wait_until 30 nsw "server 1 failed" failed1
# server 2's machine: 8 MiB under its 32 MiB reserve: it asks 2048 pages back
server_ctl set-memavailable 2 24M || die "set-memavailable 2"
wait $p1 || { cat /tmp/mc1.out; die "memcheck (1st process) failed on a mirrored device that lost a server"; }
wait $p2 || { cat /tmp/mc2.out; die "memcheck (2nd process) failed on a mirrored device that lost a server"; }
show_status nsw
asked_back() { [ "$(netram_stat nsw 2 evict_moved)" -gt 0 ]; }
wait_until 60 nsw "server 2 got pages back" asked_back
wait_until 120 nsw "recovery done" nsw_recovered nsw
show_status nsw
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
assert_eq "$(netram_stat nsw 1 held)" 0 "copies left on the dead server"
held=$(($(netram_stat nsw 0 held) + $(netram_stat nsw 2 held)))
assert_eq "$held" $((2 * $(tier_stat nsw netram used))) "two copies of every Network RAM page"
assert_gt "$(pf_status nsw prefetched)" 0 "pages prefetched to flash"
swapoff $DEV || die "swapoff"
dm_remove nsw || die "remove"
log "ok"
