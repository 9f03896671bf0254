# Mirror recovery by server copy (NSWAP2L_CAP_COPY): four nswapd, each the
# others' --peer.  A reliability=mirror device loses a server (SIGKILL):
# each surviving copy's server copies the page to the page's new server
# itself (COPY), so every page verifies, none is lost, the survivors' stats
# count the pages they copied out (about the copies lost), dmesg says the
# recovery went by server copy, and the client sent less than a tenth of
# the pages recovered.
# 1b. Server 2 comes back (a peer again) and server 3 is killed under
# foreground reads with recovery_rate's minimum at 1 page/s: pages the
# servers copy count against the maximum only, from the first batch on
# (their relabels are asked before the batch is paced), so the recovery
# takes well under a second (330 ms under TCG).  Counted a batch late, the
# first batch's pages held the second one until they left the rate's
# window, two seconds; counted against the minimum, minutes.
# 2. Server 2 comes back with a peer key of its own and server 0 is
# killed: a COPY from or to server 2 stores nothing (NOENT), the rest goes
# the client's way, and every page still verifies, none lost.
# A module without COPY reads and writes every page itself: step 1 fails.
# kernels: 6.12
# mem: 256M
# servers: 4 peers
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2) S3=$(netram_server 3)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB, two copies over four servers
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2,$S3 $KEY timeout=4 reliability=mirror" ||
	die "create failed"
sent_sum() { echo $(($(netram_stat nsw 0 sent) + $(netram_stat nsw 1 sent) + $(netram_stat nsw 2 sent) + $(netram_stat nsw 3 sent))); }
copied_out() { # servers...: their pages_copied_out, summed
	_n=0; for _i in "$@"; do _n=$((_n + $(server_stat "$_i" pages_copied_out))); done; echo $_n
}
recovered() { [ "$(nsw_recovery nsw recovering)" = 0 ] && [ "$(nsw_recovery nsw copies_lost)" = 0 ]; }
peers_connected() { # every server reports its three peers connected
	for _i in 0 1 2 3; do
		[ "$(server_ctl stats "$_i" | grep -o '"connected": *1' | wc -l)" -ge 3 ] || return 1
	done
}
wait_until 60 nsw "peers connected" peers_connected

# 1. server 2 killed: the survivors copy its pages' lost copies themselves
blkpat write $DEV 0 $PAGES 5 || die "blkpat write"
lost=$(netram_stat nsw 2 held)
assert_gt "$lost" 1000 "copies on server 2"
sent=$(sent_sum)
dmesg_mark
server_ctl kill 2 || die "kill server 2"
wait_until 30 nsw "server 2 failed" servers_in_state nsw failed 2
wait_until 120 nsw "recovery done" recovered
show_status nsw
line=$(dmesg_new | grep "recovery done in") || die "no dmesg line for the recovery: $(dmesg_new)"
log "$line"
by_copy=$(echo "$line" | sed -n 's/.* \([0-9]*\) of them by server copy.*/\1/p')
assert_ge "${by_copy:-0}" $((lost * 9 / 10)) "pages recovered by server copy (dmesg)"
out=$(copied_out 0 1 3)
log "$lost copies lost, $out pages copied out by the survivors, client sent $(($(sent_sum) - sent)) bytes"
assert_ge "$out" $((lost * 9 / 10)) "pages the survivors copied out"
assert_le "$out" $((lost + lost / 10)) "pages the survivors copied out"
assert_lt $(($(sent_sum) - sent)) $((lost * 4096 / 10)) "bytes the client sent for the recovery"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
assert_eq "$(netram_stat nsw 2 held)" 0 "copies left on the dead server"
blkpat verify $DEV 0 $PAGES 5 || die "blkpat verify after the recovery by server copy"

# 1b. server 3 killed under foreground reads, recovery_rate's minimum 1
server_ctl start 2 >/dev/null || die "restart server 2"
wait_until 30 nsw "server 2 up" servers_in_state nsw up 0 1 2 3
wait_until 60 nsw "peers connected" peers_connected
blkdiscard $DEV || die "blkdiscard"
blkpat write $DEV 0 $PAGES 7 || die "blkpat write on four servers"
lost=$(netram_stat nsw 3 held)
assert_gt "$lost" 1000 "copies on server 3"
dmsetup message nsw 0 recovery_rate 1 1048576 || die "recovery_rate 1 1048576"
fio --name=fg --filename=$DEV --rw=randread --ioengine=libaio --iodepth=4 --bs=4k --direct=1 \
	--time_based --runtime=400 --output=/dev/null &
fg=$!
sleep 1
dmesg_mark
server_ctl kill 3 || die "kill server 3"
wait_until 30 nsw "server 3 failed" servers_in_state nsw failed 3
wait_until 400 nsw "recovery done" recovered
kill -0 $fg || die "the foreground reads ended before the recovery did"
kill $fg
wait $fg || true	# fio ends on the signal
line=$(dmesg_new | grep "recovery done in") || die "no dmesg line for the recovery: $(dmesg_new)"
log "$line"
by_copy=$(echo "$line" | sed -n 's/.* \([0-9]*\) of them by server copy.*/\1/p')
assert_ge "${by_copy:-0}" $((lost * 9 / 10)) "pages recovered by server copy under foreground reads"
assert_lt "$(nsw_recovery nsw recovery_ms)" 1500 \
	"recovery time (ms) of $lost pages copied by servers under foreground reads, minimum 1 page/s"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
blkpat verify $DEV 0 $PAGES 7 || die "blkpat verify after the recovery under foreground reads"
dmsetup message nsw 0 recovery_rate 500 1048576 || die "recovery_rate 500 1048576"
server_ctl start 3 >/dev/null || die "restart server 3"

# 2. server 2 back with a peer key of its own: its peers refuse it, so a
#    COPY from or to it stores nothing, and the client copies the rest
server_ctl wrong-peer-key 2 >/dev/null || die "wrong-peer-key 2"
wait_until 30 nsw "server 2 up" servers_in_state nsw up 0 1 2 3
blkdiscard $DEV || die "blkdiscard"
blkpat write $DEV 0 $PAGES 6 || die "blkpat write on four servers again"
assert_gt "$(netram_stat nsw 2 held)" 0 "copies on server 2"
dmesg_mark
server_ctl kill 0 || die "kill server 0"
wait_until 30 nsw "server 0 failed" servers_in_state nsw failed 0
wait_until 120 nsw "recovery done" recovered
show_status nsw
line=$(dmesg_new | grep "recovery done in" | tail -n 1) || die "no dmesg line for the recovery: $(dmesg_new)"
log "$line"
set -- $(echo "$line" | sed -n 's/.*: \([0-9]*\) pages copied again (.*, \([0-9]*\) of them by server copy.*/\1 \2/p')
[ $# = 2 ] || die "recovery line without its counts: $line"
assert_lt "$2" "$1" "pages copied by servers, of those copied again (server 2 refused)"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost"
blkpat verify $DEV 0 $PAGES 6 || die "blkpat verify after a recovery partly by the client"
dm_remove nsw || die "remove"
log "ok"
