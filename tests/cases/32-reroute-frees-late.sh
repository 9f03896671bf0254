# A write its server refuses goes elsewhere, and the page's old home on the
# server is freed only after the bios that looked it up are done.  The
# server (tests/lib/misbehaving-server refuse-overwrites) keeps every page
# but refuses to overwrite one; with fault injection every read and write is
# held up to 500 ms between its map lookup and its tier, so reads of a page
# are still on their way to its old key when its rewrite is refused.  The
# old key was freed at once: a held read then asked for a key the server no
# longer had, and it and every read sent in the same message failed with
# EIO, although the page was there (a prefetch move reading the page failed
# the same way on a loaded CI machine).  Then many refused writes at once,
# more than the release queue (64 runs) holds: a write waiting for room
# must not hold up the in-flight wait that makes room (fio with verify).
# protect=none: only an unprotected tier overwrites a page in place (a
# protected one writes every version under a new key, so nothing is refused).
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1
# disks: flash=16M
# timeout: 240

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
server_ctl misbehave 0 refuse-overwrites >/dev/null || die "server 0 with refuse-overwrites"
N=256
DEV=/dev/mapper/rf
HOLD=/sys/module/dm_nswap2l/parameters/fault_hold_ms
dm_create rf "0 $((N * 8)) nswap2l 4 netram=$(netram_server 0) $KEY flash=$FLASH protect=none" || die "create"
blkpat write $DEV 0 $N 1 || die "write the pages"
assert_eq "$(tier_stat rf netram used)" $N "pages on the server"

echo 500 >$HOLD
fio --eta=never --name=r --filename=$DEV --rw=randread --bs=4k --ioengine=libaio --iodepth=32 \
	--direct=1 --time_based --runtime=6 --output=/tmp/fio-r.log &
FIO=$!
sleep 1
blkpat write $DEV 0 $N 2 || die "rewrite the pages (refused by the server: written to flash)"
wait $FIO || { tail -n 20 /tmp/fio-r.log; die "reads failed while their pages were rewritten elsewhere"; }
echo 0 >$HOLD
grep -E 'READ:' /tmp/fio-r.log | sed "s/^/[$NST_NAME] fio: /"
show_status rf

assert_ge "$(nsw_rerouted rf)" 1 "rerouted writes"
assert_eq "$(netram_stat rf 0 errors)" 0 "server errors (reads of keys it no longer had)"
blkpat verify $DEV 0 $N 2 || die "pages do not hold the rewrite"
# rerouted pages went to flash or to new keys: each page has one home again
# once the old ones are freed
used_is() { [ "$(nsw_total rf used)" -eq "$1" ]; }
wait_until 10 rf "the old homes freed ($N pages used)" used_is $N
dm_remove rf || die "remove"

# --- more refused writes at once than the release queue holds ---------------
M=1024
dm_create rf "0 $((M * 8)) nswap2l 4 netram=$(netram_server 0) $KEY flash=$FLASH protect=none" || die "create again"
blkpat write $DEV 0 $M 3 || die "write $M pages"
assert_eq "$(tier_stat rf netram used)" $M "pages on the server"
rerouted0=$(nsw_rerouted rf)
echo 200 >$HOLD
run_fio many-refused --name=mr --filename=$DEV --rw=randwrite --bs=4k --ioengine=libaio --iodepth=256 \
	--direct=1 --size=100% --randseed=32 --verify=crc32c --do_verify=1 --verify_fatal=1
echo 0 >$HOLD
show_status rf
assert_ge "$(($(nsw_rerouted rf) - rerouted0))" 64 "rerouted writes"
assert_eq "$(netram_stat rf 0 errors)" 0 "server errors"
wait_until 10 rf "the old homes freed ($M pages used)" used_is $M
dm_remove rf || die "remove"
log "ok"
