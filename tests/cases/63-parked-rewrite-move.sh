# A rewrite parked out of the in-flight count racing the page mover: a
# write the worker gives a new home waits for room in the release queue
# when it is full, and meanwhile leaves the in-flight count (the discard
# worker that makes room waits for that count).  The page mover waits for
# it too, so it may move the page meanwhile (a drain, recovery, eviction,
# the parity cleaner) to a new home on Network RAM, a write-once tier.
# The write must replace that home, not take it for a later write's and
# drop itself, completing OK with its data lost: then the page reads back
# in its older version (seen once in eight runs of case 36).
# fault_reroute_ms sends every rewrite to the worker, fault_park_ms parks it
# there for 8 s as a full release queue would, and server 0 is drained
# (remove_server) meanwhile.
# kernels: 6.12
# servers: 2
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1)
DEV=/dev/mapper/nsw
N=64                                         # one blkpat chunk: one park
P=/sys/module/dm_nswap2l/parameters

dm_create nsw "0 $((N * 8)) nswap2l 3 netram=$S0,$S1 $KEY timeout=10" || die "create"
blkpat write $DEV 0 $N 1 >/dev/null || die "write"
ON0=$(netram_stat nsw 0 held)
assert_gt "$ON0" 0 "pages on server 0"
echo 1 >$P/fault_reroute_ms && echo 8000 >$P/fault_park_ms || die "set the faults"
blkpat write $DEV 0 $N 2 >/tmp/rewrite.out 2>&1 &
rewrite=$!
sleep 1
dmsetup message nsw 0 remove_server "$S0" || die "remove_server $S0"
drained() { dmesg | grep -q "server $S0 drained"; }
wait_until 30 nsw "server 0 drained" drained
kill -0 $rewrite 2>/dev/null || die "the rewrite ended before server 0 was drained: nothing raced"
log "server 0 drained ($ON0 pages moved) while the rewrite was parked"
wait $rewrite || die "rewrite: $(cat /tmp/rewrite.out)"
echo 0 >$P/fault_park_ms && echo 0 >$P/fault_reroute_ms || die "clear the faults"
show_status nsw
assert_eq "$(blkpat_scan_counts $DEV 0 $N 2)" "$N 0 0" \
	"pages ok, unreadable and wrong after rewrites parked while their pages moved"
dm_remove nsw || die "remove"
log "ok"
