# reliability=mirror uses its two copies for reads, and recovery writes
# only the copy that was lost (issue 32).
#  a. Random reads (fio verifying every block, QD16) spread over the
#     servers.  One server stopped (SIGSTOP, well within timeout=) in the
#     middle: the others go on answering at least a third of the GETs they
#     did before (none once every read waits on the stopped one), and it
#     gets fewer than they do (only the reads sent before it looked stalled
#     wait for it); every read verifies.
#  b. A server killed: recovery writes one new copy per lost one (the
#     pages the others receive), under the same key, every page verifies
#     (sealed: the new copies check on their new server), held counts and
#     copies lost are right.  Then another server killed loses nothing.
# kernels: 6.12
# mem: 256M
# servers: 3
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=4096                                  # 16 MiB
dm_create nsw "0 $((PAGES * 8)) nswap2l 5 netram=$(netram_server 0),$(netram_server 1),$(netram_server 2) $KEY flash=$FLASH timeout=8 reliability=mirror" ||
	die "create failed"
gets() { server_stat "$1" requests_get; }
puts() { server_stat "$1" pages_put; }
held_sum() { echo $(($(netram_stat nsw 0 held) + $(netram_stat nsw 1 held) + $(netram_stat nsw 2 held))); }
FIO="--name=m --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k
	--size=$((PAGES * 4))k --rw=randwrite --randseed=56 --verify=crc32c --verify_fatal=1"
# shellcheck disable=SC2086
run_fio write $FIO --do_verify=0
assert_eq "$(held_sum)" $((2 * PAGES)) "copies on the servers"

# a. reads spread, and avoid a stopped server
g0=$(gets 0) g1=$(gets 1) g2=$(gets 2)
# shellcheck disable=SC2086
run_fio read $FIO --verify_only
d0=$(($(gets 0) - g0)) d1=$(($(gets 1) - g1)) d2=$(($(gets 2) - g2))
log "GETs per server over a verifying read of every page: $d0 $d1 $d2"
for d in $d0 $d1 $d2; do
	assert_gt $((d * 5)) $((d0 + d1 + d2)) "a server's share of the GETs, x5"
done

# four readers at QD4, each verifying every page in its own random order
# again and again: one that ends a pass waits for its reads on the stopped
# server, the others go on
READ="--filename=$DEV --ioengine=libaio --iodepth=4 --direct=1 --bs=4k --size=$((PAGES * 4))k
	--rw=randread --verify=crc32c --verify_fatal=1 --eta=never"
rm -f /tmp/reads-done
READERS=
for j in 1 2 3 4; do
	# shellcheck disable=SC2086
	( while [ ! -e /tmp/reads-done ]; do fio --name=r$j $READ --randseed=$j --output=/tmp/fio-r$j.log ||
		{ cat /tmp/fio-r$j.log; exit 1; }; done ) &
	READERS="$READERS $!"
	sleep 0.3
done
sleep 1
o0=$(gets 0) o2=$(gets 2)
sleep 2
before=$(($(gets 0) - o0 + $(gets 2) - o2))
s1=$(gets 1)
server_ctl stop 1 || die "stop server 1"
o0=$(gets 0) o2=$(gets 2)
sleep 2
during=$(($(gets 0) - o0 + $(gets 2) - o2))
server_ctl cont 1 || die "cont server 1"
sleep 1
stopped=$(($(gets 1) - s1))
touch /tmp/reads-done
for pid in $READERS; do wait "$pid" || die "a read failed its verification across the stop"; done
log "GETs of servers 0 and 2: $before in 2 s before server 1 stopped, $during in 2 s while stopped; server 1 took $stopped from its stop to 1 s after"
assert_eq "$(netram_stat nsw 1 state)" up "server 1 (stopped for less than the timeout)"
assert_ge $((3 * during)) "$before" "GETs the others answered while server 1 was stopped, x3 (against before)"
assert_lt "$stopped" "$during" "GETs server 1 took, against the others' while it was stopped"

# b. a server killed: one copy written per copy lost
lost=$(netram_stat nsw 2 held)
p0=$(puts 0) p1=$(puts 1)
server_ctl kill 2 || die "kill server 2"
# failed first: each look is its own dmsetup status, and the other two must
# be read after the failure is counted, not before it
recovered() { [ "$(netram_stat nsw 2 state)" = failed ] &&
	[ "$(nsw_recovery nsw recovering)" = 0 ] && [ "$(nsw_recovery nsw copies_lost)" = 0 ]; }
wait_until 120 nsw "recovery done" recovered
show_status nsw
written=$(($(puts 0) - p0 + $(puts 1) - p1))
log "recovery: $lost copies lost, $written pages written to the other servers"
assert_ge "$written" "$lost" "pages written by recovery"
assert_le "$((4 * written))" "$((5 * lost))" "pages written by recovery, x4 (against the copies lost x5)"
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost with one server dead"
assert_eq "$(netram_stat nsw 2 held)" 0 "copies left on the dead server"
assert_eq "$(tier_stat nsw netram used)" $PAGES "pages in Network RAM"
assert_eq "$(held_sum)" $((2 * PAGES)) "two copies of every page"
# shellcheck disable=SC2086
run_fio verify-recovered $FIO --verify_only

# every page has a copy on each of the two left: either may go
server_ctl kill 0 || die "kill server 0"
failed0() { [ "$(netram_stat nsw 0 state)" = failed ]; }
wait_until 30 nsw "server 0 failed" failed0
# shellcheck disable=SC2086
run_fio verify-one-left $FIO --verify_only
show_status nsw
assert_eq "$(nsw_recovery nsw pages_lost)" 0 "pages lost with two servers dead, one after the other"
assert_eq "$(nsw_recovery nsw refused)" 0 "pages refused by their seals"
dm_remove nsw || die "remove"
log "ok"
