# Scans over a large map yield the CPU on every stretch of the map, not only
# on the pages they act on: a discard of a 512 GiB device that holds a few
# pages, and the mover's scans for the pages a server asks back (EVICT).
# A scan of its 128M entries takes about a second here: one that never
# yields keeps a task that wants its CPU waiting that long (measured by
# tests/progs/latency, a thread per CPU).  Then the device is removed while
# both servers' connections are busy: every receiver stops before any
# server is freed.
# The module's own logic, so it runs on one kernel (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 2560M
# servers: 2 max=64M reserve=32M
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/big
PAGES=$((512 << 18))                         # 512 GiB: a 1 GiB map
dm_create big "0 $((PAGES * 8)) nswap2l 4 $(netram_table_arg) flash=$FLASH overcommit" ||
	die "create of a 512 GiB device"
blkpat write $DEV $((PAGES - 4096)) 4096 24 || die "write the last pages"
rm -f /tmp/stop-latency
latency /tmp/stop-latency >/tmp/latency.log 2>&1 &
PROBE=$!

# 1. discard of everything: one worker, 128M entries, 4096 of them mapped
t0=$(date +%s)
blkdiscard $DEV || die "discard of the whole device"
log "discard of $PAGES pages took $(($(date +%s) - t0)) s"
assert_eq "$(nsw_total big used)" 0 "pages in use after discarding everything"

# 2. the servers ask for their pages back: a scan of the whole map per round
blkpat write $DEV $((PAGES - 4096)) 4096 25 || die "write the last pages again"
h0=$(netram_stat big 0 held)
server_ctl set-memavailable 0 16M || die "set-memavailable 0"
server_ctl set-memavailable 1 16M || die "set-memavailable 1"
gave_back() { [ "$(netram_stat big 0 evict_moved)" -gt 0 ] && [ "$(netram_stat big 1 evict_moved)" -gt 0 ]; }
wait_until 120 big "both servers got pages back" gave_back
show_status big
blkpat verify $DEV $((PAGES - 4096)) 4096 25 || die "pages lost while the servers took memory back"
touch /tmp/stop-latency
wait $PROBE || die "latency probe: $(cat /tmp/latency.log)"
sed "s/^/[$NST_NAME] /" /tmp/latency.log
worst=$(sed -n 's/^latency: max \([0-9]*\) ms$/\1/p' /tmp/latency.log)
assert_lt "$worst" 300 "ms a task waited for its CPU while the map was scanned"

# 3. removal with both connections busy
server_ctl set-memavailable 0 1G || die "set-memavailable 0 1G"
server_ctl set-memavailable 1 1G || die "set-memavailable 1 1G"
fio --eta=never --name=busy --filename=$DEV --ioengine=libaio --iodepth=32 --direct=1 --bs=4k \
	--rw=randrw --size=64M --time_based --runtime=5 --output=/tmp/fio-busy.log || die "fio"
dm_remove big || die "remove right after busy I/O"
assert_eq "$(cat /sys/module/dm_nswap2l/refcnt)" 0 "module refcount"
unload_nswap2l
log "ok (server 0 held $h0 pages before the squeeze)"
