# A server dies with no redundancy: reads of its pages fail with EIO (after
# the timeout), never zeros or stale data; the other server's pages still
# read; new writes of the lost pages go elsewhere.  A server that comes back
# empty (restarted) must not turn into zeros either.  A server killed while
# a writer goes on loses only the pages it had stored.
# kernels: 6.12
# mem: 256M
# servers: 2
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=4096
# protect=none: a protected tier never overwrites a page in place (each
# write takes a new key), and the rerouting of in-place overwrites to a
# server that is still up is part of what this case checks
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$(netram_server 0),$(netram_server 1) $KEY timeout=5 protect=none" ||
	die "create failed"

scan() { blkpat_scan_counts $DEV 0 $PAGES "$1"; } # seed -> "ok eio bad"

# 1. server 1 restarts empty: its pages are gone, reads must fail
blkpat write $DEV 0 $PAGES 7 || die "write seed 7"
h0=$(netram_stat nsw 0 held) h1=$(netram_stat nsw 1 held)
log "held: server 0 $h0, server 1 $h1"
assert_gt "$h0" 0 "pages on server 0"
assert_gt "$h1" 0 "pages on server 1"
server_ctl kill 1 || die "kill server 1"
server_ctl start 1 || die "restart server 1"
set -- $(scan 7)
log "after restart: ok=$1 eio=$2 bad=$3"
show_status nsw
assert_eq "$3" 0 "pages with wrong contents"
assert_eq "$1" "$h0" "readable pages (those on server 0)"
assert_eq "$2" "$h1" "unreadable pages (those lost on server 1)"
assert_ge "$(netram_stat nsw 1 reconnects)" 1 "reconnects to server 1"
counted() { [ "$(nsw_recovery nsw recovering)" = 0 ] && [ "$(nsw_recovery nsw pages_lost)" != 0 ]; }
wait_until 30 nsw "lost pages counted" counted
assert_eq "$(nsw_recovery nsw pages_lost)" "$h1" "pages lost in status"
assert_eq "$(nsw_recovery nsw copies_lost)" "$h1" "copies lost in status"
dmesg | grep -q "server $(netram_server 1) came back without our namespace" ||
	die "no dmesg line about the server that came back empty"

# 2. rewrite everything (server 1 is back), then kill it for good
blkpat write $DEV 0 $PAGES 8 || die "write seed 8"
blkpat verify $DEV 0 $PAGES 8 || die "verify seed 8"
assert_eq "$(nsw_recovery nsw copies_lost)" 0 "copies lost after the rewrite"
h0=$(netram_stat nsw 0 held) h1=$(netram_stat nsw 1 held)
assert_gt "$h1" 0 "pages on server 1 after rewrite"
server_ctl kill 1 || die "kill server 1"
t0=$(date +%s)
set -- $(scan 8)
t1=$(date +%s)
log "after kill: ok=$1 eio=$2 bad=$3 in $((t1 - t0)) s"
show_status nsw
assert_eq "$3" 0 "pages with wrong contents"
assert_eq "$1" "$h0" "readable pages (those on server 0)"
assert_eq "$2" "$h1" "unreadable pages (those on the dead server)"
assert_ge "$((t1 - t0))" 4 "seconds before the dead server's pages fail (timeout=5)"
assert_eq "$(netram_stat nsw 1 state)" failed "state of the dead server"
dmesg | grep -q "server $(netram_server 1).*failing its requests" || die "no dmesg line about the dead server"

# 3. writes of the lost pages go to the live server
blkpat write $DEV 0 $PAGES 9 || die "write seed 9 with server 1 dead"
blkpat verify $DEV 0 $PAGES 9 || die "verify seed 9"
assert_gt "$(nsw_rerouted nsw)" 0 "rerouted writes"
assert_eq "$(netram_stat nsw 0 held)" $PAGES "pages on server 0"
assert_eq "$(netram_stat nsw 1 held)" 0 "pages on server 1"

# 4. killed while a writer goes on: only the pages it had stored fail
server_ctl start 1 || die "restart server 1"
wait_until 30 nsw "server 1 up" servers_in_state nsw up 1
blkdiscard $DEV || die "blkdiscard"
# server 1 the most free, so that the first half goes there (a tie goes to
# server 0, and both report the same free memory)
server_ctl set-memavailable 0 512M || die "set-memavailable 0"
less_free0() { [ "$(netram_stat nsw 0 free)" -lt "$(netram_stat nsw 1 free)" ]; }
wait_until 30 nsw "server 0 reports less free memory" less_free0
blkpat write $DEV 0 $((PAGES / 2)) 10 || die "write the first half"
server_ctl kill 1 || die "kill server 1"
blkpat write $DEV $((PAGES / 2)) $((PAGES / 2)) 10 || die "write the second half with server 1 dead"
h1=$(netram_stat nsw 1 held)
set -- $(scan 10)
log "killed between two writes: ok=$1 eio=$2 bad=$3, server 1 held $h1"
assert_eq "$3" 0 "pages with wrong contents"
assert_gt "$h1" 0 "pages stored on server 1 before it died"
assert_eq "$2" "$h1" "unreadable pages (those stored on the dead server)"
assert_eq "$(($1 + $2))" $PAGES "pages scanned"
dm_remove nsw || die "remove"
log "ok"
