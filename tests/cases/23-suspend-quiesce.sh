# After dmsetup suspend returns, nothing reaches any tier until resume,
# even while a server asks for its memory back (EVICT) and a remove_server
# arrives: the moves, the drain and the answers to the server wait, and go
# on after resume.  Checked with the tier counters, the flash device's own
# I/O counters, blktrace on the flash device, and the server's page count
# (no FREE reaches it).  Then every page is still right.
# mem: 256M
# servers: 2 max=32M reserve=32M
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/nsw
S1=$(netram_server 1)
PAGES=6144                                   # 24 MiB, all in Network RAM
dm_create nsw "0 $((PAGES * 8)) nswap2l 3 $(netram_table_arg) flash=$FLASH" || die "create failed"
blkpat write $DEV 0 $PAGES 23 || die "write"
assert_eq "$(tier_stat nsw netram used)" $PAGES "pages in Network RAM"
h0=$(netram_stat nsw 0 held)
assert_gt "$h0" 1024 "pages on server 0"

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
flash=$(basename "$FLASH")
io_count() { awk '{ print $1 + $5 }' "/sys/block/$flash/stat"; }   # reads + writes completed

dmsetup suspend nsw || die "suspend"
moved0=$(nsw_moved nsw) flash0=$(io_count) held0=$(server_stat 0 held_pages) held1=$(server_stat 1 held_pages)
t_held1=$(netram_stat nsw 1 held)
_num "$held0" "pages nswapd 0 holds"
blktrace -d "$FLASH" -w 8 -o - 2>/tmp/blktrace.err | blkparse -q -i - >/tmp/trace.txt 2>&1 &
TRACE=$!
sleep 1
# server 0's machine needs 16 MiB back: it asks for about 4096 pages
server_ctl set-memavailable 0 16M || die "set-memavailable 0"
dmsetup message nsw 0 remove_server "$S1" || die "remove_server while suspended"
asked() { [ "$(netram_stat nsw 0 evict_asked)" -gt 0 ]; }
wait_until 20 nsw "server 0 asked for pages back" asked
sleep 5
wait $TRACE || true
show_status nsw
assert_eq "$(nsw_moved nsw)" "$moved0" "pages moved while suspended"
assert_eq "$(netram_stat nsw 0 evict_moved)" 0 "pages given back while suspended"
assert_eq "$(io_count)" "$flash0" "I/O the flash device completed while suspended"
assert_eq "$(netram_stat nsw 1 state)" draining "server 1 (its drain waits for resume)"
assert_eq "$(netram_stat nsw 1 held)" "$t_held1" "pages on server 1 while suspended"
assert_eq "$(server_stat 0 held_pages)" "$held0" "pages nswapd 0 holds (no FREE while suspended)"
assert_eq "$(server_stat 1 held_pages)" "$held1" "pages nswapd 1 holds (no FREE while suspended)"
grep -E ' [QDC] ' /tmp/trace.txt | head -n 5 | grep . &&
	die "blktrace saw I/O on the flash device while suspended"
grep -qi "error\|fail" /tmp/blktrace.err && die "blktrace: $(cat /tmp/blktrace.err)"

# the same trace, from just before resume, sees the moves (the control)
blktrace -d "$FLASH" -w 8 -o - 2>/tmp/blktrace2.err | blkparse -q -i - >/tmp/trace2.txt 2>&1 &
TRACE=$!
sleep 1
dmsetup resume nsw || die "resume"
gave_back() { [ "$(netram_stat nsw 0 evict_moved)" -gt 0 ]; }
wait_until 60 nsw "server 0 got pages back after resume" gave_back
s1_removed() { [ "$(netram_stat nsw 1 state)" = removed ]; }
wait_until 120 nsw "server 1 drained after resume" s1_removed
wait $TRACE || true
show_status nsw
assert_gt "$(grep -cE ' Q +W' /tmp/trace2.txt)" 0 "writes blktrace saw on flash after resume"
assert_gt "$(tier_stat nsw flash used)" 0 "pages moved to flash after resume"
assert_lt "$(server_stat 0 held_pages)" "$held0" "pages nswapd 0 holds after resume"
blkpat verify $DEV 0 $PAGES 23 || die "pages lost across the suspended eviction"
dm_remove nsw || die "remove"
log "ok"
