# dmsetup reload keeps the device's pages when the new table keeps them
# reachable: the same table, its tiers in another order, another timeout or
# placement, an added server, a larger length, and while fio writes and
# verifies.  (A reload used to start an empty map: on a live swap area,
# silent memory corruption.)  Any other reload is refused before anything
# changes, with a dmesg line saying why.  A reload that is never resumed
# (dmsetup clear) changes nothing.
# mem: 256M
# servers: 3 max=32M
# disks: flash=32M disk=64M spare=32M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
netram_load_key nswap2l:other >/dev/null
KEYLEN=$(wc -c <"$NST_KEY_FILE")
KEY=key=:$KEYLEN:logon:nswap2l:test
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=4096                                   # 16 MiB
T="netram=$S0,$S1 $KEY flash=$FLASH disk=$DISK"
dm_create nsw "0 $((PAGES * 8)) nswap2l 4 $T" || die "create failed"
blkpat write $DEV 0 $PAGES 1 || die "write"
show_status nsw

reload() { # TABLE: load and resume
	dmsetup reload nsw --table "$1" || die "reload '$1' refused"
	dmsetup resume nsw || die "resume after reload '$1'"
}

# 1. the same table
reload "0 $((PAGES * 8)) nswap2l 4 $T"
blkpat verify $DEV 0 $PAGES 1 || die "pages lost by reloading the same table"
assert_eq "$(nsw_total nsw used)" $PAGES "pages stored after the reload"

# 2. tiers in another order, another timeout and placement
reload "0 $((PAGES * 8)) nswap2l 6 disk=$DISK timeout=7 flash=$FLASH $KEY netram=$S1,$S0 placement=fastest_free"
blkpat verify $DEV 0 $PAGES 1 || die "pages lost by reloading with the tiers in another order"
dmsetup table nsw | grep -q " timeout=7" || die "timeout not taken: $(dmsetup table nsw)"

# 3. an added server, which takes new pages
reload "0 $((PAGES * 8)) nswap2l 5 netram=$S0,$S1,$S2 $KEY flash=$FLASH disk=$DISK timeout=7"
nsw_check_shape nsw 3 3
blkpat verify $DEV 0 $PAGES 1 || die "pages lost by reloading with an added server"
blkdiscard $DEV || die "discard"
blkpat write $DEV 0 $PAGES 2 || die "write after adding a server"
assert_gt "$(netram_stat nsw 2 held)" 0 "pages on the added server"
dmesg | grep -q "server $S2 added by the reloaded table" || die "no dmesg line for the added server"

# 4. a larger device
reload "0 $((PAGES * 16)) nswap2l 5 netram=$S0,$S1,$S2 $KEY flash=$FLASH disk=$DISK timeout=7"
assert_eq "$(dev_sectors $DEV)" $((PAGES * 16)) "sectors after growing"
blkpat verify $DEV 0 $PAGES 2 || die "pages lost by growing the device"
blkpat zero $DEV $PAGES $PAGES || die "the new half is not zero"
blkpat write $DEV $PAGES $PAGES 3 || die "write the new half"
blkpat verify $DEV $PAGES $PAGES 3 || die "verify the new half"
PAGES=$((PAGES * 2))
T="netram=$S0,$S1,$S2 $KEY flash=$FLASH disk=$DISK timeout=7"
LIVE=$(dmsetup table nsw)

# 5. reloads that would lose pages are refused, and nothing changes
n=0
refused() { # REGEX TABLE
	n=$((n + 1))
	dmesg_mark
	if dmsetup reload nsw --table "$2" 2>/tmp/reload.err; then
		dmsetup clear nsw
		die "reload #$n accepted: '$2'"
	fi
	new=$(dmesg_new | grep nswap2l || true)
	echo "$new" | grep -qE "$1" || die "reload #$n ('$2'): dmesg does not say /$1/: $new"
	log "refused #$n: $(echo "$new" | tail -n 1)"
	assert_eq "$(dmsetup table nsw)" "$LIVE" "live table after refused reload #$n"
	dmsetup info nsw | grep -q "Tables present: *LIVE$" || die "an inactive table is left after #$n"
}
refused "reload names flash=.*but the live table's flash tier" "0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2 $KEY flash=$SPARE disk=$DISK"
refused "reload drops the disk tier" "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S1,$S2 $KEY flash=$FLASH"
refused "reload drops the flash tier" "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S1,$S2 $KEY disk=$DISK"
refused "reload drops server $S0" "0 $((PAGES * 8)) nswap2l 4 netram=$S1,$S2 $KEY flash=$FLASH disk=$DISK"
refused "shrinks the device from $PAGES to" "0 $((PAGES * 4)) nswap2l 5 $T"
refused "changes key=" "0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2 key=:$KEYLEN:logon:nswap2l:other flash=$FLASH disk=$DISK"
refused "unknown policy" "0 $((PAGES * 8)) nswap2l 6 $T placement=nosuch"
refused "drops the netram tier" "0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK"
blkpat verify $DEV 0 $((PAGES / 2)) 2 || die "pages lost after refused reloads (first half)"
blkpat verify $DEV $((PAGES / 2)) $((PAGES / 2)) 3 || die "pages lost after refused reloads (second half)"

# 6. a reload that is never resumed changes nothing
dmsetup reload nsw --table "0 $((PAGES * 8)) nswap2l 5 netram=$S0,$S1,$S2 $KEY flash=$FLASH disk=$DISK timeout=9" ||
	die "reload to be cleared"
dmsetup table --inactive nsw | grep -q nswap2l || die "no inactive table"
dmsetup clear nsw || die "clear"
assert_eq "$(dmsetup table nsw)" "$LIVE" "live table after a cleared reload"
blkpat verify $DEV 0 $((PAGES / 2)) 2 || die "pages lost after a cleared reload"

# 7. reloads while fio writes and verifies
fio --eta=never --name=live --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k \
	--rw=randwrite --size=$((PAGES / 2 * 4096)) --verify=crc32c --verify_fatal=1 --do_verify=1 \
	--randseed=22 --output=/tmp/fio-live.log &
FIO=$!
cycles=0
while kill -0 $FIO 2>/dev/null && [ $cycles -lt 5 ]; do
	sleep 1
	dmsetup reload nsw --table "0 $((PAGES * 8)) nswap2l 5 $T" && dmsetup resume nsw || die "reload under fio"
	cycles=$((cycles + 1))
done
wait $FIO || { tail -n 20 /tmp/fio-live.log; die "fio verify across reloads failed"; }
assert_ge "$cycles" 2 "reloads while fio ran"
blkpat verify $DEV $((PAGES / 2)) $((PAGES / 2)) 3 || die "pages fio did not touch, after reloads under fio"
show_status nsw
dm_remove nsw || die "remove"
assert_eq "$(cat /sys/module/dm_nswap2l/refcnt)" 0 "module refcount"
log "ok: $n reloads refused"
