# Pages a server moved to another server (issue 31, NSWAP2L_CAP_MOVED),
# against tests/lib/misbehaving-server:
# 1. a server asks our namespace on a server id it made up (ASK_NAMESPACE:
#    NOENT) and says it moved pages there (MOVED: the client takes none and
#    keeps reading them from it); a tier that is not write-once
#    (protect=none, reliability=none) does not announce the capability;
# 2. a server moves every page it holds to the other server (the two
#    misbehaving servers share a store directory) and says so: the client
#    takes them, reads them back right from the other server, and sent or
#    received no page for it; keys it never held are refused;
# 3. mirror: each page has its other copy on the destination already, so
#    none is taken and every page still reads back right;
# 4. parity (groups of two runs and their parity over four servers): runs
#    move whole, onto a server holding no other run of their group, and the
#    group follows: once a third server dies, its pages are rebuilt from
#    the moved runs, read from where they are now.
# kernels: 6.1
# mem: 256M
# servers: 4 max=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1)
DEV=/dev/mapper/nsw
PAGES=2048                                   # 8 MiB: 32 PUTs, past the server's --after
N=1024                                       # pages written where no --after counts

misbehave() { server_ctl misbehave "$@" >/dev/null || die "misbehave $*"; }
table() { # SERVERS [OPTION...]
	_servers=$1
	shift
	echo "0 $((PAGES * 8)) nswap2l $((2 + $#)) netram=$_servers $KEY $*"
}
servers_stat() { sysfs_stat nsw servers "$1" "$2"; }
# bytes both ways on both connections
traffic() {
	echo $(($(netram_stat nsw 0 sent) + $(netram_stat nsw 0 received) +
		$(netram_stat nsw 1 sent) + $(netram_stat nsw 1 received)))
}
scan() { # COUNT SEED WHAT: every page reads back right
	_got=$(blkpat_scan_counts $DEV 0 "$1" "$2")
	assert_eq "$_got" "$1 0 0" "pages ok, unreadable and wrong ($3)"
}

# 1. a made-up destination: nothing is taken
misbehave 0 moved-refused
dm_create nsw "$(table "$S0" timeout=10)" || die "create (moved-refused)"
blkpat write $DEV 0 $PAGES 1 >/dev/null || die "write (moved-refused)"
answered() { [ "$(server_stat 0 moved_refused)" -gt 0 ] || [ "$(server_stat 0 moved_wrong)" -gt 0 ]; }
wait_until 60 nsw "no MOVED answered" answered
show_status nsw
log "server 0: ask_noent $(server_stat 0 ask_noent) moved_refused $(server_stat 0 moved_refused) wrong $(server_stat 0 moved_wrong)"
assert_ge "$(server_stat 0 moved_sessions)" 1 "sessions with NSWAP2L_CAP_MOVED"
assert_eq "$(server_stat 0 ask_noent)" 1 "ASK_NAMESPACE of a made-up server answered NOENT"
assert_eq "$(server_stat 0 moved_refused)" 64 "keys moved to a made-up server refused"
assert_eq "$(server_stat 0 moved_wrong)" 0 "answers breaking the rules"
assert_eq "$(netram_stat nsw 0 held)" $PAGES "pages held on server 0 after a refused MOVED"
assert_eq "$(servers_stat "$S0" moved_out)" 0 "moved_out of server 0"
scan $PAGES 1 "after a MOVED to a made-up server"
assert_eq "$(netram_stat nsw 0 reconnects)" 0 "reconnects (the messages broke nothing)"
dm_remove nsw || die "remove (moved-refused)"

# a tier that may PUT a key twice does not announce it: no MOVED comes
_sessions=$(server_stat 0 moved_sessions)
dm_create nsw "$(table "$S0" timeout=10 protect=none)" || die "create (protect=none)"
blkpat write $DEV 0 64 1 >/dev/null || die "write (protect=none)"
assert_ge "$(server_stat 0 sessions)" 2 "sessions on server 0"
assert_eq "$(server_stat 0 moved_sessions)" "$_sessions" "sessions with NSWAP2L_CAP_MOVED (protect=none)"
dm_remove nsw || die "remove (protect=none)"

# 2. server 0 moves its pages to server 1: the client moves none itself
misbehave 1 peer-store
misbehave 0 move-pages
dm_create nsw "$(table "$S0,$S1" timeout=10)" || die "create (move-pages)"
blkpat write $DEV 0 $N 2 >/dev/null || die "write (move-pages)"
before=$(traffic)
n0=$(netram_stat nsw 0 held)
log "written: server 0 holds $n0, server 1 $(netram_stat nsw 1 held), $before bytes so far"
emptied() { [ "$(netram_stat nsw 0 held)" = 0 ]; }
wait_until 60 nsw "server 0 still holds pages" emptied
show_status nsw
cat /sys/kernel/nswap2l/nsw/servers
moved=$(($(traffic) - before)) taken=$(server_stat 0 moved_taken)
log "moved $taken pages ($n0 after the writes) with $moved bytes on the client's connections"
assert_gt "$taken" 0 "pages moved"
assert_ge "$taken" "$n0" "keys the client took"
assert_eq "$(server_stat 0 moved_refused)" 0 "keys the client refused"
assert_eq "$(server_stat 0 moved_unheld_refused)" 16 "keys never held, refused"
assert_eq "$(server_stat 0 moved_wrong)" 0 "answers breaking the rules"
assert_ge "$(server_stat 0 ask_ok)" 1 "ASK_NAMESPACE answered with our namespace on server 1"
assert_eq "$(server_stat 1 peer_pages_in)" "$taken" "pages server 1 took from server 0"
assert_eq "$(netram_stat nsw 1 held)" $N "pages held on server 1"
assert_eq "$(servers_stat "$S0" moved_out)" "$taken" "moved_out of server 0"
assert_eq "$(servers_stat "$S1" moved_in)" "$taken" "moved_in of server 1"
# a page costs the client 8 bytes of MOVED and its answer: far below a page each
# (bounded by the pages the server moved: on a loaded machine it may have
# begun before the count after the writes)
assert_lt "$moved" $(((taken + 16) * 4096 / 16)) "bytes on the client's connections while $taken pages moved"
gets=$(server_stat 0 requests_get)
scan $N 2 "moved to server 1"
assert_eq "$(server_stat 0 requests_get)" "$gets" "GETs to server 0 after its pages moved"
dm_remove nsw || die "remove (move-pages)"

# 3. mirror: the other copy is on the destination already: none is taken
dm_create nsw "$(table "$S0,$S1" timeout=10 reliability=mirror)" || die "create (mirror)"
taken=$(server_stat 0 moved_taken) refused=$(server_stat 0 moved_refused)
blkpat write $DEV 0 $N 3 >/dev/null || die "write (mirror)"
all_refused() { [ "$(server_stat 0 moved_refused)" -ge $((refused + N)) ]; }
wait_until 60 nsw "server 0 did not move its mirror copies" all_refused
show_status nsw
assert_eq "$(server_stat 0 moved_taken)" "$taken" "mirror copies taken onto their other copy's server"
assert_eq "$(netram_stat nsw 0 held)" $N "copies held on server 0 (mirror)"
assert_eq "$(servers_stat "$S0" moved_out)" 0 "moved_out of server 0 (mirror)"
scan $N 3 "mirror, after a refused MOVED"
dm_remove nsw || die "remove (mirror)"

# 4. parity: server 0 moves its runs to a peer-store server P
misbehave 0 move-pages         # anew: all as free, each counting from zero
for i in 1 2 3; do
	misbehave $i peer-store
done
dm_create nsw "$(table "$S0,$S1,$(netram_server 2),$(netram_server 3)" timeout=10 \
	reliability=parity,group=2)" || die "create (parity)"
taken=$(server_stat 0 moved_taken) refused=$(server_stat 0 moved_refused)
blkpat write $DEV 0 $N 4 >/dev/null || die "write (parity)"
n0=$(netram_stat nsw 0 held)
asked() { [ $(($(server_stat 0 moved_taken) + $(server_stat 0 moved_refused) - taken - refused)) -ge "$n0" ]; }
wait_until 60 nsw "server 0 did not move its runs" asked
show_status nsw
cat /sys/kernel/nswap2l/nsw/servers
taken=$(($(server_stat 0 moved_taken) - taken))
p=0 q=0
for i in 1 2 3; do
	[ "$(server_stat $i peer_pages_in)" -gt 0 ] && p=$i
done
for i in 1 2 3; do
	[ $i != "$p" ] && q=$i
done
log "parity: server 0 held $n0, the client took $taken of its pages onto server $p; server $q dies"
assert_gt "$taken" 0 "server pages of parity runs taken"
assert_gt "$p" 0 "the server pages moved to"
assert_eq "$(servers_stat "$S0" moved_out)" "$taken" "moved_out of server 0 (parity)"
assert_eq "$(servers_stat "$(netram_server $p)" moved_in)" "$taken" "moved_in of server $p (parity)"
scan $N 4 "parity, runs moved"
server_ctl kill "$q" >/dev/null || die "kill server $q"
scan $N 4 "parity, runs moved, server $q dead"
show_status nsw
dm_remove nsw || die "remove (parity)"

log "ok"
