# A donor leaves (SIGTERM: `systemctl stop nswapd`, here `server_ctl term 0`)
# while it holds pages of a device with reliability=none: nswapd stops
# taking pages and asks for all of them back (EVICT), the device moves them
# to the other server, nswapd exits once it holds none, and no page is lost.
# Reads go on during the leave; writes go to the server that stays.  An
# nswapd that drops its pages at SIGTERM fails this case (EIO).  nswapd's
# default deadline (30 s + 1 s per 2000 pages) holds: under TCG the 2048
# pages moved in about 4 s.
# kernels: 6.1
# mem: 256M
# servers: 2
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB over both servers
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 $(netram_table_arg) reliability=none" ||
	die "create failed"
assert_eq "$(nsw_recovery nsw reliability)" none "reliability"

blkpat write $DEV 0 $PAGES 49 || die "blkpat write"
show_status nsw
h0=$(netram_stat nsw 0 held) h1=$(netram_stat nsw 1 held)
log "before the leave: server 0 holds $h0 pages, server 1 $h1"
assert_eq "$((h0 + h1))" $PAGES "pages on the servers"
assert_gt "$h0" 512 "pages on server 0"
assert_gt "$h1" 512 "pages on server 1"
assert_eq "$(server_stat 0 held_pages)" "$h0" "pages nswapd 0 holds"

# reads of every page while server 0 leaves
start=$(uptime_cs)
server_ctl term 0 >/tmp/term.out 2>&1 &
term=$!
blkpat verify $DEV 0 $PAGES 49 || die "pages read wrong during the leave"
wait $term || die "server_ctl term 0: $(cat /tmp/term.out)"
elapsed_cs=$(($(uptime_cs) - start))
log "server_ctl term 0: $(cat /tmp/term.out) ($((elapsed_cs / 100)).$((elapsed_cs % 100)) s)"
grep -q "exit status 0; leave over (every page given back) after [0-9]* s: $h0 of $h0 pages given back, 0 pages of 0 namespaces left" /tmp/term.out ||
	die "nswapd 0 did not give every page back: $(cat /tmp/term.out)"
assert_eq "$(server_alive 0 && echo yes || echo no)" no "server 0 running after its leave"
show_status nsw

# every page is on server 1 and reads right; server 0 holds nothing
assert_eq "$(netram_stat nsw 0 held)" 0 "pages the device has on server 0"
assert_eq "$(sysfs_stat nsw servers "$(netram_server 0)" held)" 0 "server 0's pages in sysfs"
assert_eq "$(netram_stat nsw 1 held)" $PAGES "pages the device has on server 1"
assert_eq "$(server_stat 1 held_pages)" $PAGES "pages nswapd 1 holds"
assert_ge "$(netram_stat nsw 0 evict_moved)" "$h0" "pages moved off server 0"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
set -- $(blkpat_scan_counts $DEV 0 $PAGES 49)
assert_eq "$*" "$PAGES 0 0" "scan after the leave (ok eio bad)"
# the device goes on with the server that stays
blkpat write $DEV 0 256 50 || die "writes after the leave"
blkpat verify $DEV 0 256 50 || die "pages written after the leave"
blkpat verify $DEV 256 $((PAGES - 256)) 49 || die "pages after the rewrite"
dm_remove nsw || die "remove"
log "ok"
