# A server stops answering (SIGSTOP: it neither reads nor writes) while
# four writers queue 4 KiB random writes at QD32 each, timeout=3.  It takes
# one page per message (tests/lib/misbehaving-server one-page), so writes
# also wait for a free message slot.  The watchdog fails the server in time, its queued
# writes go elsewhere from the worker (once each reroute picked the same
# server again, still "up", and nested on the completing stack until the
# guard page was hit), it takes no new pages while failed, and after
# SIGCONT it comes back.  fio then verifies every block: no acknowledged
# write is lost.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 2 max=64M
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=24576                                  # 96 MiB
server_ctl misbehave 1 one-page >/dev/null || die "server 1 with one page per message"
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 netram=$(netram_server 0),$(netram_server 1) $KEY flash=$FLASH timeout=3" ||
	die "create failed"
# four writers, each on its quarter: while one waits for a full socket, the
# others' writes queue up behind it
FIO="--name=stall --filename=$DEV --ioengine=libaio --iodepth=32 --numjobs=4 --size=$((PAGES / 4 * 4096))
	--offset_increment=$((PAGES / 4 * 4096)) --direct=1 --bs=4k --rw=randwrite
	--verify=crc32c --verify_fatal=1 --randseed=18 --group_reporting"

# Paced (250 writes/s each, ~25 s in all) so that the stall falls inside the
# run however fast the guest is; a stalled writer still fills its 32 slots.
# shellcheck disable=SC2086
fio --eta=never $FIO --rate_iops=250 --do_verify=0 --output=/tmp/fio-stall.log &
FIO_PID=$!
wait_until 60 nsw "pages on server 1" eval '[ "$(netram_stat nsw 1 held)" -gt 500 ]'
server_ctl stop 1 || die "stop server 1"
t0=$(date +%s)
log "server 1 stopped with $(netram_stat nsw 1 held) pages"
server1_failed() { [ "$(netram_stat nsw 1 state)" = failed ]; }
wait_until 20 nsw "server 1 failed" server1_failed
t1=$(date +%s)
log "server 1 failed after $((t1 - t0)) s"
assert_le "$((t1 - t0))" 8 "seconds until a stalled server fails (timeout=3, watchdog every second)"
held=$(netram_stat nsw 1 held)
sleep 3
kill -0 $FIO_PID 2>/dev/null || die "fio ended before the stall was over: the test needs longer writes"
assert_le "$(netram_stat nsw 1 held)" "$held" "pages on server 1 while it is failed (it takes no new ones)"
assert_gt "$(nsw_rerouted nsw)" 0 "writes rerouted off the stalled server"
show_status nsw
server_ctl cont 1 || die "cont server 1"
server1_up() { [ "$(netram_stat nsw 1 state)" = up ]; }
wait_until 30 nsw "server 1 up again" server1_up

rc=0
wait $FIO_PID || rc=$?
grep -E 'WRITE:|READ:|err=' /tmp/fio-stall.log | sed "s/^/[$NST_NAME] fio: /"
[ $rc -eq 0 ] || { grep -iE 'verify|bad|error' /tmp/fio-stall.log | head; die "fio writes across the stall failed ($rc)"; }
# shellcheck disable=SC2086
run_fio stall-verify-only $FIO --verify_only
show_status nsw
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
assert_ge "$(netram_stat nsw 1 reconnects)" 1 "reconnects of server 1"
dm_remove nsw || die "remove"
server_ctl misbehave 1 none >/dev/null || die "nswapd back"
log "ok"
