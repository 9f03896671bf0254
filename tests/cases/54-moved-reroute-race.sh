# A rewrite racing a MOVED (issue 31): a write to a page on a write-once
# tier that finds no new home at once (the release queue full, no room)
# goes to the worker expecting the page's old home; a server that moves
# the page to another meanwhile (MOVED) must not make it look like another
# write's new home, which the write would leave (write-once: "placed
# last wins"), completing OK with its data lost.  The module parameter
# fault_reroute_ms sends every rewrite that way and holds it 4 s.  Server
# 0 (tests/lib/misbehaving-server move-pages) holds every new page (server
# 1 offers little room: few-free) and moves them to server 1 once it has
# had no request for 1.5 s, so its MOVED comes while the rewrites are
# held: the client takes none of their pages (it waits for the rewrites,
# which give the pages new keys), and every page reads back as rewritten.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 2 max=64M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1)
DEV=/dev/mapper/nsw
N=64                                         # one blkpat chunk: one hold
FAULT=/sys/module/dm_nswap2l/parameters/fault_reroute_ms

server_ctl misbehave 1 peer-store few-free >/dev/null || die "misbehave 1 peer-store few-free"
server_ctl misbehave 0 move-pages >/dev/null || die "misbehave 0 move-pages"
dm_create nsw "0 $((N * 8)) nswap2l 3 netram=$S0,$S1 $KEY timeout=10" || die "create"
# first: server 0 moves its pages once (with its MOVED of keys never held,
# which would wait for the rewrites below and hold the next one back)
blkpat write $DEV 0 $N 1 >/dev/null || die "write"
assert_eq "$(netram_stat nsw 0 held)" $N "pages on server 0"
moved() { [ "$(server_stat 0 moved_taken)" -ge $N ]; }
wait_until 60 nsw "server 0 did not move its pages" moved
assert_eq "$(netram_stat nsw 0 held)" 0 "pages on server 0 after its first move"
# rewritten at once: new keys on server 0, which it moves 1.5 s after
blkpat write $DEV 0 $N 2 >/dev/null || die "rewrite"
echo 4000 >$FAULT || die "set fault_reroute_ms"
assert_eq "$(netram_stat nsw 0 held)" $N "pages on server 0 again"
start=$(date +%s)
blkpat write $DEV 0 $N 3 || die "rewrite held"
log "rewritten in $(($(date +%s) - start)) s"
echo 0 >$FAULT
show_status nsw
_got=$(blkpat_scan_counts $DEV 0 $N 3)
assert_eq "$_got" "$N 0 0" "pages ok, unreadable and wrong after rewrites racing a MOVED"
refused() { [ "$(server_stat 0 moved_refused)" -ge $N ]; }
wait_until 30 nsw "the MOVED of the pages being rewritten was not refused" refused
log "server 0: moved_taken $(server_stat 0 moved_taken) moved_refused $(server_stat 0 moved_refused)"
assert_eq "$(server_stat 0 moved_wrong)" 0 "answers breaking the rules"
dm_remove nsw || die "remove"
log "ok"
