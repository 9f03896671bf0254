# Servers that break the protocol (tests/lib/misbehaving-server) never crash
# the client or turn into wrong data.  An EVICT and a CAPACITY right after
# authentication, while the table is still loading, crashed the client
# (NULL pointer in nswap2l_queue_move: the tier had no device yet).  Wrong replies of every kind and
# connections cut in the middle of a reply make the client drop the
# connection and send its requests again, with nothing lost; replies in any
# order are fine; a server that stalls in the middle of a reply or stops
# reading is failed by its timeout: the reads waiting for it end with I/O
# errors, never zeros or stale data, and its writes go elsewhere.  Pages
# changed on the way after the server's MAC are refused and read again.
# An EVICT answered right after a PUT is sent whole.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 2 max=64M
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=2048                                   # 8 MiB
TABLE="0 $((PAGES * 8)) nswap2l 4 netram=$(netram_server 0),$(netram_server 1) $KEY flash=$FLASH timeout=3"
# The misbehaving server (Python) takes ~6 ms a page under emulation: 8 MiB
# gives some 60 wrong messages (one per 20 good replies), each kind of
# Connection.WRONG several times over, and ends long after every mode's
# first misbehaviour (after 20 replies, tests/lib/misbehaving-server --after).
FIO="--name=mis --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k --rw=randwrite
	--verify=crc32c --verify_fatal=1"

scan() { # seed -> "ok eio bad"
	blkpat scan $DEV 0 $PAGES "$1" | sed -n 's/^blkpat: scan ok=\([0-9]*\) eio=\([0-9]*\) bad=\([0-9]*\)$/\1 \2 \3/p'
}

# with_server1 MODE...: server 1 misbehaves so; a fresh device over both
with_server1() {
	server_ctl misbehave 1 "$@" >/dev/null || die "misbehave 1 $*"
	dm_create nsw "$TABLE" || die "create with server 1 '$*'"
}

# 1. EVICT and CAPACITY before the first request, while the table is still
# loading (server 0 is slow to answer its handshake): it loads and works
server_ctl misbehave 0 slow-handshake >/dev/null || die "misbehave 0 slow-handshake"
with_server1 evict-first
blkpat write $DEV 0 $PAGES 1 || die "write with an evict-first server"
blkpat verify $DEV 0 $PAGES 1 || die "verify with an evict-first server"
assert_ge "$(netram_stat nsw 1 evict_asked)" 64 "pages server 1 asked back at once"
# A server takes no pages while its EVICT is answered, and multi-page bios
# can store all of them before that: pages written once it is answered must
# reach it.
show_status nsw
blkdiscard $DEV || die "blkdiscard"
blkpat write $DEV 0 $PAGES 1 || die "write after the EVICTs"
blkpat verify $DEV 0 $PAGES 1 || die "verify after the EVICTs"
assert_gt "$(netram_stat nsw 1 held)" 0 "pages on server 1"
show_status nsw
dm_remove nsw || die "remove"
server_ctl misbehave 0 none >/dev/null || die "nswapd back as server 0"

# 2. replies newest first: allowed, nothing to notice
with_server1 reorder
# shellcheck disable=SC2086
run_fio reorder $FIO --randseed=2 --do_verify=1
assert_eq "$(netram_stat nsw 1 reconnects)" 0 "reconnects to a server answering out of order"
assert_gt "$(netram_stat nsw 1 held)" 0 "pages on server 1"
dm_remove nsw || die "remove"

# 3. wrong messages of every kind: each breaks a connection, nothing is lost
with_server1 bad-replies
# shellcheck disable=SC2086
run_fio bad-replies $FIO --randseed=3 --do_verify=1
# shellcheck disable=SC2086
run_fio bad-replies-verify $FIO --randseed=3 --verify_only
show_status nsw
assert_ge "$(netram_stat nsw 1 reconnects)" 12 "connections broken by wrong messages"
assert_gt "$(netram_stat nsw 1 errors)" 0 "protocol errors counted on server 1"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
dm_remove nsw || die "remove"

# 4. connections cut in the middle of GET replies: reads are sent again
with_server1 drop-mid-reply
blkpat write $DEV 0 $PAGES 4 || die "write with a drop-mid-reply server"
blkpat verify $DEV 0 $PAGES 4 || die "reads across cut connections"
assert_gt "$(netram_stat nsw 1 reconnects)" 0 "connections cut by server 1"
dm_remove nsw || die "remove"

# 5. a reply that stops in the middle (once): the server fails, the reads
# waiting for it end with I/O errors, never wrong data; then it is back
with_server1 stall-mid-reply
blkpat write $DEV 0 $PAGES 5 || die "write with a stall-mid-reply server"
h1=$(netram_stat nsw 1 held)
set -- $(scan 5)
log "stalled mid-reply: ok=$1 eio=$2 bad=$3"
show_status nsw
assert_eq "$3" 0 "pages with wrong contents"
assert_eq "$(($1 + $2))" $PAGES "pages read or failed"
assert_gt "$2" 0 "pages failed with I/O errors (server 1 stalled)"
assert_le "$2" "$h1" "failed pages (only server 1's)"
dmesg | grep -q "server $(netram_server 1): request timed out" || die "no dmesg line for the stalled reply"
blkpat verify $DEV 0 $PAGES 5 || die "verify once server 1 is back"
dm_remove nsw || die "remove"

# 6. a server that stops reading (once): its writes go elsewhere when it
# fails, the device goes on, and every block verifies
dmesg_mark
with_server1 stop-reading
# shellcheck disable=SC2086
run_fio stop-reading $FIO --randseed=6 --do_verify=1
show_status nsw
assert_gt "$(nsw_rerouted nsw)" 0 "writes rerouted off the server that stopped reading"
dmesg_new | grep -q "server $(netram_server 1): request timed out" || die "no dmesg line for the server that stopped reading"
dm_remove nsw || die "remove"

# 7. GET replies with a bit flipped after their MAC (a relay on the path):
# the client refuses them (dmesg says so), reconnects and reads again
dmesg_mark
with_server1 tamper-in-transit
blkpat write $DEV 0 $PAGES 7 || die "write with a tamper-in-transit server"
# one reply changed per connection, after 20 good ones: three passes for all three
for pass in 1 2 3; do
	blkpat verify $DEV 0 $PAGES 7 || die "pages wrong after replies changed in transit (pass $pass)"
done
show_status nsw
dmesg_new | grep -q "server $(netram_server 1): message with a wrong MAC" ||
	die "no dmesg line for the changed replies: $(dmesg_new | tail -n 5)"
assert_ge "$(netram_stat nsw 1 reconnects)" 3 "reconnects after replies changed in transit"
dm_remove nsw || die "remove"

# 8. EVICTs of keys the client never stored, each right after a PUT reply:
# nothing moves, so the answer follows the client's last message, often a
# PUT (the answer's MAC once read that PUT's stale page list: NULL pointer)
with_server1 evict-after-puts
# two passes: some 24 multi-page PUTs each reach server 1
for pass in 1 2; do
	blkpat write $DEV 0 $PAGES 8 || die "write with an evict-after-puts server (pass $pass)"
done
blkpat verify $DEV 0 $PAGES 8 || die "verify with an evict-after-puts server"
show_status nsw
assert_eq "$(netram_stat nsw 1 evict_asked)" 32 "keys server 1 asked back between PUTs"
assert_eq "$(netram_stat nsw 1 reconnects)" 0 "reconnects to a server asking for keys it never got"
dm_remove nsw || die "remove"

server_ctl misbehave 1 none >/dev/null || die "nswapd back"
log "ok"
